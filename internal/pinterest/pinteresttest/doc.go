// Package pinteresttest is a fake of Pinterest's Conversions API,
// POST /v5/ad_accounts/{ad_account_id}/events, for tests, in the manner of
// tiktoktest: New starts an httptest.Server that checks the Bearer token,
// the ad account and every event the way Pinterest's API reference says,
// records what it was sent, and fails on demand (FailNext).
//
// As Pinterest does, it answers per event: 200 with every event
// "processed", or 422 (code 953) listing each event's status when some
// failed. Whole requests are refused with Pinterest's {code, message}
// bodies: 401 (code 2), 403 (code 29), 400 (code 4196).
//
// Its checks are written from Pinterest's API reference, independently of
// pinterest.Prepare, so that a mistake in one is caught by the other.
package pinteresttest
