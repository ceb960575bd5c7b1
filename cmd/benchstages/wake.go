package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

// wakeRun is what one run of the wake bench measured.
type wakeRun struct {
	waiting int
	// lat are the new leads' capture latencies, sorted.
	lat []time.Duration
	// worker is the time the worker spent in its looks for new leads and
	// its drains (its statements included); cpu and pgCPU are this
	// process's and the local Postgres's CPU over the run.
	worker, cpu, pgCPU time.Duration
	woken              int
	errors             int
}

// wake measures what a new lead costs while a connection's deliveries
// wait for other leads: the new leads' capture p99 and the CRM worker's
// time and the CPU per new lead, with -wake-small (1,000), then
// -wake-large (100,000), then -wake-small deliveries waiting again.
// Budget: each figure of the large run at most -wake-budget (1.5) times
// the small runs' pooled, and no delivery woken.
func (b *bench) wake(ctx context.Context) (bool, error) {
	cfg := b.cfg
	acc, err := b.stagesAccount(ctx, "stages-wake", cfg.wakeSeed, 0)
	if err != nil {
		return false, err
	}
	_, key, err := b.st.CreateIngestKey(ctx, acc.ID, "bench")
	if err != nil {
		return false, err
	}
	box, err := seal.New(benchkit.RandomKey())
	if err != nil {
		return false, err
	}
	// A connection holds at most store.MaxWaitingCRMDeliveries: the
	// deliveries are spread over as many connections as they need.
	var conns []models.CRMConnection
	for i := 0; i*store.MaxWaitingCRMDeliveries < cfg.wakeLarge; i++ {
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Generic), Name: fmt.Sprintf("Bench CRM %d", i+1), Token: store.NewCRMToken()}
		c.SecretSealed = box.Seal(rand.Text()+rand.Text(), crm.SecretLabel(c.Token))
		if err := b.st.CreateCRMConnection(ctx, &c); err != nil {
			return false, err
		}
		conns = append(conns, c)
	}

	worker := crmsync.New(crmsync.Options{Store: b.st, Decider: decide.New(b.st, nil, nil), Box: box, Log: discard})
	base, stop, err := b.serve(web.Options{Box: box, CRM: web.CRMOptions{Notify: worker.Notify}})
	if err != nil {
		return false, err
	}
	defer stop()
	db, err := sql.Open("pgx", b.dbURL)
	if err != nil {
		return false, err
	}
	defer db.Close()

	endpoint := base + "/api/v1/leads"
	// Small, large, small again: the two small runs, pooled, are the
	// baseline, so that a drift of the machine over the runs is not taken
	// for the cost of the waiting deliveries.
	var runs []wakeRun
	stored := 0
	for _, n := range []int{cfg.wakeSmall, cfg.wakeLarge, cfg.wakeSmall} {
		start := time.Now()
		if err := setWaiting(ctx, db, acc.ID, conns, stored, n); err != nil {
			return false, fmt.Errorf("waiting deliveries: %w", err)
		}
		stored = n
		fmt.Fprintf(os.Stderr, "benchstages: %d deliveries wait for other leads (set in %s)\n", n, time.Since(start).Round(time.Millisecond))
		r, err := b.wakeRun(ctx, worker, endpoint, key, n)
		if err != nil {
			return false, err
		}
		runs = append(runs, r)
	}

	large := runs[1]
	small := wakeRun{waiting: cfg.wakeSmall, lat: slices.Concat(runs[0].lat, runs[2].lat), worker: runs[0].worker + runs[2].worker,
		cpu: runs[0].cpu + runs[2].cpu, pgCPU: runs[0].pgCPU + runs[2].pgCPU, woken: runs[0].woken + runs[2].woken,
		errors: runs[0].errors + runs[2].errors}
	slices.Sort(small.lat)
	perLead := func(r wakeRun, d time.Duration) float64 { return benchkit.Millis(d) / float64(max(len(r.lat), 1)) }
	p99 := func(r wakeRun) time.Duration { return benchkit.Percentile(r.lat, 0.99) }
	ratio := func(a, b float64) float64 { return a / max(b, 1e-9) }
	p99Ratio := ratio(benchkit.Millis(p99(large)), benchkit.Millis(p99(small)))
	cpuRatio := ratio(perLead(large, large.cpu+large.pgCPU), perLead(small, small.cpu+small.pgCPU))
	workerRatio := ratio(perLead(large, large.worker), perLead(small, small.worker))
	ok := small.errors+large.errors == 0 && small.woken+large.woken == 0 &&
		p99Ratio <= cfg.wakeBudget && cpuRatio <= cfg.wakeBudget && workerRatio <= cfg.wakeBudget
	fmt.Println()
	fmt.Printf("== CRM wake (docs/operations.md): %d new leads, one every %s, POST /api/v1/leads, the CRM worker looking every %s, deliveries waiting for other leads ==\n",
		cfg.wakeLeads, cfg.wakeEvery, cfg.wakeIdle)
	for _, r := range append(runs, small) {
		fmt.Printf("  %7d waiting            capture p50 %.2f ms, p99 %.2f ms; worker %.3f ms per new lead; CPU per new lead %.3f ms (Postgres %.3f + Go %.3f); woken %d, errors %d\n",
			r.waiting, benchkit.Millis(benchkit.Percentile(r.lat, 0.5)), benchkit.Millis(p99(r)), perLead(r, r.worker),
			perLead(r, r.cpu+r.pgCPU), perLead(r, r.pgCPU), perLead(r, r.cpu), r.woken, r.errors)
	}
	fmt.Printf("  (the last line pools the two runs of %d)\n", cfg.wakeSmall)
	fmt.Printf("  ratio %d over %d      capture p99 %.2f, worker %.2f, CPU %.2f; budget <= %.2f each, nothing woken: %s\n",
		large.waiting, small.waiting, p99Ratio, workerRatio, cpuRatio, cfg.wakeBudget, verdict(ok))
	fmt.Printf("wake_small=%d\nwake_large=%d\nwake_small_p99_ms=%.3f\nwake_large_p99_ms=%.3f\nwake_small_worker_ms=%.3f\nwake_large_worker_ms=%.3f\n",
		small.waiting, large.waiting, benchkit.Millis(p99(small)), benchkit.Millis(p99(large)), perLead(small, small.worker), perLead(large, large.worker))
	fmt.Printf("wake_small_cpu_ms=%.3f\nwake_large_cpu_ms=%.3f\nwake_p99_ratio=%.3f\nwake_worker_ratio=%.3f\nwake_cpu_ratio=%.3f\nwake_result=%s\n",
		perLead(small, small.cpu+small.pgCPU), perLead(large, large.cpu+large.pgCPU), p99Ratio, workerRatio, cpuRatio, verdict(ok))
	if small.errors+large.errors > 0 {
		return false, fmt.Errorf("%d captures failed", small.errors+large.errors)
	}
	return ok, nil
}

