// Package crmsync owns the CRM inbox (crm_deliveries): the Inbox stores
// the stage changes a CRM posts as they came, for the hook handler, and
// the Worker turns them into stage changes: for each due delivery it reads
// the change back from the body as it came, asks the CRM's API for what the
// delivery lacks (the deal's contact, amount and currency), finds the lead,
// maps the CRM's stage id to the account's stage and hands the change to
// the stage path (decide.Decider.Changes), with the CRM's own time of
// change.
//
// Nothing a CRM sent is dropped: a delivery that cannot go through yet
// (the CRM's API down, its lead not captured yet, its stage not mapped)
// keeps its reason and is tried again later. docs/crm.md describes the
// rules.
package crmsync
