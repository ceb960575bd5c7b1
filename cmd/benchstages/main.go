// Command benchstages measures the stage budgets of docs/operations.md
// ("Benchmarks") on one Postgres, which make bench gives it durable (.ci/durable-pg):
//
//   - The stage API: -changes (10,000) stage changes posted to
//     POST /api/v1/stages of the real web server, in-process, from -c (16)
//     keep-alive clients, into an account with the template's stage
//     mappings on a dry_run dataset and -leads (100,000) leads to find
//     them by (their external_id, or for one change in five their email).
//     The changes are qualified, booked and won (with a value and a
//     currency), each of another lead; half carry a change_id. Its rate
//     and p99 are compared with pgbench's single-row INSERT at the same
//     concurrency (benchkit.PgbenchInsert, .ci/bench's baseline), run just
//     before. Budget: at least -budget (0.3) of pgbench's rate, p99 under
//     -p99 (50 ms).
//   - CRM webhooks: -hook-deliveries (10,000) signed deliveries of a
//     generic CRM connection posted to POST /hooks/generic/<token> from -c
//     clients, into another account like the stage API's, served as
//     leadsignal serve serves them (the CRM worker, internal/crmsync,
//     running beside the server). Each is one stage change of another lead
//     by its email, as the stage API's run has them, every one with a
//     change_id. The answers' rate and p99 have the stage API's budget
//     against pgbench run again just before. Then the time from the first
//     post until every delivery is done (its change recorded and its
//     events queued) is reported as a rate against the stage API's; it has
//     no budget, but a delivery not done fails the run.
//   - The CRM wake: what a new lead costs while deliveries wait for other
//     leads. -wake-leads (400) new leads are captured through
//     POST /api/v1/leads, one every -wake-every (25 ms), while the CRM
//     worker looks for new leads and drains every -wake-idle (250 ms), as
//     Run does; first with -wake-small (1,000) deliveries waiting, then
//     with -wake-large (100,000), over as many generic connections as the
//     waiting limit needs, each with its lookup key as the worker leaves
//     it. Its figures: the new leads' capture p99, the worker's time per
//     new lead and the CPU per new lead (Go and Postgres). Budget: each of
//     the large run at most -wake-budget (1.5) times the small run's, and
//     no delivery woken.
//   - The CSV upload: a -rows (50,000) row CSV of stage changes, each of
//     another of the account's -rows leads, through the real web server
//     over HTTP, from the request that sends the file to the last event
//     queued, twice, each into an account of its own: as a person does on
//     the Stages page (the upload form's POST, the preview's pass in the
//     server's background, the apply button, the apply's pass) and as
//     automation does (POST /api/v1/stage-uploads, which answers the
//     preview, its apply, GET until done); -chunk rows at a time. Both
//     passes count: a person sees the preview before applying. Against
//     COPY of exactly the rows the page's upload wrote (its stage changes,
//     events and queue rows) into the same tables, with their indexes,
//     foreign keys and triggers, in one transaction, after both uploads
//     (the median of -copies runs). Budget: each upload at most
//     -upload-budget (3) times the COPY.
//
// It prints both figures, their baselines and ratios, as key=value lines
// too, and exits non-zero when a budget is missed or a change failed.
// -cpuprofile FILE writes a CPU profile of the stage API run to FILE, of
// the webhooks (from the first post until all are done) to FILE.hooks and
// of the upload to FILE.upload; -pprof ADDR serves net/http/pprof while it
// runs. When the Postgres has pg_stat_statements loaded, the statements
// that took most of each measured part are printed too.
//
// It is run by .ci/bench-stages (make bench).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // -pprof serves it
	"os"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchstages:", err)
		os.Exit(1)
	}
}

