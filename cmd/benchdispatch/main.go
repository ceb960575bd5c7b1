// Command benchdispatch measures the dispatch path end to end: it queues a
// backlog of events on a private Postgres schema, drains it with the real
// dispatch.Dispatcher to an in-process fake of the destination's platform,
// and compares the rate with a plain client posting ready-made batches of
// the platform's maximum to the same fake (docs/operations.md,
// "Benchmarks": at least half as fast).
//
//	go run ./cmd/benchdispatch -events 100000
//	go run ./cmd/benchdispatch -kind google -events 200000
//
// -kind picks the destination: meta (the default: a fake Graph API and
// capi.Client's 1000-event batches), tiktok, pinterest or google (the
// light fakes of benchkit.FakePlatform and the platform's own sender of
// platform.Senders, in batches of platform.MaxBatch). The events are
// queued with the payloads capture prepares for that platform
// (decide.Event, which builds them with platform.Prepare and stamps them
// with platform.Stamp), or without with -prepared=false.
//
// It is the dispatch half of `make bench` (.ci/bench-dispatch). Loading the
// backlog is done in SQL and Go and is not measured.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchdispatch:", err)
		os.Exit(1)
	}
}

type config struct {
	database    string
	kind        models.Kind
	events      int
	dispatchers int
	baseline    time.Duration
	slices      int
	sliceLen    time.Duration
	fake        string
	cpuprofile  string
	memprofile  string
	budget      float64
	probe       int
	keep        bool
	loadOnly    bool
	prepared    bool
}