// wakeRun posts -wake-leads new leads one every -wake-every while the
// worker looks for new leads and drains every -wake-idle, as Run does.
func (b *bench) wakeRun(ctx context.Context, worker *crmsync.Worker, endpoint, key string, waiting int) (wakeRun, error) {
	cfg := b.cfg
	r := wakeRun{waiting: waiting}
	if _, err := worker.Drain(ctx); err != nil { // notes where the leads are
		return r, err
	}
	var mu sync.Mutex
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(cfg.wakeIdle)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			t0 := time.Now()
			n, err := worker.WakeForLeads(wctx)
			if err == nil {
				_, err = worker.Drain(wctx)
			}
			mu.Lock()
			r.worker += time.Since(t0)
			r.woken += n
			if err != nil && wctx.Err() == nil {
				r.errors++
			}
			mu.Unlock()
		}
	})
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(i int) (time.Duration, error) {
		body := fmt.Sprintf(`{"email":"new-%s-%d-%d@example.com","first_name":"Pat","last_name":"New","phone":"+1555%07d"}`, runID, waiting, i, i)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader([]byte(body)))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("capture answered %d", res.StatusCode)
		}
		return time.Since(t0), nil
	}
	for i := range cfg.warmup / 10 { // unmeasured: connections and caches warm
		if _, err := post(-1 - i); err != nil {
			stop()
			wg.Wait()
			return r, err
		}
	}
	mu.Lock()
	r.worker, r.woken, r.errors = 0, 0, 0
	mu.Unlock()
	cpu0 := benchkit.CPUTime()
	pg0, _ := benchkit.PostgresCPU(b.pgPID)
	next := time.Now()
	for i := range cfg.wakeLeads {
		time.Sleep(time.Until(next))
		next = next.Add(cfg.wakeEvery)
		lat, err := post(i)
		if err != nil {
			r.errors++
			continue
		}
		r.lat = append(r.lat, lat)
	}
	// The worker's last look takes the last leads in.
	time.Sleep(2 * cfg.wakeIdle)
	stop()
	wg.Wait()
	r.cpu = benchkit.CPUTime() - cpu0
	if pg1, ok := benchkit.PostgresCPU(b.pgPID); ok {
		r.pgCPU = pg1 - pg0
	}
	slices.Sort(r.lat)
	return r, nil
}

// setWaiting makes the connections' deliveries waiting for leads no lead
// has number upTo, from from: it adds them as the worker leaves them
// (their lookup key, an email's hash, in crm_delivery_keys; due again in
// 30 minutes), at most store.MaxWaitingCRMDeliveries a connection, or
// deletes those past upTo.
func setWaiting(ctx context.Context, db *sql.DB, accountID int64, conns []models.CRMConnection, from, upTo int) error {
	if upTo < from {
		if _, err := db.ExecContext(ctx, `DELETE FROM crm_deliveries WHERE account_id = $1 AND key LIKE 'waiting-%' AND substr(key, 9)::int > $2`,
			accountID, upTo); err != nil {
			return err
		}
	}
	per := store.MaxWaitingCRMDeliveries
	for k, c := range conns {
		lo, hi := max(from, k*per), min(upTo, (k+1)*per)
		if lo >= hi {
			continue
		}
		if _, err := db.ExecContext(ctx, `
INSERT INTO crm_deliveries (account_id, connection_id, key, body, received_at, object_id, crm_stage_id, occurred_at,
	status, waiting_for, reason, attempts, next_try_at, tried_at)
SELECT $1, $2, 'waiting-' || i, '{"email":"waiting' || i || '@example.com","stage":"won","change_id":"waiting-' || i || '"}',
	now(), '', 'won', now(), 'waiting', 'lead', 'no lead of the account matches email waiting' || i || '@example.com', 1,
	now() + interval '30 minutes', now()
FROM generate_series($3::int + 1, $4::int) AS i`, accountID, c.ID, lo, hi); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, `
INSERT INTO crm_delivery_keys (delivery_id, account_id, kind, value)
SELECT d.id, d.account_id, 'email', encode(sha256(convert_to('waiting' || substr(d.key, 9) || '@example.com', 'UTF8')), 'hex')
FROM crm_deliveries d WHERE d.connection_id = $1 AND d.key LIKE 'waiting-%' AND substr(d.key, 9)::int > $2
ON CONFLICT DO NOTHING`, c.ID, lo); err != nil {
			return err
		}
	}
	_, err := db.ExecContext(ctx, "VACUUM ANALYZE crm_deliveries, crm_delivery_keys")
	return err
}
