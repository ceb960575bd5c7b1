package store

// SetExportBatch sets how many events EachEvents reads at a time, for a
// test that crosses batches; it restores it after.
func SetExportBatch(t interface{ Cleanup(func()) }, n int) {
	old := exportBatch
	exportBatch = n
	t.Cleanup(func() { exportBatch = old })
}
