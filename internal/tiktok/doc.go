// Package tiktok sends a destination's events to TikTok's Events API 2.0
// (POST /open_api/v1.3/event/track/, docs/destinations.md): Prepare builds
// one event's JSON from a lead, with the lead's email and phone hashed as
// TikTok normalises them, and Client posts batches of them. tiktoktest is
// a fake of the API for tests.
package tiktok
