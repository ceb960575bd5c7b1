// Package setup reads, checks, applies and exports an account's whole setup
// as one JSON file (leadsignal setup apply / export): the account settings,
// its Meta datasets and its junk signals. Secrets never appear in the file,
// only the names of the environment variables that hold them.
//
// Apply validates the whole file before it touches the database, then
// changes everything in one transaction, and is idempotent: applying the
// same file twice changes nothing the second time.
package setup
