package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// firstBatch builds the first batch the dispatcher will claim from its
// leads, as dispatch does for events without a prepared payload (match keys
// decoded, platform.Prepare, the time checked), and times that building
// alone. When the events carry prepared payloads, the batch must equal
// them.
func firstBatch(ctx context.Context, st *store.Store, accountID, datasetID int64) ([]json.RawMessage, time.Duration, error) {
	acc, err := st.Account(ctx, accountID)
	if err != nil {
		return nil, 0, err
	}
	ds, err := st.DatasetByID(ctx, datasetID)
	if err != nil {
		return nil, 0, err
	}
	// The dispatcher's own claim, rolled back: the same events.
	var c store.Claim
	err = st.Tx(ctx, func(tx *store.Store) (err error) {
		if c, err = tx.ClaimEvents(ctx, datasetID, time.Now(), time.Minute, platform.MaxBatch(ds.Of()), nil); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		return nil, 0, err
	}
	evs := c.Events
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.LeadID
	}
	leads, err := st.PayloadLeads(ctx, accountID, ids)
	if err != nil {
		return nil, 0, err
	}
	build := func() ([]json.RawMessage, error) {
		now := time.Now()
		out := make([]json.RawMessage, 0, len(evs))
		for _, e := range evs {
			l := leads[e.LeadID]
			keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
			if err != nil {
				return nil, err
			}
			body, err := platform.Prepare(capi.BuildInput{Account: acc, Dataset: ds, Lead: l, Keys: keys, Event: e})
			if err == nil {
				err = capi.CheckTime(e.EventTime.Unix(), now)
			}
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", e.EventID, err)
			}
			out = append(out, body)
		}
		return out, nil
	}
	var batch []json.RawMessage
	var times []time.Duration
	for range 5 {
		t0 := time.Now()
		batch, err = build()
		if err != nil {
			return nil, 0, err
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	for i, e := range evs {
		if e.PayloadStamp != 0 && e.Payload != string(batch[i]) {
			return nil, 0, fmt.Errorf("event %s: its prepared payload is not what the dispatcher builds:\n%s\n%s", e.EventID, e.Payload, batch[i])
		}
	}
	return batch, times[len(times)/2], nil
}

func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---------------------------------------------------------------- baseline

type baselineResult struct {
	rate     float64 // over every run: before, during (slices) and after the drain
	before   float64
	after    float64
	slices   []float64 // the rates of the runs that paused the drain
	requests int64
	events   int64
	seconds  float64 // measured, warmups left out
}

// ---------------------------------------------------------------- probe

// probeResult is the time of each store call of one batch, measured on the
// full backlog in a transaction that is rolled back.
type probeResult struct {
	names []string
	times []time.Duration
}

var errRollback = errors.New("rollback")

// probe runs the store calls of a batch in the order dispatch makes them,
// each timed, and leaves the backlog as it found it: the claim is real (as
// in dispatch, in its own transaction), the rest runs in a transaction that
// is rolled back, and the claimed events are released at the end. (Settling
// rows that the same transaction claimed would run foreign key checks the
// real settle skips.) The rolled-back part has no commit. Each batch is of
// maxBatch events, the platform's.
func probe(ctx context.Context, st *store.Store, accountID, datasetID int64, maxBatch, n int) ([]probeResult, error) {
	var out []probeResult
	for range n {
		var pr probeResult
		run := func(name string, f func() error) error {
			t0 := time.Now()
			err := f()
			pr.names = append(pr.names, name)
			pr.times = append(pr.times, time.Since(t0))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
		now := time.Now()
		var c store.Claim
		req := models.SendRequest{AccountID: accountID, DatasetID: datasetID, Kind: "batch", StartedAt: now.UTC(),
			EventsCount: maxBatch, HTTPStatus: 200, EventsReceived: maxBatch, FBTraceID: "probe",
			Response: fmt.Sprintf(`{"events_received":%d,"messages":[],"fbtrace_id":"probe"}`, maxBatch)}
		if err := run("DueDatasets", func() error { _, err := st.DueDatasets(ctx, now); return err }); err != nil {
			return nil, err
		}
		if err := run("DatasetByID", func() error { _, err := st.DatasetByID(ctx, datasetID); return err }); err != nil {
			return nil, err
		}
		if err := run("ClaimEvents", func() (err error) {
			c, err = st.ClaimEvents(ctx, datasetID, now, 2*time.Minute, maxBatch, nil)
			return err
		}); err != nil {
			return nil, err
		}
		evs := c.Events
		err := st.Tx(ctx, func(tx *store.Store) error {
			if err := run("Account", func() error { _, err := tx.Account(ctx, accountID); return err }); err != nil {
				return err
			}
			if err := run("InsertSendRequest", func() error { return tx.InsertSendRequest(ctx, &req) }); err != nil {
				return err
			}
			if err := run("SettleEvents", func() error {
				outs := make([]store.Outcome, len(evs))
				for i, e := range evs {
					outs[i] = store.Outcome{ID: e.ID, Status: models.EventSent}
				}
				return tx.SettleEvents(ctx, c, &req.ID, "probe", now, outs)
			}); err != nil {
				return err
			}
			return errRollback
		})
		if rerr := st.ReleaseEvents(ctx, c); rerr != nil {
			return nil, fmt.Errorf("release: %w", rerr)
		}
		if !errors.Is(err, errRollback) {
			return nil, err
		}
		if len(evs) != maxBatch {
			return nil, fmt.Errorf("claimed %d events; want %d", len(evs), maxBatch)
		}
		out = append(out, pr)
	}
	return out, nil
}
