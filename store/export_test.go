package store

// SearchText is searchText, for the test that Postgres can read it through
// the trigram index of migration 0007.
const SearchText = searchText
