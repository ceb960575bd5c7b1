// Command benchoutage measures leadsignal through a Meta outage, end to end:
// the real web server and the real dispatcher (dispatch.New(...).Run, the
// whole time) run in-process on a private Postgres schema with one live
// dataset, and an in-process fake Graph server (benchkit.FakeGraph) stands
// in for Meta.
//
//  1. Meta up: clients post leads to POST /api/v1/leads
//     (benchkit.CaptureLoad) for -d while the dispatcher sends their events.
//  2. Outage: the fake stops listening, so its address on 127.0.0.1
//     refuses connections; the same clients post for -d, then on until
//     -backlog events wait.
//  3. Meta back: the fake listens on the same address again, and the drain
//     is timed from the first batch it accepts until the backlog is in.
//
// Its budgets, each a ratio to a baseline measured in the same run: the
// drain reaches at least -drainbudget (0.5) of the rate at which the fake
// takes ready-made 1000-event batches from a plain client
// (benchkit.Baseline); capture during the outage reaches at least
// -capturebudget (0.8) of its rate with Meta up; and the dead address sees
// at most one connection attempt per backoff step of the hold
// (datasets.hold_tries), steps that double as dispatch's schedule does.
// docs/operations.md ("Benchmarks") lists them with the other budgets.
//
//	go run ./cmd/benchoutage
//
// It is the outage part of `make bench` (.ci/bench-outage), which judges
// the key=value lines it prints.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/web"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchoutage:", err)
		os.Exit(1)
	}
}

type config struct {
	database      string
	conc          int
	dur           time.Duration
	warmup        time.Duration
	backlog       int
	history       int
	baseline      time.Duration
	wait          time.Duration
	drainBudget   float64
	captureBudget float64
	cpuprofile    string
	captureProf   string
	keep          bool
}

