// Package setup reads, checks, applies and exports an account's whole setup
// as one JSON file (leadsignal setup apply / export, and the Settings
// page's download and upload): the account settings, its Meta datasets,
// its junk signals, its send rules and its stage mappings (send rules of
// mode stage, which the file keeps apart from the others). Secrets never
// appear in the file, only the names of the environment variables that
// hold them. The format is documented in docs/setup.md.
//
// Apply validates the whole file against the account as it is, then
// changes everything in one transaction, and is idempotent: applying the
// same file twice changes nothing the second time. Plan runs the same
// apply and rolls it back, for a preview; Options.Expect ties an apply to
// the preview a person saw.
package setup
