// Package demo makes the living demo of `leadsignal demo`: an account
// (Northwind Roofing) with a dry-run dataset, send rules, stage mappings
// and four weeks of synthetic leads, then a new lead every few seconds and
// deals moving through their stages while the server runs.
//
// Nothing is written around the product: leads go through
// internal/capture as the ingest API posts them (validated by the same
// capture.Request.Validate, created_at in the past), so they get real
// match keys, junk verdicts and events; stage changes go through
// decide.Decider as POST /api/v1/stages records them; the dataset, rules
// and mappings through the store functions the pages use, rules checked
// by rule.CheckRule. The dataset is in dry run: nothing ever reaches Meta.
//
// The four weeks come from a fixed seed (Plan), so a given moment always
// gives the same leads; the live leads are random.
package demo