const (
	pixelID    = "123456789012345"
	fakeToken  = "bench-token-EAAB"
	apiVersion = "v24.0"
)

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.conc, "c", 16, "concurrent capture clients, with Meta up and during the outage")
	flag.DurationVar(&cfg.dur, "d", 10*time.Second, "measured capture duration, with Meta up and again during the outage")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured warmup before each measured capture duration")
	flag.IntVar(&cfg.backlog, "backlog", 20000, "the least events that wait when Meta comes back: capture goes on after its measured duration until they do")
	flag.IntVar(&cfg.history, "history", 100_000, "earlier leads (of the last 30 days, each with its Lead event) the account holds before the run, as a live account would")
	flag.DurationVar(&cfg.baseline, "baseline", 3*time.Second, "how long the plain client posts ready-made batches, before the outage and after the drain")
	flag.DurationVar(&cfg.wait, "wait", 2*time.Minute, "how long the drain may take once the hold's next try is due")
	flag.Float64Var(&cfg.drainBudget, "drainbudget", 0.5, "the least drain rate / baseline rate that passes")
	flag.Float64Var(&cfg.captureBudget, "capturebudget", 0.8, "the least capture rate during the outage / with Meta up that passes")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the drain (from Meta's return until the backlog is in) to this file")
	flag.StringVar(&cfg.captureProf, "capturecpuprofile", "", "write a CPU profile of the measured capture duration during the outage to this file")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.Parse()
	if cfg.conc < 1 || cfg.dur <= 0 || cfg.warmup < 0 || cfg.backlog < dispatch.MaxBatch || cfg.baseline <= 0 || cfg.wait <= 0 {
		return fmt.Errorf("-c must be at least 1, -d, -baseline and -wait positive, -warmup not negative and -backlog at least %d", dispatch.MaxBatch)
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchoutage", cfg.keep)
	if err != nil {
		return err
	}
	defer done()
	box, err := seal.New(benchkit.RandomKey())
	if err != nil {
		return err
	}
	acc, err := benchkit.Account(ctx, st)
	if err != nil {
		return err
	}
	ds, err := benchkit.LiveDataset(ctx, st, box, acc, pixelID, apiVersion, fakeToken)
	if err != nil {
		return err
	}
	_, secret, err := st.CreateIngestKey(ctx, acc.ID, "bench")
	if err != nil {
		return err
	}
	logf("seeding %d leads of history (not measured)", cfg.history)
	if err := benchkit.SeedLeads(ctx, dbURL, acc.ID, cfg.history); err != nil {
		return fmt.Errorf("seed history: %w", err)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	pgPID := benchkit.PostgresPID(ctx, dbURL)

	// Meta: the fake Graph server, timed by the batches it accepts.
	fk := &benchkit.FakeGraph{Token: fakeToken}
	clock := &acceptClock{next: fk}
	meta, metaAddr, err := listenMeta("127.0.0.1:0", clock)
	if err != nil {
		return err
	}
	defer func() { meta.Close() }()
	graphURL := "http://" + metaAddr

	// The dispatcher's client, which the baseline uses too. Connection
	// attempts to the dead address are counted in its Transport's dialer:
	// a closed port has no server that could count what it refuses, and
	// every request there must dial, since closing the fake ends its
	// kept-alive connections and the idle ones are closed with it.
	dials := &dialLog{addr: metaAddr}
	tr := &http.Transport{
		DialContext:         dials.dial,
		MaxIdleConns:        2 * dispatch.InFlight,
		MaxIdleConnsPerHost: 2 * dispatch.InFlight,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &capi.Client{HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	target := capi.Target{BaseURL: graphURL, Version: apiVersion, PixelID: pixelID, Token: fakeToken}

	disp := dispatch.New(dispatch.Options{
		Store: st, Sender: client, Box: box, Log: slog.New(slog.DiscardHandler),
		GraphURL: graphURL, DefaultVersion: apiVersion,
	})
	dctx, stopDispatch := context.WithCancel(ctx)
	dispatched := make(chan error, 1)
	go func() { dispatched <- disp.Run(dctx) }()
	defer func() {
		stopDispatch()
		<-dispatched
	}()

	srv := &http.Server{Handler: web.New(web.Options{
		Store:           st,
		Log:             slog.New(slog.DiscardHandler),
		SessionHashKey:  benchkit.RandomKey(),
		SessionBlockKey: benchkit.RandomKey(),
		Box:             box,
		Sender:          client,
		GraphURL:        graphURL,
		APIVersion:      apiVersion,
		Notify:          disp.Notify,
	}), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	load := &benchkit.CaptureLoad{Endpoint: "http://" + ln.Addr().String() + "/api/v1/leads", Secret: secret,
		Clients: cfg.conc, PostgresPID: pgPID}
	defer load.Close()

	// ------------------------------------------------ 1. Meta up

	logf("Meta up: %d clients post leads for %s after a %s warmup; the dispatcher sends their events", cfg.conc, cfg.dur, cfg.warmup)
	up, err := load.Run(cfg.warmup, cfg.dur, "")
	if err != nil {
		return err
	}
	logf("Meta up: %.0f leads/s", rate(up))
	if err := waitFor(2*time.Minute, "the events captured with Meta up to be sent", func() (bool, error) {
		n, err := queued(ctx, db, ds.ID)
		return n == 0, err
	}); err != nil {
		return err
	}
	if d, err := st.DatasetByID(ctx, ds.ID); err != nil || d.HeldSince != nil {
		return fmt.Errorf("the dataset is held with Meta up (%v): %s", err, d.HoldError)
	}
	batch, err := sentBatch(ctx, db, ds.ID)
	if err != nil {
		return fmt.Errorf("the baseline's batch: %w", err)
	}
	logf("baseline: a plain client posts ready-made %d-event batches for %s", len(batch), cfg.baseline)
	before, err := benchkit.Baseline(client, target, batch, 1, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	logf("baseline: %.0f events/s", before.Rate)

	// ------------------------------------------------ 2. outage

	// Nothing is in flight: the backlog is sent and the baseline is done.
	meta.Close()
	tr.CloseIdleConnections()
	downAt := time.Now()
	logf("outage: %s refuses connections; the same clients post for %s after a %s warmup", metaAddr, cfg.dur, cfg.warmup)
	down, err := load.Run(cfg.warmup, cfg.dur, cfg.captureProf)
	if err != nil {
		return err
	}
	if cfg.captureProf != "" {
		logf("CPU profile of capture during the outage in %s", cfg.captureProf)
	}
	logf("outage: %.0f leads/s", rate(down))
	backlog, err := queued(ctx, db, ds.ID)
	if err != nil {
		return err
	}
	var more benchkit.CaptureRun
	topUp := time.Now()
	for backlog < cfg.backlog {
		r, err := load.Run(0, time.Second, "")
		if err != nil {
			return err
		}
		more.Errors += r.Errors
		more.Lat = append(more.Lat, r.Lat...)
		if more.FirstErr == "" {
			more.FirstErr = r.FirstErr
		}
		if backlog, err = queued(ctx, db, ds.ID); err != nil {
			return err
		}
	}
	topUpTime := time.Since(topUp)
	upAt := time.Now()
	held, err := st.DatasetByID(ctx, ds.ID)
	if err != nil {
		return err
	}
	if held.HeldSince == nil || held.HoldUntil == nil {
		return errors.New("the dataset is not held after the outage")
	}
	var failedSends int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM send_requests WHERE dataset_id = $1 AND started_at >= $2 AND error <> ''`,
		ds.ID, downAt).Scan(&failedSends); err != nil {
		return err
	}
	deadDials := dials.failures()
	logf("outage: %d events wait after %s; %d connection attempts at the dead address, %d failed requests logged, hold_tries %d",
		backlog, upAt.Sub(downAt).Round(time.Millisecond), len(deadDials), failedSends, held.HoldTries)

	// ------------------------------------------------ 3. Meta back

	fk.Reset()
	clock.reset()
	meta, _, err = listenMeta(metaAddr, clock)
	if err != nil {
		return fmt.Errorf("listen again on the fake's address: %w", err)
	}
	logf("Meta back on %s; the hold's next try is due in %s", metaAddr, held.HoldUntil.Sub(upAt).Round(time.Millisecond))
	var prof *os.File
	if cfg.cpuprofile != "" {
		if prof, err = os.Create(cfg.cpuprofile); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			prof.Close()
			return err
		}
	}
	cpu0 := benchkit.CPUTime()
	pg0, pgKnown := benchkit.PostgresCPU(pgPID)
	deadline := max(held.HoldUntil.Sub(upAt), 0) + cfg.wait
	err = waitFor(deadline, "the backlog to reach Meta", func() (bool, error) {
		return fk.Received.Load() >= int64(backlog), nil
	})
	goCPU := benchkit.CPUTime() - cpu0
	pg1, _ := benchkit.PostgresCPU(pgPID)
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
		logf("CPU profile of the drain in %s", cfg.cpuprofile)
	}
	if err != nil {
		return fmt.Errorf("%w (fake received %d of %d, refused %d requests)", err, fk.Received.Load(), backlog, fk.Refused.Load())
	}
	first, last, took, inFlight := clock.window()
	batches := len(took)
	drainTime := last.Sub(first)
	received := fk.Received.Load()
	logf("drain: %d events in %s from the first accepted batch (%d batches, at most %d at once)", received, drainTime.Round(time.Millisecond), batches, inFlight)

	// Every event must be sent once, and the hold over.
	if err := waitFor(time.Minute, "the dispatcher to settle the backlog", func() (bool, error) {
		n, err := queued(ctx, db, ds.ID)
		if err != nil || n > 0 {
			return false, err
		}
		d, err := st.DatasetByID(ctx, ds.ID)
		return d.HeldSince == nil, err
	}); err != nil {
		return err
	}
	// The claim's plan depends on what Postgres last learnt of the queue:
	// when it last analyzed unsent_events, and the share of queued rows it
	// saw then (none, if it last looked before any lead was posted).
	var analyzed sql.NullTime
	var queuedShare float64
	if err := db.QueryRowContext(ctx, `SELECT greatest(t.last_analyze, t.last_autoanalyze),
		COALESCE((SELECT f FROM pg_stats s, unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS m(v, f)
			WHERE s.schemaname = current_schema() AND s.tablename = 'unsent_events' AND s.attname = 'status' AND m.v = 'queued'), 0)
		FROM pg_stat_user_tables t WHERE t.relid = 'unsent_events'::regclass`).Scan(&analyzed, &queuedShare); err != nil {
		return err
	}
	statsAge := math.NaN() // seconds from the last analyze to the drain's start
	statsText := "never analyzed"
	if analyzed.Valid {
		statsAge = first.Sub(analyzed.Time).Seconds()
		when := fmt.Sprintf("%.1f s before the outage began", downAt.Sub(analyzed.Time).Seconds())
		if analyzed.Time.After(downAt) {
			when = fmt.Sprintf("%.1f s into the outage", analyzed.Time.Sub(downAt).Seconds())
		}
		if statsAge >= 0 {
			statsText = fmt.Sprintf("last analyzed %.1f s before the drain began (%s), when %.1f%% of its rows were queued",
				statsAge, when, 100*queuedShare)
		} else {
			statsText = fmt.Sprintf("last analyzed %.1f s after the drain began (%s; its first claims were planned with what Postgres saw before), when %.1f%% of its rows were queued",
				-statsAge, when, 100*queuedShare)
		}
	}
	var unsent, twice int
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM events e JOIN unsent_events u ON u.event_id = e.id
			WHERE e.event_id NOT LIKE 'hist-%' AND u.status = 'queued'),
		(SELECT count(*) FROM (SELECT event_id FROM event_sends GROUP BY event_id HAVING count(*) > 1) x)`).Scan(&unsent, &twice); err != nil {
		return err
	}

	logf("baseline again after the drain")
	after, err := benchkit.Baseline(client, target, batch, 1, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline after: %w", err)
	}
	logf("baseline after: %.0f events/s", after.Rate)

	// ------------------------------------------------ figures

	base := float64(before.Events+after.Events) / (before.Seconds + after.Seconds)
	drainRate := float64(received) / drainTime.Seconds()
	drainRatio := drainRate / base
	captureRatio := rate(down) / rate(up)
	outage := upAt.Sub(downAt)
	span := time.Duration(0)
	if len(deadDials) > 1 {
		span = deadDials[len(deadDials)-1].Sub(deadDials[0])
	}
	steps := maxTries(span)
	attempts := max(len(deadDials), failedSends)

	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	captureOK := captureRatio >= cfg.captureBudget && up.Errors == 0 && down.Errors == 0 && more.Errors == 0
	attemptsOK := attempts <= held.HoldTries && held.HoldTries <= steps
	drainOK := drainRatio >= cfg.drainBudget && received == int64(backlog) && fk.Refused.Load() == 0 && unsent == 0 && twice == 0

	offsets := make([]string, len(deadDials))
	for i, t := range deadDials {
		offsets[i] = fmt.Sprintf("%.1f", t.Sub(downAt).Seconds())
	}
	fmt.Printf("outage: capture with Meta up %.0f leads/s (p50 %.2f ms, p99 %.2f ms, errors %d), during the outage %.0f leads/s (p50 %.2f ms, p99 %.2f ms, errors %d); ratio %.3f; budget %.2f %s\n",
		rate(up), p(up, .5), p(up, .99), up.Errors, rate(down), p(down, .5), p(down, .99), down.Errors, captureRatio, cfg.captureBudget, verdict(captureOK))
	fmt.Printf("outage: %s without Meta (%s of it posting on until %d events waited, %d more leads, %d errors); connection attempts at the dead address at +[%s] s; %d failed requests logged; hold_tries %d, at most %d steps of 1 s doubling (-20%% jitter) in %.1f s between the first and last attempt plus %d in flight at the start; %s\n",
		outage.Round(time.Millisecond), topUpTime.Round(time.Millisecond), backlog, len(more.Lat), more.Errors, strings.Join(offsets, " "),
		failedSends, held.HoldTries, steps, span.Seconds(), dispatch.InFlight-1, verdict(attemptsOK))
	pgText := "unknown"
	if pgKnown {
		pgText = fmt.Sprintf("%.2fs = %.1f us/event", (pg1 - pg0).Seconds(), 1e6*(pg1-pg0).Seconds()/float64(max(received, 1)))
	}
	fmt.Printf("outage: Meta back after the hold's next try was due in %.1f s; first batch accepted %.1f s after; drain %d events in %s (%.0f events/s, %d batches, %.1f ms each, at most %d at once, the fake's part p50 %.1f ms); baseline %.0f events/s (before %.0f, after %.0f); ratio %.3f; budget %.2f %s\n",
		held.HoldUntil.Sub(upAt).Seconds(), first.Sub(upAt).Seconds(), received, drainTime.Round(time.Millisecond), drainRate, batches,
		benchkit.Millis(drainTime)/float64(max(batches, 1)), inFlight, benchkit.Millis(benchkit.Percentile(took, .5)),
		base, before.Rate, after.Rate, drainRatio, cfg.drainBudget, verdict(drainOK))
	fmt.Printf("outage: CPU from Meta's return to the backlog's end: Go process (server, dispatcher, fake) %.2fs = %.1f us/event; Postgres %s; events queued and never sent %d, sent twice %d; fake refused %d requests\n",
		goCPU.Seconds(), 1e6*goCPU.Seconds()/float64(max(received, 1)), pgText, unsent, twice, fk.Refused.Load())
	fmt.Printf("outage: unsent_events %s\n", statsText)
	if !captureOK && up.Errors+down.Errors+more.Errors > 0 {
		fmt.Printf("outage: capture errors; first: %s\n", firstNonEmpty(up.FirstErr, down.FirstErr, more.FirstErr))
	}

	fmt.Printf("capture_up_leads_per_sec=%.1f\n", rate(up))
	fmt.Printf("capture_up_p50_ms=%.3f\n", p(up, .5))
	fmt.Printf("capture_up_p99_ms=%.3f\n", p(up, .99))
	fmt.Printf("capture_up_errors=%d\n", up.Errors)
	fmt.Printf("capture_down_leads_per_sec=%.1f\n", rate(down))
	fmt.Printf("capture_down_p50_ms=%.3f\n", p(down, .5))
	fmt.Printf("capture_down_p99_ms=%.3f\n", p(down, .99))
	fmt.Printf("capture_down_errors=%d\n", down.Errors+more.Errors)
	fmt.Printf("capture_ratio=%.4f\n", captureRatio)
	fmt.Printf("capture_budget=%.2f\n", cfg.captureBudget)
	fmt.Printf("capture_verdict=%s\n", verdict(captureOK))
	fmt.Printf("outage_seconds=%.3f\n", outage.Seconds())
	fmt.Printf("backlog_events=%d\n", backlog)
	fmt.Printf("dead_connects=%d\n", len(deadDials))
	fmt.Printf("dead_requests_logged=%d\n", failedSends)
	fmt.Printf("hold_tries=%d\n", held.HoldTries)
	fmt.Printf("schedule_max_tries=%d\n", steps)
	fmt.Printf("attempts_verdict=%s\n", verdict(attemptsOK))
	fmt.Printf("probe_wait_seconds=%.3f\n", first.Sub(upAt).Seconds())
	fmt.Printf("drain_events=%d\n", received)
	fmt.Printf("drain_seconds=%.3f\n", drainTime.Seconds())
	fmt.Printf("drain_events_per_sec=%.1f\n", drainRate)
	fmt.Printf("drain_batches=%d\n", batches)
	fmt.Printf("drain_max_in_flight=%d\n", inFlight)
	fmt.Printf("drain_fake_ms_p50=%.2f\n", benchkit.Millis(benchkit.Percentile(took, .5)))
	fmt.Printf("unsent_analyzed_before_drain_seconds=%.3f\n", statsAge)
	fmt.Printf("unsent_analyzed_queued_share=%.4f\n", queuedShare)
	fmt.Printf("go_cpu_us_per_event=%.2f\n", 1e6*goCPU.Seconds()/float64(max(received, 1)))
	if pgKnown {
		fmt.Printf("pg_cpu_us_per_event=%.2f\n", 1e6*(pg1-pg0).Seconds()/float64(max(received, 1)))
	}
	fmt.Printf("baseline_events_per_sec=%.1f\n", base)
	fmt.Printf("baseline_before=%.1f\n", before.Rate)
	fmt.Printf("baseline_after=%.1f\n", after.Rate)
	fmt.Printf("drain_ratio=%.4f\n", drainRatio)
	fmt.Printf("drain_budget=%.2f\n", cfg.drainBudget)
	fmt.Printf("drain_verdict=%s\n", verdict(drainOK))
	fmt.Printf("verdict=%s\n", verdict(captureOK && attemptsOK && drainOK))
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchoutage: "+format+"\n", args...)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// rate is a capture run's leads per second in its measured window.
func rate(r *benchkit.CaptureRun) float64 { return float64(len(r.Lat)) / r.Window.Seconds() }

// p is a capture run's latency quantile q, in milliseconds.
func p(r *benchkit.CaptureRun, q float64) float64 {
	slices.Sort(r.Lat)
	return benchkit.Millis(benchkit.Percentile(r.Lat, q))
}

// maxTries is the most failed tries a held dataset makes in span, from its
// first failed try to its last, when the waits between them are 1 s
// doubling, each at least 0.8 of its length (the jitter): the n-th try
// comes at least 0.8 * (2^(n-1) - 1) s after the first. The batches that
// dispatch.InFlight had claimed before the first failure held the dataset
// may fail beside it, each one more try.
func maxTries(span time.Duration) int {
	return 1 + int(math.Floor(math.Log2(span.Seconds()/0.8+1))) + dispatch.InFlight - 1
}

// queued counts the events of a dataset waiting to be sent.
func queued(ctx context.Context, db *sql.DB, datasetID int64) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM unsent_events WHERE dataset_id = $1 AND status = 'queued'", datasetID).Scan(&n)
	return n, err
}

// sentBatch is the payloads of the first 1000 events the run sent, as the
// dispatcher sent them: the baseline's ready-made batch.
func sentBatch(ctx context.Context, db *sql.DB, datasetID int64) ([]json.RawMessage, error) {
	rows, err := db.QueryContext(ctx, `SELECT e.payload FROM events e JOIN event_sends s ON s.event_id = e.id
		WHERE e.dataset_id = $1 AND e.event_id NOT LIKE 'hist-%' ORDER BY e.id LIMIT $2`, datasetID, dispatch.MaxBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var batch []json.RawMessage
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		batch = append(batch, json.RawMessage(p))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(batch) < dispatch.MaxBatch {
		return nil, fmt.Errorf("only %d events were sent with Meta up; want %d (raise -d)", len(batch), dispatch.MaxBatch)
	}
	return batch, nil
}

// waitFor polls done until it reports true, for at most timeout.
func waitFor(timeout time.Duration, what string, done func() (bool, error)) error {
	end := time.Now().Add(timeout)
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("gave up waiting for %s after %s", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listenMeta serves h on addr ("127.0.0.1:0" for any port) and returns the
// server with the address it listens on.
func listenMeta(addr string, h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}

// dialLog is the dialer of the dispatcher's client: it notes when a
// connection to addr could not be opened, a request to the dead endpoint.
type dialLog struct {
	addr   string
	d      net.Dialer
	mu     sync.Mutex
	failed []time.Time
}

func (l *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	t := time.Now()
	c, err := l.d.DialContext(ctx, network, address)
	if err != nil && address == l.addr {
		l.mu.Lock()
		l.failed = append(l.failed, t)
		l.mu.Unlock()
	}
	return c, err
}

// failures are the times of the failed connection attempts so far.
func (l *dialLog) failures() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.failed)
}

// acceptClock times the batches Meta accepts: from the arrival of the first
// to the answer of the last, with the time each took and how many were
// in the fake at once at most.
type acceptClock struct {
	next        http.Handler
	mu          sync.Mutex
	first, last time.Time
	took        []time.Duration
	now, most   int
}

func (a *acceptClock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	a.mu.Lock()
	a.now++
	a.most = max(a.most, a.now)
	a.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	a.next.ServeHTTP(sw, r)
	t1 := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.now--
	if sw.status != http.StatusOK {
		return
	}
	if a.first.IsZero() || t0.Before(a.first) {
		a.first = t0
	}
	if t1.After(a.last) {
		a.last = t1
	}
	a.took = append(a.took, t1.Sub(t0))
}

func (a *acceptClock) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.first, a.last, a.took, a.most = time.Time{}, time.Time{}, nil, a.now
}

// window is what the clock saw since reset: the first accepted batch's
// arrival, the last one's answer, the time each took (sorted) and the most
// requests in the fake at once.
func (a *acceptClock) window() (first, last time.Time, took []time.Duration, most int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	took = slices.Clone(a.took)
	slices.Sort(took)
	return a.first, a.last, took, a.most
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
