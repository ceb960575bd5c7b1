package upkeep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/leadsignal/leadsignal/internal/service"
	"github.com/leadsignal/leadsignal/store"
)

// countsEvery is how often Counts merges the deltas.
const countsEvery = 5 * time.Second

// Counts merges the counts tables' deltas (store.CompactCounts) at once
// and every few seconds, so the Overview reads few rows.
func Counts(s *store.Store, log *slog.Logger) *service.Loop {
	return service.New(service.Options{Name: "compact counts", Every: countsEvery, Log: log}, s.CompactCounts)
}

// searchEvery is how often Search cleans the search index's pending list.
const searchEvery = time.Second

// Search moves the leads' search index's pending rows into the index every
// second (store.CleanSearchIndex), so that no capture waits for it. A
// database user that does not own the index may not: it says so once and
// leaves the work to Postgres.
func Search(s *store.Store, log *slog.Logger) *service.Loop {
	return service.New(service.Options{Name: "clean search index", Every: searchEvery, Log: log}, func(ctx context.Context) error {
		err := s.CleanSearchIndex(ctx)
		if errors.Is(err, store.ErrNotOwner) {
			log.Warn("the search index's pending rows are left to Postgres, which a capture then waits for", slog.Any("error", err))
			return service.ErrDone
		}
		return err
	})
}

// statsFor is how long Stats runs: by then autovacuum has analyzed the
// tables too.
const statsFor = 10 * time.Minute

// Stats analyzes the hot tables whose statistics say nothing of their rows
// (never analyzed, or analyzed while empty: store.AnalyzeNew) every second
// for the first 10 minutes of a process, or until every one has
// statistics of its rows.
func Stats(s *store.Store, log *slog.Logger) *service.Loop {
	var until time.Time
	return service.New(service.Options{Name: "analyze new tables", Every: time.Second, Log: log}, func(ctx context.Context) error {
		if until.IsZero() {
			until = time.Now().Add(statsFor)
		}
		tables, done, err := s.AnalyzeNew(ctx)
		if len(tables) > 0 {
			log.Info("analyzed new tables", slog.Any("tables", tables))
		}
		if err == nil && done || time.Now().After(until) {
			return service.ErrDone
		}
		return err
	})
}

// backfillPause is the least Backfill waits between two batches. It waits
// as long as the batch took when that is longer (service.Options.Pace):
// SQLite has one writer, and a capture waiting for it must find it free
// between batches.
const backfillPause = 50 * time.Millisecond

// Backfill runs the backfills that are not done (store.BackfillNext),
// batch after batch, until each is done, and logs each one it finishes
// ("backfilled"). Until then readers derive what it fills; a failure
// leaves the rest to the next start.
func Backfill(s *store.Store, log *slog.Logger) *service.Loop {
	filled := map[string]int64{}
	return service.New(service.Options{Name: "backfill", Every: backfillPause, Pace: true, Log: log}, func(ctx context.Context) error {
		step, err := s.BackfillNext(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Error("backfill", slog.Any("error", err))
			}
			return service.ErrDone
		}
		filled[step.Name] += step.Filled
		if step.Finished {
			log.Info("backfilled", slog.String("backfill", step.Name), slog.Int64("leads", filled[step.Name]))
		}
		if step.Done {
			return service.ErrDone
		}
		return nil
	})
}

// sweepEvery is how often Sessions deletes the sessions that have ended.
const sweepEvery = 10 * time.Minute

// Sessions deletes ended sessions at once and every 10 minutes: a lookup
// already refuses them, so this only keeps the table small. Every replica
// sweeps; the deletes are idempotent.
func Sessions(s *store.Store, lim store.SessionLimits, log *slog.Logger) *service.Loop {
	return service.New(service.Options{Name: "sweep sessions", Every: sweepEvery, Log: log}, func(ctx context.Context) error {
		n, err := s.DeleteExpiredSessions(ctx, time.Now(), lim)
		if n > 0 {
			log.Info("swept ended sessions", slog.Int64("sessions", n))
		}
		return err
	})
}
