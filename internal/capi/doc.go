// Package capi builds Meta Conversions API (CAPI) server events from leads
// and sends them to the Graph API. The Meta facts it relies on come from
// Meta's documentation and are stated where the code uses them;
// docs/architecture.md shows where the package sits in capture and dispatch.
//
// Payloads:
//   - EventID and RecordKey make the deterministic event id (docs/api.md,
//     "Event ids").
//   - Build turns a lead, its stored match keys and one outbox event into a
//     ServerEvent. It has no clock and does no I/O.
//   - Validate says why Meta would refuse one event, so that a bad event is
//     held back before it can sink a batch of 1000 (Meta's documentation:
//     one invalid event discards the whole request).
//
// Graph client:
//   - Client.Send posts one batch to /{version}/{pixel}/events and returns
//     Meta's answer as a Response; a Graph error body becomes a *GraphError
//     whose TokenInvalid, Throttled and Retryable apply Meta's retry rule:
//     HTTP 5xx, 429, transient and throttling errors may succeed later; an
//     invalid token (190) or an invalid event (subcode 2804xxx) never does.
//   - The access token never appears in an error string or in Response.Body:
//     it travels as the access_token query parameter (the way Meta's
//     documentation sends it), redirects are not followed, and every error
//     text and logged body is scrubbed of it.
//
// Choices where Meta's documentation is silent or unverified (forgiving
// unless a wrong guess would sink batches):
//   - action_source: a lead's events take it from the lead's source
//     (docs/api.md, "Fields"), but stage events always use system_generated:
//     a CRM stage change happens in the CRM, not on the website, on a call or
//     in a chat. This also keeps custom stage names off business_messaging,
//     which refuses them.
//   - event_source "crm" and lead_event_source (the account's CRMName, else the
//     CRM a connection's stage change came from, else "leadsignal") go on every stage event, and on every event of
//     instant_form and crm leads, the initial lead event included: Meta's
//     Conversion Leads spec wants every stage, the first one too, marked
//     that way.
//   - user_data.lead_id is sent as a JSON integer (the payload spec types it
//     integer) written digit for digit, never through a float64.
//   - A partial lead's events carry custom_data.lead_type = "partial", a
//     custom property that keeps them apart from submitted leads in Events
//     Manager and in custom conversions.
//   - data_processing_options is always sent by Build: ["LDU"] when Limited
//     Data Use applies, else [] (Meta's documentation asks to opt out
//     explicitly).
//   - Validate allows event_time at most MaxFutureSkew (1 minute) ahead of
//     the send time: Meta rejects future times without publishing the
//     tolerance. A future event is not broken, only early: retry later.
//   - event_name is limited to 100 characters [unverified: Meta's Pixel
//     reference says 50 for custom events; CAPI publishes no limit].
//   - business_messaging events need messaging_channel and one of Meta's
//     messaging event names (LeadSubmitted, Purchase, ...), [unverified:
//     Meta's Business Messaging CAPI page as quoted by integrators; Meta
//     answers 100/2804066 otherwise]. The Conversions API reference says
//     nothing about either.
package capi