const (
	pixelID   = "123456789012345"
	fakeToken = "bench-token-EAAB"
)

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	kind := flag.String("kind", string(models.KindMeta), "the destination's platform: meta, tiktok, pinterest or google")
	flag.IntVar(&cfg.events, "events", 1000000, "events in the backlog (one website lead each)")
	flag.IntVar(&cfg.dispatchers, "dispatchers", 1, "concurrent dispatchers draining the backlog; the baseline uses as many clients")
	flag.DurationVar(&cfg.baseline, "baseline", 5*time.Second, "how long the plain client posts ready-made batches before and after the drain")
	flag.IntVar(&cfg.slices, "slices", 8, "how many times the drain pauses, evenly over its events, for a short baseline run (0: never)")
	flag.DurationVar(&cfg.sliceLen, "slice", time.Second, "how long each of those baseline runs lasts")
	flag.StringVar(&cfg.fake, "fake", "full", "Meta's fake Graph server: full (decodes every event as capitest does and checks it) or light (counts the data array); the other kinds' fakes are light")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the drain to this file")
	flag.StringVar(&cfg.memprofile, "memprofile", "", "write the allocations of the run (pprof allocs, mostly the drain's) to this file")
	flag.Float64Var(&cfg.budget, "budget", 0.5, "the least drain rate / baseline rate that passes")
	flag.IntVar(&cfg.probe, "probe", 3, "before the drain, time each store call of this many batches in rolled-back transactions (0: none)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.BoolVar(&cfg.prepared, "prepared", true, "queue the events with the payloads capture prepares; false: without, as after a settings change, so the dispatcher builds each from its lead")
	flag.BoolVar(&cfg.loadOnly, "loadonly", false, "load the backlog, keep the schema and stop (to study the queries by hand)")
	flag.Parse()
	cfg.kind = models.Kind(*kind)
	if !platform.Supported(cfg.kind) {
		return fmt.Errorf("-kind %q: want one of %v", *kind, models.Kinds)
	}
	if cfg.kind != models.KindMeta {
		// benchkit.FakePlatform counts the events of a batch; it has no
		// full mode.
		fakeSet := false
		flag.Visit(func(f *flag.Flag) { fakeSet = fakeSet || f.Name == "fake" })
		if fakeSet && cfg.fake != "light" {
			return fmt.Errorf("-fake %s: the fake of %s is light only", cfg.fake, platform.Name(cfg.kind))
		}
		cfg.fake = "light"
	}
	maxBatch := platform.MaxBatch(cfg.kind)
	if cfg.events < maxBatch || cfg.dispatchers < 1 || cfg.baseline <= 0 {
		return fmt.Errorf("-events must be at least %d, -dispatchers at least 1 and -baseline positive", maxBatch)
	}
	if cfg.loadOnly {
		cfg.keep = true
	}
	if cfg.fake != "full" && cfg.fake != "light" {
		return errors.New("-fake must be full or light")
	}
	sk := newSink(cfg.kind, cfg.fake == "light")

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchdispatch", cfg.keep)
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
	ds, err := sk.destination(ctx, st, box, acc)
	if err != nil {
		return err
	}

	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	logf("loading %d leads and events for a %s destination (not measured)", cfg.events, platform.Name(cfg.kind))
	t0 := time.Now()
	if err := load(ctx, dbURL, acc, ds, cfg.events, cfg.prepared); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	logf("loaded in %s", time.Since(t0).Round(time.Millisecond))
	if cfg.loadOnly {
		return nil
	}

	// The platform's fake, in this process.
	srv := &http.Server{Handler: sk.handler(), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if err := sk.connect("http://"+ln.Addr().String(), ds, box, cfg.dispatchers); err != nil {
		return err
	}
	defer sk.close()

	// The first batch the dispatcher will claim, built the way it builds it.
	batch, buildTime, err := firstBatch(ctx, st, acc.ID, ds.ID)
	if err != nil {
		return fmt.Errorf("build the baseline batch: %w", err)
	}
	size := 0
	for _, p := range batch {
		size += len(p)
	}

	logf("baseline: %d client(s) posting ready-made %d-event batches (%d KB) for %s", cfg.dispatchers, len(batch), size>>10, cfg.baseline)
	base, err := sk.baseline(batch, cfg.dispatchers, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	logf("baseline: %.0f events/s (%d requests)", base.rate, base.requests)

	var probes []probeResult
	if cfg.probe > 0 {
		probes, err = probe(ctx, st, acc.ID, ds.ID, maxBatch, cfg.probe)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
	}

	rssBefore := benchkit.ProcStatusKB("VmHWM")
	// The load and the baseline leave garbage and heap the drain does not need.
	debug.FreeOSMemory()
	benchkit.ResetPeakRSS()
	sk.reset()
	fkReceived, fkRefused := sk.counts()
	// The drain pauses for short baseline runs now and then, so that the
	// baseline also sees the machine as the drain saw it.
	// What the fake takes during a slice is the baseline's: the drain's
	// counts leave it out (the drain waits meanwhile).
	slice := func() (baselineResult, error) {
		got, refused := fkReceived.Load(), fkRefused.Load()
		r, err := sk.baseline(batch, cfg.dispatchers, cfg.sliceLen)
		fkReceived.Store(got)
		fkRefused.Store(refused)
		return r, err
	}
	dr, err := drain(ctx, cfg, st, box, sk, slice)
	if err != nil {
		return err
	}
	dr.peakRSSKB = benchkit.ProcStatusKB("VmHWM")
	received, refused := fkReceived.Load(), fkRefused.Load()
	if cfg.kind == models.KindGoogle {
		// The access token is exchanged once and cached: the first
		// baseline's, unless it ran out.
		logf("OAuth token exchanges during the drain: %d", sk.fake.Exchanges.Load())
	}

	// Again after the drain: other load on the machine may have changed, so
	// the budget uses every run's events over every run's time.
	logf("baseline again after the drain")
	after, err := sk.baseline(batch, cfg.dispatchers, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline after: %w", err)
	}
	logf("baseline after: %.0f events/s (%d requests)", after.rate, after.requests)
	base.before, base.after = base.rate, after.rate
	for _, r := range dr.slices {
		base.slices = append(base.slices, r.rate)
	}
	for _, r := range append(dr.slices, after) {
		base.requests += r.requests
		base.events += r.events
		base.seconds += r.seconds
	}
	base.rate = float64(base.events) / base.seconds

	// Everything must have gone out exactly once.
	counts, err := statusCounts(ctx, db)
	if err != nil {
		return err
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM send_requests").Scan(&rows); err != nil {
		return err
	}

	printSummary(cfg, dr, base, probes, buildTime, len(batch), size, rssBefore, counts, rows, received, refused)
	if counts[models.EventSent] != cfg.events || dr.events != cfg.events || int(received) != cfg.events {
		return fmt.Errorf("the drain sent %d events, the fake received %d, the database has %v; want %d sent",
			dr.events, received, counts, cfg.events)
	}
	if dr.failedSends > 0 {
		return fmt.Errorf("%d requests failed", dr.failedSends)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchdispatch: "+format+"\n", args...)
}
