// Package decide decides a lead's events: which of the account's send
// rules the lead matches, and the events they make. A lead's events are a
// function of the lead and the rules, worked out again whenever the lead
// changes (captured, completed, a stage change, junk or not junk): new
// matches queue their events, deterministic event ids make deciding again
// harmless, unsent events of automatic rules the lead no longer matches are
// cancelled with the reason, and sent events stay sent.
//
// Capture, a person's stage or junk mark, a manual rule's button and
// "apply to recent leads" all ask Decide (pure) and write what it says
// through the store; the dispatcher asks Holds before it sends an event
// built anew from a lead that changed. Matching runs outside store
// transactions. See docs/architecture.md.
package decide
