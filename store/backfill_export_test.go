package store

import "context"

// SetBackfillBatch sets how many leads a backfill batch reads, for a
// test; it restores it after.
func SetBackfillBatch(t interface{ Cleanup(func()) }, n int) {
	old := backfillBatch
	backfillBatch = n
	t.Cleanup(func() { backfillBatch = old })
}

// BackfillBatch runs one batch of each backfill and reports whether all
// are done.
func (s *Store) BackfillBatch(ctx context.Context) (done bool, err error) {
	done = true
	for _, b := range backfills {
		if err := s.startBackfill(ctx, b); err != nil {
			return false, err
		}
		_, d, _, err := s.backfillBatch(ctx, b)
		if err != nil {
			return false, err
		}
		done = done && d
	}
	return done, nil
}
