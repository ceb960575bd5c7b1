package store

// SearchText is searchText, for the test that Postgres can read it through
// the trigram index of migration 0007.
const SearchText = searchText

// SetFewUnsent sets how many events of one unsent status Events reads by
// id, for a test of both ways it lists them; it restores it after.
func SetFewUnsent(t interface{ Cleanup(func()) }, n int) {
	old := fewUnsent
	fewUnsent = n
	t.Cleanup(func() { fewUnsent = old })
}