type config struct {
	database   string
	only       string
	keep       bool
	cpuprofile string
	pprof      string

	// The stage API.
	conc     int
	threads  int
	pgbenchT time.Duration
	changes  int
	warmup   int
	leads    int
	budget   float64
	p99      time.Duration

	// CRM webhooks.
	hookDeliveries int
	hookWait       time.Duration

	// The wake of deliveries by new leads.
	wakeSmall, wakeLarge int
	wakeSeed             int
	wakeLeads            int
	wakeEvery, wakeIdle  time.Duration
	wakeBudget           float64

	// The upload.
	rows         int
	chunk        int
	copies       int
	uploadBudget float64
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.StringVar(&cfg.only, "only", "", "run one part only: api, hooks, wake or upload")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the stage API run (server and clients) to this file, of the webhooks to this file with .hooks added and of the upload with .upload added")
	flag.StringVar(&cfg.pprof, "pprof", "", "serve net/http/pprof on this address (like 127.0.0.1:6060) while running")
	flag.IntVar(&cfg.conc, "c", 16, "stage API: concurrent clients, and pgbench's")
	flag.IntVar(&cfg.threads, "j", 2, "pgbench's threads")
	flag.DurationVar(&cfg.pgbenchT, "pgbench-t", 10*time.Second, "pgbench's duration")
	flag.IntVar(&cfg.changes, "changes", 10_000, "stage API: measured stage changes")
	flag.IntVar(&cfg.warmup, "warmup", 500, "stage API: unmeasured stage changes first")
	flag.IntVar(&cfg.leads, "leads", 100_000, "stage API: leads in the account (each measured change is of another lead)")
	flag.Float64Var(&cfg.budget, "budget", 0.3, "stage API and webhooks: least rate over pgbench's")
	flag.DurationVar(&cfg.p99, "p99", 50*time.Millisecond, "stage API and webhooks: p99 under this")
	flag.IntVar(&cfg.hookDeliveries, "hook-deliveries", 10_000, "webhooks: measured deliveries, one stage change each")
	flag.DurationVar(&cfg.hookWait, "hook-wait", 2*time.Minute, "webhooks: longest wait, after the last answer, for every delivery to be done")
	flag.IntVar(&cfg.wakeSmall, "wake-small", 1000, "wake: deliveries waiting for other leads in the first run")
	flag.IntVar(&cfg.wakeLarge, "wake-large", 100_000, "wake: deliveries waiting for other leads in the second run")
	flag.IntVar(&cfg.wakeSeed, "wake-seed", 10_000, "wake: leads in the account before the runs")
	flag.IntVar(&cfg.wakeLeads, "wake-leads", 400, "wake: measured new leads of each run")
	flag.DurationVar(&cfg.wakeEvery, "wake-every", 25*time.Millisecond, "wake: one new lead every")
	flag.DurationVar(&cfg.wakeIdle, "wake-idle", 250*time.Millisecond, "wake: how often the worker looks for new leads and drains")
	flag.Float64Var(&cfg.wakeBudget, "wake-budget", 1.5, "wake: most the large run's capture p99, worker time and CPU per new lead over the small run's")
	flag.IntVar(&cfg.rows, "rows", 50_000, "upload: rows of the CSV file, each of another lead")
	flag.IntVar(&cfg.chunk, "chunk", 1000, "upload: rows a pass works at a time")
	flag.IntVar(&cfg.copies, "copies", 3, "upload: timed COPY runs, the median is the baseline")
	flag.Float64Var(&cfg.uploadBudget, "upload-budget", 3, "upload: most time over the COPY's")
	flag.Parse()
	if cfg.conc < 1 || cfg.threads < 1 || cfg.changes < 1 || cfg.hookDeliveries < 1 || cfg.warmup < 0 || cfg.rows < 1 || cfg.chunk < 1 || cfg.copies < 1 {
		return errors.New("-c, -j, -changes, -hook-deliveries, -rows, -chunk and -copies must be positive, -warmup not negative")
	}
	if max(cfg.changes, cfg.hookDeliveries)+cfg.warmup > cfg.leads {
		return errors.New("-leads must be at least -changes (and -hook-deliveries) plus -warmup: each change is of another lead")
	}
	if cfg.only != "" && cfg.only != "api" && cfg.only != "hooks" && cfg.only != "wake" && cfg.only != "upload" {
		return errors.New("-only is api, hooks, wake or upload")
	}
	if cfg.wakeSmall < 1 || cfg.wakeLarge < cfg.wakeSmall || cfg.wakeLeads < 1 || cfg.wakeEvery <= 0 || cfg.wakeIdle <= 0 {
		return errors.New("-wake-small and -wake-leads must be positive, -wake-large at least -wake-small, -wake-every and -wake-idle positive")
	}
	if cfg.pprof != "" {
		ln, err := net.Listen("tcp", cfg.pprof)
		if err != nil {
			return fmt.Errorf("pprof: %w", err)
		}
		fmt.Fprintf(os.Stderr, "benchstages: pprof on http://%s/debug/pprof/\n", ln.Addr())
		go func() { _ = http.Serve(ln, http.DefaultServeMux) }()
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchstages", cfg.keep)
	if err != nil {
		return err
	}
	defer done()
	b := &bench{cfg: cfg, st: st, dbURL: dbURL, pgPID: benchkit.PostgresPID(ctx, dbURL)}
	b.statements = statementsAvailable(ctx, dbURL)

	var failed []string
	if cfg.only == "" || cfg.only == "api" {
		ok, err := b.api(ctx)
		if err != nil {
			return fmt.Errorf("stage API: %w", err)
		}
		if !ok {
			failed = append(failed, "stage API")
		}
	}
	if cfg.only == "" || cfg.only == "hooks" {
		ok, err := b.hooks(ctx)
		if err != nil {
			return fmt.Errorf("CRM webhooks: %w", err)
		}
		if !ok {
			failed = append(failed, "CRM webhooks")
		}
	}
	if cfg.only == "" || cfg.only == "wake" {
		ok, err := b.wake(ctx)
		if err != nil {
			return fmt.Errorf("CRM wake: %w", err)
		}
		if !ok {
			failed = append(failed, "CRM wake")
		}
	}
	if cfg.only == "" || cfg.only == "upload" {
		ok, err := b.upload(ctx)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		if !ok {
			failed = append(failed, "CSV upload")
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("budget missed: %v", failed)
	}
	return nil
}

// bench is one run's store and settings.
type bench struct {
	cfg        config
	st         *store.Store
	dbURL      string
	pgPID      int
	statements bool
	// apiRate is the stage API's rate (changes/s), once measured: the
	// webhooks' queueing is compared with it.
	apiRate float64
}

// stagesAccount creates an account owned by user ownerID (0 for none)
// with a dry_run dataset, the template's stage mappings on it and n leads
// (benchkit.SeedLeads: external ids hist-1 to hist-n, emails
// lead1@example.com to leadn@example.com).
func (b *bench) stagesAccount(ctx context.Context, slug string, n int, ownerID int64) (models.Account, error) {
	acc, err := b.st.CreateAccount(ctx, models.Account{Slug: slug, Name: "Bench " + slug,
		Timezone: "America/New_York", DefaultCountry: "US", Currency: "USD"}, ownerID)
	if err != nil {
		return acc, err
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Bench pixel", PixelID: "100000000000001", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := b.st.CreateDataset(ctx, &d); err != nil {
		return acc, err
	}
	if _, err := b.st.StartStageTemplate(ctx, acc.ID, d.ID, nil); err != nil {
		return acc, err
	}
	start := time.Now()
	if err := benchkit.SeedLeads(ctx, b.dbURL, acc.ID, n); err != nil {
		return acc, fmt.Errorf("seed leads: %w", err)
	}
	fmt.Fprintf(os.Stderr, "benchstages: %d leads with their events loaded in %s (account %s)\n", n, time.Since(start).Round(time.Second), slug)
	return acc, nil
}

// discard is a logger that drops everything.
var discard = slog.New(slog.DiscardHandler)

// verdict is PASS or FAIL.
func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
