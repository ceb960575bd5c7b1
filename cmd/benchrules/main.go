// Command benchrules measures whether one account's send rules cost other
// accounts' capture anything. It starts the real web server in-process on a
// private Postgres schema with -accounts accounts capturing normally and one
// costly account whose enabled send rules cost all that the account's
// budget allows (rule.MaxAccountCost): as many regular-expression rules on
// the message as the budget holds, each as large as its share and at most
// rule.MaxRegexSize, all of them failing to match so each reads its whole
// rule.MaxFieldRead bytes, and leads with -message-bytes (20 KB) messages.
//
// -c clients post varied leads to the other accounts (benchkit.CaptureLoad,
// spread over their ingest keys) in three windows of -d, each after a
// -warmup: without the costly account's load, with -costly-c clients
// posting to the costly account throughout, and without again. It prints
// the other accounts' rate and latencies in each window, the two windows
// without pooled as the baseline, and the ratio of the rate with the
// costly load to it; the costly account's own rate for context.
//
//	go run ./cmd/benchrules
//
// It is the costly-rules part of `make bench` (.ci/bench-rules), which
// judges the key=value lines it prints (docs/operations.md, "Benchmarks").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrules:", err)
		os.Exit(1)
	}
}

type config struct {
	database     string
	conc         int
	accounts     int
	costlyConc   int
	dur          time.Duration
	warmup       time.Duration
	lead         time.Duration
	history      int
	messageBytes int
	keep         bool
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.conc, "c", 16, "concurrent clients posting to the other accounts, spread over them")
	flag.IntVar(&cfg.accounts, "accounts", 4, "other accounts, capturing normally")
	flag.IntVar(&cfg.costlyConc, "costly-c", 4, "concurrent clients posting to the costly account while its load runs")
	flag.DurationVar(&cfg.dur, "d", 10*time.Second, "measured duration of each window")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured warmup before each window")
	flag.DurationVar(&cfg.lead, "lead", 3*time.Second, "how long the costly account's load runs before the other accounts' warmup starts")
	flag.IntVar(&cfg.history, "history", 25_000, "earlier leads each other account holds before the run (benchkit.SeedLeads)")
	flag.IntVar(&cfg.messageBytes, "message-bytes", 20_000, "bytes of each costly lead's message (the API takes up to 20,000)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.Parse()
	if cfg.conc < 1 || cfg.accounts < 1 || cfg.costlyConc < 1 || cfg.dur <= 0 || cfg.warmup < 0 || cfg.lead < 0 || cfg.messageBytes < 1 {
		return errors.New("-c, -accounts, -costly-c and -message-bytes must be at least 1, -d positive, -warmup and -lead not negative")
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchrules", cfg.keep)
	if err != nil {
		return err
	}
	defer done()

	var secrets []string
	for i := range cfg.accounts {
		acc, secret, err := captureAccount(ctx, st, fmt.Sprintf("bench-%d", i+1), fmt.Sprintf("Bench %d", i+1))
		if err != nil {
			return err
		}
		if err := benchkit.SeedLeads(ctx, dbURL, acc.ID, cfg.history); err != nil {
			return fmt.Errorf("seed history: %w", err)
		}
		secrets = append(secrets, secret)
	}
	costlyAcc, costlySecret, err := captureAccount(ctx, st, "costly", "Costly rules")
	if err != nil {
		return err
	}
	costly, err := costlyRules(ctx, st, costlyAcc)
	if err != nil {
		return err
	}
	fmt.Printf("rules: the costly account's regex rules on the message: %s; together %d of the %d units per lead its budget allows\n",
		describe(costly), costly.total, costly.max)

	handler := web.New(web.Options{
		Store:           st,
		Log:             slog.New(slog.DiscardHandler),
		SessionHashKey:  benchkit.RandomKey(),
		SessionBlockKey: benchkit.RandomKey(),
	})
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
	endpoint := "http://" + ln.Addr().String() + "/api/v1/leads"

	pgPID := benchkit.PostgresPID(ctx, dbURL)
	others := &benchkit.CaptureLoad{Endpoint: endpoint, Secrets: secrets, Clients: cfg.conc, PostgresPID: pgPID}
	defer others.Close()
	costlyLoad := &benchkit.CaptureLoad{Endpoint: endpoint, Secret: costlySecret, Clients: cfg.costlyConc,
		Message: costlyMessage(cfg.messageBytes), NoJunk: true}
	defer costlyLoad.Close()

	before, err := window(others, cfg, "without the costly account (before)")
	if err != nil {
		return err
	}
	with, costlyRun, err := withCostly(others, costlyLoad, cfg)
	if err != nil {
		return err
	}
	after, err := window(others, cfg, "without the costly account (after)")
	if err != nil {
		return err
	}

	without := pooled(before, after)
	printKV("before", before)
	printKV("after", after)
	printKV("without", without)
	printKV("with", with)
	printKV("costly", costlyRun)
	fmt.Printf("costly_account_cost=%d\n", costly.total)
	fmt.Printf("max_account_cost=%d\n", costly.max)
	fmt.Printf("rate_ratio=%.3f\n", with.rate/max(without.rate, 1e-9))
	fmt.Printf("p99_ratio=%.3f\n", with.p99/max(without.p99, 1e-9))
	return nil
}

// captureAccount creates an account as benchcapture's, with one dry-run
// dataset (and its default rule) and an ingest key.
func captureAccount(ctx context.Context, st *store.Store, slug, name string) (models.Account, string, error) {
	acc, err := benchkit.NamedAccount(ctx, st, slug, name)
	if err != nil {
		return acc, "", err
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Bench pixel", PixelID: fmt.Sprintf("1%014d", acc.ID),
		Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := st.CreateDataset(ctx, &d); err != nil {
		return acc, "", err
	}
	_, secret, err := st.CreateIngestKey(ctx, acc.ID, "bench")
	return acc, secret, err
}

// figures is what the clients measured in one window.
type figures struct {
	leads  int
	window time.Duration
	rate   float64
	lat    []time.Duration // sorted
	p50    float64         // ms
	p99    float64
	pmax   float64
	errors int64
	junk   int64
	// goCPU is this process's CPU in the window: the server and every
	// client, the costly account's included.
	goCPU time.Duration
}

func figuresOf(r *benchkit.CaptureRun) figures {
	f := figures{leads: len(r.Lat), window: r.Window, lat: r.Lat, errors: r.Errors, junk: r.Junk, goCPU: r.CPU}
	slices.Sort(f.lat)
	f.rate = float64(f.leads) / r.Window.Seconds()
	f.p50 = benchkit.Millis(benchkit.Percentile(f.lat, 0.50))
	f.p99 = benchkit.Millis(benchkit.Percentile(f.lat, 0.99))
	f.pmax = benchkit.Millis(benchkit.Percentile(f.lat, 1))
	return f
}

// pooled is the two windows as one: their leads over their time, the
// percentiles of their latencies together.
func pooled(a, b figures) figures {
	lat := slices.Concat(a.lat, b.lat)
	return figuresOf(&benchkit.CaptureRun{Window: a.window + b.window, Lat: lat, Errors: a.errors + b.errors, Junk: a.junk + b.junk,
		CPU: a.goCPU + b.goCPU})
}

// window runs the other accounts' clients for one window, alone.
func window(others *benchkit.CaptureLoad, cfg config, what string) (figures, error) {
	r, err := others.Run(cfg.warmup, cfg.dur, "")
	if err != nil {
		return figures{}, err
	}
	f := figuresOf(r)
	report("others, "+what, f)
	if r.Errors > 0 {
		return f, fmt.Errorf("%s: %d requests failed; first: %s", what, r.Errors, r.FirstErr)
	}
	return f, nil
}

// withCostly runs the costly account's clients from cfg.lead before the
// other accounts' warmup until after their window, and the other accounts'
// clients for one window meanwhile.
func withCostly(others, costly *benchkit.CaptureLoad, cfg config) (figures, figures, error) {
	type result struct {
		r   *benchkit.CaptureRun
		err error
	}
	costlyDone := make(chan result, 1)
	go func() {
		r, err := costly.Run(cfg.lead, cfg.warmup+cfg.dur, "")
		costlyDone <- result{r, err}
	}()
	time.Sleep(cfg.lead)
	with, err := window(others, cfg, "with the costly account's load")
	c := <-costlyDone
	if err != nil {
		return with, figures{}, err
	}
	if c.err != nil {
		return with, figures{}, c.err
	}
	cf := figuresOf(c.r)
	report("the costly account itself", cf)
	if c.r.Errors > 0 {
		return with, cf, fmt.Errorf("costly account: %d requests failed; first: %s", c.r.Errors, c.r.FirstErr)
	}
	return with, cf, nil
}

func report(who string, f figures) {
	fmt.Printf("capture: %s: %d leads in %s (%.0f leads/s, %d junk), p50 %.2fms, p99 %.2fms, max %.2fms, errors %d, Go CPU %.2fs\n",
		who, f.leads, f.window.Round(time.Millisecond), f.rate, f.junk, f.p50, f.p99, f.pmax, f.errors, f.goCPU.Seconds())
}

func printKV(prefix string, f figures) {
	fmt.Printf("%s_leads=%d\n", prefix, f.leads)
	fmt.Printf("%s_leads_per_sec=%.1f\n", prefix, f.rate)
	fmt.Printf("%s_p50_ms=%.3f\n", prefix, f.p50)
	fmt.Printf("%s_p99_ms=%.3f\n", prefix, f.p99)
	fmt.Printf("%s_errors=%d\n", prefix, f.errors)
}

// costlyMessage is a message of n bytes that keeps every costly pattern
// busy over all it reads and never lets it match: all "a", no "x".
func costlyMessage(n int) string { return strings.Repeat("a", n) }
