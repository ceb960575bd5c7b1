// Package capitest is a fake of Meta's Conversions API endpoint,
// POST /{version}/{pixel}/events, for tests and benchmarks: New starts an
// httptest.Server that checks the token, the app secret proof and every event
// the way Meta does (one bad event refuses the whole batch), records what it
// was sent, and fails on demand (FailNext, RejectEventIDs).
//
// Its checks are written independently of capi.Validate, from Meta's
// documentation, so that a mistake in one is caught by the other. Where Meta
// publishes no error subcode for a refusal, the fake answers 100 with
// SubcodeInvalid (2804001, one of the invalid-parameter subcodes Meta is seen
// to send; its exact meaning is not published).
package capitest
