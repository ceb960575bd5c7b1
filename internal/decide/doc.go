// Package decide decides a lead's events: which of the account's send
// rules the lead matches, and the events they make. A lead's events are a
// function of the lead and the rules, worked out again whenever the lead
// changes (captured, completed, a stage change, junk or not junk): new
// matches queue their events, deterministic event ids make deciding again
// harmless, unsent events of automatic rules the lead no longer matches are
// cancelled with the reason, and sent events stay sent.
//
// Capture, a stage change or junk mark, a manual rule's button and "apply
// to recent leads" all ask Decide (pure) and write what it says through the
// store; the dispatcher asks Holds before it sends an event built anew
// from a lead that changed. Matching runs outside store transactions.
//
// Decider is also the recorder of stage changes, the one door of every way
// they come in (the stage API, CSV uploads, CRM deliveries, the lead page):
// each hands it Changes (record.go) and maps the typed Outcomes to its own
// answers; accept.go holds every rule of accepting a change. See
// docs/architecture.md, "Stage changes: one door".
package decide
