// Package crmsync owns the CRM inbox (crm_deliveries): the Inbox stores
// the stage changes a CRM posts as they came, for the hook handler, and
// the Worker turns them into stage changes: for each due delivery it reads
// the change back from the body as it came, asks the CRM's API for what the
// delivery lacks (the deal's contact, amount and currency), maps the CRM's
// stage id to the account's stage and hands the change, with the contact's
// keys and the CRM's own time of change, to the recorder
// (decide.Decider.RecordAll, decide.FromCRM), which finds the lead.
//
// Nothing a CRM sent is dropped: a delivery that cannot go through yet
// (the CRM's API down, its lead not captured yet, its stage not mapped)
// keeps its reason and is tried again later. docs/crm.md describes the
// rules.
package crmsync
