// Package google sends lead events to Google Ads as offline conversions
// through Google's Data Manager API (POST /v1/events:ingest), not the
// Google Ads API, whose click conversion upload refuses new adopters.
//
// Payloads:
//   - Prepare turns a lead, its stored match keys and one outbox event into
//     the JSON of one element of the request's events[], routed to one
//     conversion action by destinationReferences, and says with a
//     *capi.Invalid when Google would refuse it. It has no clock and does
//     no I/O; the dispatcher checks the event's age.
//   - Hashes follow Google's rules, which are not Meta's: the email with the
//     Gmail rule and the phone as E.164 with its "+" (normalize.Google).
//
// Client:
//   - Client implements destination.Sender: it posts a batch, built around
//     the prepared events, with one destination per conversion action the
//     events name, and maps Google's answer to a destination.Verdict.
//   - Google answers fast-fail: one bad event refuses the whole request, so
//     an INVALID_ARGUMENT is EventRefused and the dispatcher splits the
//     batch until the bad event is alone.
//   - Access tokens come from a TokenSource, which exchanges the target's
//     OAuth refresh token and caches the answer until a minute before it
//     expires. A refused refresh token is AuthRefused: nothing is posted.
//   - The client secret, the refresh token and the access token never
//     appear in an error text, an Answer's Message or its Body.
//
// Choices where Google's documentation is silent or unverified:
//   - The reason of an error is read from any detail that has one
//     (google.rpc.ErrorInfo's reason, BadRequest's field violations): the
//     REST layout of Data Manager's details is not documented.
//   - A reason that a person must fix in Google Ads (enhanced conversions
//     for leads off, terms not signed) is Refused whatever the HTTP status.
//   - A 401 answered to a cached access token is tried once more with a
//     fresh one: Google can revoke an access token before it expires.
package google
