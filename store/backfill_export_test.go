package store

import "context"

// SetBackfillBatch sets how many leads a backfill batch reads, and takes
// out the pause between batches, for a test; it restores both after.
func SetBackfillBatch(t interface{ Cleanup(func()) }, n int) {
	oldBatch, oldPause := backfillBatch, backfillPause
	backfillBatch, backfillPause = n, 0
	t.Cleanup(func() { backfillBatch, backfillPause = oldBatch, oldPause })
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
