package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// batchTime is one Batch call of a dispatcher that claimed events.
type batchTime struct {
	total time.Duration // DueDatasets + Batch
	send  time.Duration
	n     int
}

type drainResult struct {
	wall        time.Duration
	events      int
	requests    int
	failedSends int
	firstErr    string
	batches     []batchTime
	goCPU       time.Duration
	pgCPU       float64 // seconds; -1 when unknown
	peakRSSKB   int64
	gcCycles    uint32
	totalAlloc  uint64
	slices      []baselineResult // the baseline runs that paused the drain
}

// drain runs cfg.dispatchers dispatchers until nothing is due. Each runs
// dispatch.Drain's loop itself (DueDatasets, then one Batch per dataset, until
// a round makes no progress) to time every batch.
func drain(ctx context.Context, cfg config, st *store.Store, box *seal.Box, sk *sink,
	slice func() (baselineResult, error)) (*drainResult, error) {
	var prof *os.File
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		prof = f
	}
	pgPID := benchkit.PostgresPID(ctx, cfg.database)
	pg0, pgKnown := benchkit.PostgresCPU(pgPID)
	cpu0 := benchkit.CPUTime()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)

	logf("draining %d events with %d dispatcher(s)", cfg.events, cfg.dispatchers)
	type worker struct {
		sender  *timing
		batches []batchTime
		err     error
	}
	// Each dispatcher works on dispatch.InFlight batches at once, as its
	// Drain does: one worker (its own Dispatcher and timed sender) each.
	workers := make([]*worker, cfg.dispatchers*dispatch.InFlight)
	// Workers hold gate for reading while they work on a batch; a baseline
	// slice holds it for writing, once the batches in flight are settled.
	var (
		gate     sync.RWMutex
		settled  atomic.Int64
		finished = make(chan struct{})
		sliced   = make(chan sliceResult, 1)
	)
	go func() { sliced <- sliceDrain(cfg, &gate, &settled, finished, slice, pgPID) }()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{sender: &timing{}}
		workers[i] = w
		d := sk.dispatcher(st, box, w.sender)
		wg.Go(func() {
			for {
				gate.RLock()
				t0 := time.Now()
				ids, err := st.DueDatasets(ctx, time.Now())
				if err != nil {
					gate.RUnlock()
					w.err = err
					return
				}
				due := time.Since(t0)
				progress := 0
				for _, id := range ids {
					w.sender.cur = 0
					t1 := time.Now()
					n, err := d.Batch(ctx, id)
					if err != nil {
						gate.RUnlock()
						w.err = err
						return
					}
					if n > 0 {
						w.batches = append(w.batches, batchTime{total: due + time.Since(t1), send: w.sender.cur, n: n})
						due = 0
					}
					progress += n
				}
				gate.RUnlock()
				settled.Add(int64(progress))
				if progress == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	close(finished)
	sr := <-sliced
	if sr.err != nil {
		return nil, fmt.Errorf("baseline slice: %w", sr.err)
	}
	// The slices' time and CPU are the baseline's, not the drain's.
	res := &drainResult{wall: time.Since(start) - sr.paused, pgCPU: -1, slices: sr.runs}
	res.goCPU = benchkit.CPUTime() - cpu0 - sr.goCPU
	if pg1, _ := benchkit.PostgresCPU(pgPID); pgKnown {
		res.pgCPU = (pg1 - pg0 - sr.pgCPU).Seconds()
	}
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	res.gcCycles = ms1.NumGC - ms0.NumGC - sr.gcCycles
	res.totalAlloc = ms1.TotalAlloc - ms0.TotalAlloc - sr.alloc
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
		logf("CPU profile of the drain in %s", cfg.cpuprofile)
	}
	if cfg.memprofile != "" {
		if err := writeAllocs(cfg.memprofile); err != nil {
			return nil, err
		}
		logf("allocation profile of the run in %s", cfg.memprofile)
	}
	for _, w := range workers {
		if w.err != nil {
			return nil, fmt.Errorf("dispatch: %w", w.err)
		}
		res.events += w.sender.events
		res.requests += w.sender.requests
		res.failedSends += w.sender.failed
		if res.firstErr == "" {
			res.firstErr = w.sender.firstErr
		}
		res.batches = append(res.batches, w.batches...)
	}
	return res, nil
}

// sliceResult is what the baseline slices took from a drain.
type sliceResult struct {
	runs         []baselineResult
	paused       time.Duration
	goCPU, pgCPU time.Duration
	gcCycles     uint32
	alloc        uint64
	err          error
}

// sliceDrain pauses the drain cfg.slices times, evenly over its events,
// to run a short baseline (slice) while the drain waits, and returns those
// runs with the time and CPU they took. It stops when finished closes.
func sliceDrain(cfg config, gate *sync.RWMutex, settled *atomic.Int64, finished <-chan struct{},
	slice func() (baselineResult, error), pgPID int) sliceResult {
	var res sliceResult
	if cfg.slices <= 0 {
		return res
	}
	step := int64(cfg.events / (cfg.slices + 1))
	next := step
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(res.runs) < cfg.slices {
		select {
		case <-finished:
			return res
		case <-tick.C:
		}
		if settled.Load() < next {
			continue
		}
		next += step
		gate.Lock()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		t0, cpu0 := time.Now(), benchkit.CPUTime()
		pg0, _ := benchkit.PostgresCPU(pgPID)
		r, err := slice()
		pg1, _ := benchkit.PostgresCPU(pgPID)
		res.goCPU += benchkit.CPUTime() - cpu0
		res.pgCPU += pg1 - pg0
		runtime.ReadMemStats(&ms1)
		res.gcCycles += ms1.NumGC - ms0.NumGC
		res.alloc += ms1.TotalAlloc - ms0.TotalAlloc
		res.paused += time.Since(t0)
		gate.Unlock()
		if err != nil {
			res.err = err
			return res
		}
		res.runs = append(res.runs, r)
	}
	return res
}

func statusCounts(ctx context.Context, db *sql.DB) (map[models.EventStatus]int, error) {
	// A sent event is one with a send; the others have their state in
	// unsent_events (migration 0014).
	rows, err := db.QueryContext(ctx, `SELECT COALESCE(u.status, CASE WHEN s.event_id IS NULL THEN '' ELSE 'sent' END), count(*)
		FROM events e LEFT JOIN event_sends s ON s.event_id = e.id LEFT JOIN unsent_events u ON u.event_id = e.id GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[models.EventStatus]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[models.EventStatus(s)] = n
	}
	return out, rows.Err()
}
