// Command benchcapture measures the capture path end to end: it starts the
// real web server in-process on a private Postgres schema and posts
// realistic, varied leads to POST /api/v1/leads from concurrent keep-alive
// clients, then prints the rate and the latency percentiles.
//
//	go run ./cmd/benchcapture -c 16 -d 10s
//
// It is the second half of `make bench` (.ci/bench), which compares the rate
// with pgbench's single-row insert rate on the same Postgres
// (docs/operations.md, "Benchmarks").
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/web"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchcapture:", err)
		os.Exit(1)
	}
}

type config struct {
	database   string
	conc       int
	dur        time.Duration
	warmup     time.Duration
	cpuprofile string
	keep       bool
	datasets   int
	history    int
	floor      bool
	collect    bool
	slice      time.Duration
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.conc, "c", 16, "concurrent clients")
	flag.DurationVar(&cfg.dur, "d", 10*time.Second, "measured duration")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured warmup before the measured duration")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the measured duration (server and clients) to this file")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.IntVar(&cfg.history, "history", 100_000, "earlier leads (of the last 30 days, each with its Lead event) the account holds before the run, as a live account would")
	flag.IntVar(&cfg.datasets, "datasets", 1, "datasets (dry_run) in the account: a clean complete lead queues one Lead event to each")
	flag.DurationVar(&cfg.slice, "slice", 0, "also measure the rate in slices of this length, back to back over -d (the cold run: -history 0 -slice 5s)")
	flag.BoolVar(&cfg.collect, "collect", false, "post as the site snippet does, to POST /api/v1/collect with a site key from pages of its origin, each lead's visitor address and user agent in the request's headers (docs/capture-js.md)")
	flag.BoolVar(&cfg.floor, "floor", false, "post to a bare handler instead of leadsignal: it checks the key, decodes the lead and INSERTs it as one row, as pgbench's script does (the least any HTTP capture can do)")
	flag.Parse()
	if cfg.conc < 1 || cfg.dur <= 0 || cfg.warmup < 0 || cfg.slice < 0 {
		return errors.New("-c must be at least 1, -d positive, -warmup and -slice not negative")
	}
	if cfg.collect && cfg.floor {
		return errors.New("-collect and -floor measure different things: choose one")
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchcapture", cfg.keep)
	if err != nil {
		return err
	}
	defer done()
	acc, err := benchkit.Account(ctx, st)
	if err != nil {
		return err
	}
	for i := range cfg.datasets {
		d := models.Dataset{AccountID: acc.ID, Name: fmt.Sprintf("Bench pixel %d", i+1),
			PixelID: fmt.Sprintf("1%014d", i+1), Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := st.CreateDataset(ctx, &d); err != nil {
			return err
		}
	}
	_, secret, err := st.CreateIngestKey(ctx, acc.ID, "bench")
	if err != nil {
		return err
	}
	if err := benchkit.SeedLeads(ctx, dbURL, acc.ID, cfg.history); err != nil {
		return fmt.Errorf("seed history: %w", err)
	}

	// The site key's rate limit is lifted: the run measures the path, not
	// the limit that guards a leaked key.
	var handler http.Handler = web.New(web.Options{
		Store:           st,
		Log:             slog.New(slog.DiscardHandler),
		SessionHashKey:  benchkit.RandomKey(),
		SessionBlockKey: benchkit.RandomKey(),
		CollectKeyRate:  1e9,
	})
	if cfg.floor {
		h, closeFloor, err := newFloor(ctx, dbURL, acc.ID, secret)
		if err != nil {
			return err
		}
		defer closeFloor()
		handler = h
	}
	// What serve runs beside the web server: a new database's tables get
	// their first statistics as soon as they hold rows.
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go func() { _ = upkeep.Stats(st, slog.New(slog.DiscardHandler)).Run(bg) }()
	go func() { _ = upkeep.Search(st, slog.New(slog.DiscardHandler)).Run(bg) }()
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	load := &benchkit.CaptureLoad{Endpoint: "http://" + ln.Addr().String() + "/api/v1/leads", Secret: secret,
		Clients: cfg.conc, PostgresPID: benchkit.PostgresPID(ctx, dbURL)}
	if cfg.collect {
		const origin = "https://www.example-dental.com"
		k, err := st.CreateSiteKey(ctx, acc.ID, "bench", []string{origin}, time.Now())
		if err != nil {
			return err
		}
		load.Endpoint, load.Origin = "http://"+ln.Addr().String()+"/api/v1/collect?key="+k.Key, origin
	}
	defer load.Close()
	if cfg.slice > 0 {
		return runSlices(load, cfg)
	}
	res, err := load.Run(cfg.warmup, cfg.dur, cfg.cpuprofile)
	if err != nil {
		return err
	}
	if cfg.cpuprofile != "" {
		fmt.Fprintf(os.Stderr, "benchcapture: CPU profile in %s\n", cfg.cpuprofile)
	}
	stored, events, err := countRows(ctx, dbURL)
	if err != nil {
		return err
	}
	printResult(res, cfg, stored, events)
	if res.Errors > 0 {
		return fmt.Errorf("%d requests failed; first: %s", res.Errors, res.FirstErr)
	}
	return nil
}

// runSlices measures the rate in back-to-back slices of cfg.slice over
// cfg.dur, after the warmup (none for a cold run): the capture rate of a
// new database as it fills up. It prints each slice's rate and the lowest.
func runSlices(load *benchkit.CaptureLoad, cfg config) error {
	if cfg.warmup > 0 {
		if _, err := load.Run(0, cfg.warmup, ""); err != nil {
			return err
		}
	}
	var rates []string
	lowest, total, errs := math.Inf(1), 0, int64(0)
	for start := time.Duration(0); start < cfg.dur; start += cfg.slice {
		r, err := load.Run(0, cfg.slice, "")
		if err != nil {
			return err
		}
		rate := float64(len(r.Lat)) / r.Window.Seconds()
		lowest, total, errs = min(lowest, rate), total+len(r.Lat), errs+r.Errors
		rates = append(rates, fmt.Sprintf("%.1f", rate))
		fmt.Printf("capture: slice %s-%s: %.0f leads/s, errors %d\n", start, start+cfg.slice, rate, r.Errors)
		if r.Errors > 0 {
			return fmt.Errorf("%d requests failed; first: %s", r.Errors, r.FirstErr)
		}
	}
	fmt.Printf("slice_leads_per_sec=%s\n", strings.Join(rates, " "))
	fmt.Printf("min_slice_leads_per_sec=%.1f\n", lowest)
	fmt.Printf("leads=%d\n", total)
	fmt.Printf("errors=%d\n", errs)
	return nil
}

// countRows counts the leads and events stored by the run, not the history.
func countRows(ctx context.Context, dbURL string) (leads, events int64, err error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM leads WHERE external_id IS NULL OR external_id NOT LIKE 'hist-%'),
	(SELECT count(*) FROM events WHERE event_id NOT LIKE 'hist-%')`).Scan(&leads, &events)
	return leads, events, err
}

// printResult prints what the clients measured, and the rows stored.
func printResult(r *benchkit.CaptureRun, cfg config, stored, events int64) {
	n := len(r.Lat)
	slices.Sort(r.Lat)
	rate := float64(n) / r.Window.Seconds()
	p50, p99, pmax := benchkit.Percentile(r.Lat, 0.50), benchkit.Percentile(r.Lat, 0.99), benchkit.Percentile(r.Lat, 1)
	var avgBody int64
	if n+int(r.WarmupN) > 0 {
		avgBody = r.BytesSent / int64(n+int(r.WarmupN))
	}
	fmt.Printf("capture: %d leads in %s (%.0f leads/s), p50 %.2fms, p99 %.2fms, errors %d\n",
		n, r.Window.Round(time.Millisecond), rate, benchkit.Millis(p50), benchkit.Millis(p99), r.Errors)
	fmt.Printf("capture: c=%d warmup=%s (%d leads), created %d, existing %d, junk %d (%.1f%%), max %.2fms, avg body %d B, stored %d leads and %d events\n",
		cfg.conc, cfg.warmup, r.WarmupN, r.Created, r.Existing, r.Junk, 100*float64(r.Junk)/float64(max(n, 1)), benchkit.Millis(pmax), avgBody, stored, events)
	fmt.Printf("capture: Go process CPU %.2fs in the window = %.3f ms/lead (server and clients; Postgres not included)\n",
		r.CPU.Seconds(), benchkit.Millis(r.CPU)/float64(max(n, 1)))
	if r.PgCPU > 0 {
		fmt.Printf("capture: Postgres CPU %.2fs in the window = %.3f ms/lead\n", r.PgCPU.Seconds(), benchkit.Millis(r.PgCPU)/float64(max(n, 1)))
		fmt.Printf("pg_cpu_ms_per_lead=%.3f\n", benchkit.Millis(r.PgCPU)/float64(max(n, 1)))
	}
	fmt.Printf("leads=%d\n", n)
	fmt.Printf("warmup_leads=%d\n", r.WarmupN)
	fmt.Printf("leads_per_sec=%.1f\n", rate)
	fmt.Printf("p50_ms=%.3f\n", benchkit.Millis(p50))
	fmt.Printf("p99_ms=%.3f\n", benchkit.Millis(p99))
	fmt.Printf("errors=%d\n", r.Errors)
	fmt.Printf("go_cpu_ms_per_lead=%.3f\n", benchkit.Millis(r.CPU)/float64(max(n, 1)))
}
