package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestProbeAfterKilledDispatcher: a replica is killed (SIGKILL: its
// connections are gone, nothing it claimed is settled or released) while
// its probe of a held dataset waits for Meta, which hangs. After the restart
// the dataset is probed again once the probe's lease ran out, which covers
// the probe's request and a small margin, not the 2-minute batch lease, and
// the backlog drains.
func TestProbeAfterKilledDispatcher(t *testing.T) {
	t.Parallel()
	// The longest a probe may keep its dataset: its request's timeout and
	// a small margin.
	within := capi.DefaultTimeout + 10*time.Second
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			killed, s := twoReplicas(t, db)
			b := newBench(t, s, models.ModeLive)
			b.queue(dispatch.MaxBatch+200, b.clock.now().Add(-time.Hour), nil)
			// Meta failed a batch: the dataset is held, its probe due in a second.
			if _, _, err := s.HoldDataset(t.Context(), b.dataset.ID, b.clock.now(), "HTTP 503", func(int) time.Duration { return time.Second }, nil); err != nil {
				t.Fatal(err)
			}
			b.clock.advance(time.Second)
			start := b.clock.now()

			// The first replica takes the probe, with the product's
			// leases, and Meta hangs.
			hung := &hangingSender{entered: make(chan struct{}), release: make(chan struct{})}
			one := dispatch.New(dispatch.Options{Store: killed, Sender: hung, Box: b.box, GraphURL: b.meta.URL,
				DefaultVersion: capitest.Version, Now: b.clock.now, Log: quiet})
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = one.Drain(ctx) // its store is closed under it
			}()
			t.Cleanup(func() {
				cancel()
				close(hung.release)
				<-done
			})
			select {
			case <-hung.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the probe never reached Meta")
			}
			cancel()
			if err := killed.Close(); err != nil {
				t.Fatal(err)
			}

			// The replica starts again at once: the probe is still the dead
			// one's, for as long as its request could have run.
			two := b.dispatcher()
			for _, at := range []time.Duration{time.Second, capi.DefaultTimeout} {
				b.clock.advance(start.Add(at).Sub(b.clock.now()))
				if n := b.drain(two); n != 0 || len(b.meta.Requests()) != 0 {
					t.Fatalf("%s into the probe: %d events claimed, %d requests; want none while the probe's lease runs", at, n, len(b.meta.Requests()))
				}
			}
			if ds := b.held(); ds.HoldUntil == nil || ds.HoldUntil.Sub(start) > within {
				t.Errorf("next probe at %v, %v after the dead one's; want within %v", ds.HoldUntil, ds.HoldUntil.Sub(start), within)
			}

			// Once the lease ran out the dataset is probed again, and its
			// events with it: the probe's batch was leased no longer.
			b.clock.advance(start.Add(within).Sub(b.clock.now()))
			b.drain(two)
			if c := b.counts(); c[models.EventSent] != dispatch.MaxBatch+200 {
				t.Errorf("counts %v %v into the dead probe; want all %d sent", c, within, dispatch.MaxBatch+200)
			}
			if got := b.meta.EventsReceived(); got != dispatch.MaxBatch+200 {
				t.Errorf("Meta received %d events; want %d", got, dispatch.MaxBatch+200)
			}
			if ds := b.held(); ds.HeldSince != nil {
				t.Error("the hold outlived the probe that went through")
			}
		})
	}
}

// twoReplicas opens one migrated database twice, as two processes would:
// a SQLite file, or a Postgres database.
func twoReplicas(t *testing.T, db string) (first, second *store.Store) {
	t.Helper()
	o := store.Options{SQLitePath: filepath.Join(t.TempDir(), "test.db")}
	if db == "postgres" {
		o = store.Options{PostgresURL: storetest.PostgresURL(t)}
	}
	open := func() *store.Store {
		s, err := store.Open(context.Background(), o)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	first = open()
	if _, err := first.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return first, open()
}

// hangingSender is Meta hanging: its requests end only when the test lets
// them go, or their context ends.
type hangingSender struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *hangingSender) Send(ctx context.Context, _ capi.Target, _ []json.RawMessage) (capi.Response, error) {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return capi.Response{}, errors.New("request hung")
}
