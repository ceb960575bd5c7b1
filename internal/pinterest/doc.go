// Package pinterest builds the events of leads as Pinterest's Conversions
// API (v5) takes them and sends them to it; docs/destinations.md shows how
// it sits beside Meta's package (internal/capi) in dispatch.
//
// Payloads:
//   - EventName turns our event names (Meta's standard names) into
//     Pinterest's: Lead -> lead, Purchase -> checkout, ..., any other name
//     -> custom.
//   - Prepare builds one event's JSON from a lead, its stored match keys and
//     one outbox event, and says (a *capi.Invalid) when Pinterest would
//     refuse it. It needs no clock: the dispatcher judges an event's age.
//
// Client:
//   - Client.Send posts one batch to /v5/ad_accounts/{id}/events and turns
//     Pinterest's answer into a destination.Answer. Pinterest answers per
//     event: a 200, or a 422 (code 953) when some events failed, lists each
//     event's status in request order, so a batch is Accepted with the
//     failed events in Answer.Refused.
//   - The conversion token travels in the Authorization header only,
//     redirects are never followed, and every error text, message and
//     logged body is scrubbed of it.
//
// Choices where Pinterest's reference is silent (forgiving unless a wrong
// guess would sink events):
//   - action_source is "web" for a website lead's own events and "offline"
//     for every other event: stage events happen in the CRM, and Pinterest
//     has no action source for calls, chats or CRMs.
//   - custom_data.value is a string with two decimals ("250.00"): Pinterest
//     takes the value as a string and parses it to a double.
//   - Limited Data Use becomes custom_data.opt_out_type "LDP" (Pinterest's
//     Limited Data Processing), for every event or only for leads from
//     California as the dataset says; opt_out is always false, since a lead
//     who filled a form did not opt out of tracking.
//   - click_id is the lead's custom field "epik", which capture keeps from
//     the landing page's query (docs/api.md).
//   - A 422 without per-event details, like a 400, is an EventRefused: an
//     event caused it, so the dispatcher splits the batch rather than
//     pausing the destination.
package pinterest
