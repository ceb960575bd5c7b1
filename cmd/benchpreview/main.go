// Command benchpreview measures the preview budget (docs/operations.md,
// "Benchmarks"): the live preview of a send rule over the 200,000 leads of
// the last 7 days takes at most 1.5 times what Postgres needs just to
// stream those rows out.
//
// It creates a private schema in a Postgres database and gives one account
// -leads leads captured over the last 7 days, as capture stores them
// (varied contacts, match keys, custom fields, UTM parameters in the page
// URL, one lead in 10 junk, one in 50 partial), with one INSERT ... SELECT.
// Then, -runs times in turn, it times:
//
//   - the baseline: COPY (SELECT store.RecentLeadColumns FROM leads WHERE
//     account_id = ... AND created_at >= ...) TO STDOUT, read by pgx and
//     thrown away;
//   - the preview of a five-condition rule as the rule page computes it:
//     rule.CompileRule with the account's custom fields, then
//     store.EachRecentLead into a rule.Preview.
//
// It prints the median of each, the judged ratio and PASS or FAIL, as
// key=value lines too, and exits non-zero when the budget is missed.
//
// It is run by .ci/bench-preview (make bench).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// budget is the preview budget of docs/operations.md: the preview's time
// over the baseline's.
const budget = 1.5

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchpreview:", err)
		os.Exit(1)
	}
}

type config struct {
	database   string
	leads      int
	runs       int
	keep       bool
	cpuprofile string
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.leads, "leads", 200_000, "leads captured in the last 7 days")
	flag.IntVar(&cfg.runs, "runs", 5, "timed runs of each, in turn; the medians are compared")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the timed previews to this file")
	flag.Parse()
	if cfg.leads < 1 || cfg.runs < 1 {
		return errors.New("-leads and -runs must be positive")
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchpreview", cfg.keep)
	if err != nil {
		return err
	}
	defer done()
	acc, err := benchkit.Account(ctx, st)
	if err != nil {
		return err
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Bench pixel", PixelID: "100000000000001", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := st.CreateDataset(ctx, &d); err != nil {
		return err
	}
	start := time.Now()
	if err := loadLeads(ctx, dbURL, acc.ID, cfg.leads); err != nil {
		return fmt.Errorf("load leads: %w", err)
	}
	fmt.Fprintf(os.Stderr, "benchpreview: %d leads loaded in %s\n", cfg.leads, time.Since(start).Round(time.Second))

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)

	now := time.Now()
	since := now.Add(-decide.RecentWindow)
	judged, err := createRule(ctx, st, d, "Qualified", fiveConditions)
	if err != nil {
		return err
	}

	pgPID := benchkit.PostgresPID(ctx, dbURL)
	var copies []time.Duration
	var m measure
	var rows int64
	var prof *os.File
	// One unmeasured round of each warms the caches.
	for i := -1; i < cfg.runs; i++ {
		t0 := time.Now()
		tag, err := conn.PgConn().CopyTo(ctx, io.Discard, fmt.Sprintf(
			"COPY (SELECT %s FROM leads WHERE account_id = %d AND created_at >= '%s') TO STDOUT",
			store.RecentLeadColumns, acc.ID, since.UTC().Format(time.RFC3339Nano)))
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		c := time.Since(t0)
		rows = tag.RowsAffected()

		if i == 0 && cfg.cpuprofile != "" {
			if prof, err = os.Create(cfg.cpuprofile); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				return err
			}
		}
		if err := m.run(ctx, st, judged, now, pgPID, i >= 0); err != nil {
			return err
		}
		if i >= 0 {
			copies = append(copies, c)
			fmt.Fprintf(os.Stderr, "benchpreview: run %d: copy %.0f ms; preview %.0f ms\n",
				i+1, benchkit.Millis(c), benchkit.Millis(m.wall[i]))
		}
	}
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
		fmt.Fprintf(os.Stderr, "benchpreview: CPU profile of the previews in %s\n", cfg.cpuprofile)
	}
	if int64(m.res.Leads) != rows {
		return fmt.Errorf("the preview read %d leads, COPY %d", m.res.Leads, rows)
	}

	c := median(copies)
	ratio := float64(median(m.wall)) / float64(c)
	verdict := "PASS"
	if ratio > budget {
		verdict = "FAIL"
	}
	fmt.Printf("leads in the last 7 days: %d\n", rows)
	fmt.Printf("%-28s %8.1f ms (median of %d)\n", "COPY to the client:", benchkit.Millis(c), len(copies))
	m.print("preview:", c, pgPID)
	fmt.Printf("%-28s %8.2f (budget %.1f) %s\n", "ratio:", ratio, budget, verdict)
	fmt.Printf("preview_leads=%d preview_matched=%d copy_ms=%.1f preview_ms=%.1f ratio=%.3f budget=%.1f result=%s\n",
		rows, m.res.Matched, benchkit.Millis(c), benchkit.Millis(median(m.wall)), ratio, budget, verdict)
	if verdict != "PASS" {
		return fmt.Errorf("the preview took %.2f times the COPY; the budget is %.1f", ratio, budget)
	}
	return nil
}

// fiveConditions is the judged rule, of the kind marketers write: each
// condition reads a different part of a lead, the email, the page URL, a
// custom field, the phone's country and the message.
var fiveConditions = []rule.Condition{
	{Field: "email_is_free", MatchType: rule.Equals, Pattern: "false"},
	{Field: "utm_source", MatchType: rule.InList, Pattern: "facebook, instagram, fb, ig"},
	{Field: "fields.budget", MatchType: rule.GT, Pattern: "5000"},
	{Field: "phone_country", MatchType: rule.InList, Pattern: "US, CA"},
	{Field: "message", MatchType: rule.NotContains, Pattern: "seo services"},
}

func createRule(ctx context.Context, st *store.Store, d models.Dataset, name string, conds []rule.Condition) (models.SendRule, error) {
	r := models.SendRule{AccountID: d.AccountID, DatasetID: d.ID, Name: name, Mode: string(rule.AutomaticMatch),
		EventName: "QualifiedLead", Combinator: string(rule.And), Conditions: mustJSON(conds), Enabled: true}
	return r, st.CreateSendRule(ctx, &r, nil)
}

// measure is the timed previews of one rule.
type measure struct {
	wall, cpu, pg []time.Duration // each run's time, this process's and Postgres's CPU time
	res           rule.PreviewResult
}

func (m *measure) run(ctx context.Context, st *store.Store, r models.SendRule, now time.Time, pgPID int, keep bool) error {
	cpu0, pg0, t0 := benchkit.CPUTime(), pgCPU(pgPID), time.Now()
	res, err := preview(ctx, st, r, now)
	if err != nil {
		return fmt.Errorf("preview of %s: %w", r.Name, err)
	}
	wall, cpu, pg := time.Since(t0), benchkit.CPUTime()-cpu0, pgCPU(pgPID)-pg0
	if keep {
		m.wall, m.cpu, m.pg, m.res = append(m.wall, wall), append(m.cpu, cpu), append(m.pg, pg), res
	}
	return nil
}

func (m *measure) print(label string, copyTime time.Duration, pgPID int) {
	p := median(m.wall)
	fmt.Printf("%-28s %8.1f ms (median of %d), %.2f us a lead, %.2f times the COPY; matched %d, %d sendable now\n",
		label, benchkit.Millis(p), len(m.wall), float64(p)/float64(time.Microsecond)/float64(max(m.res.Leads, 1)),
		float64(p)/float64(copyTime), m.res.Matched, m.res.Sendable)
	if pgPID != 0 {
		fmt.Printf("%-28s %8.1f ms in this process, %.1f ms in Postgres (medians)\n", "    CPU:",
			benchkit.Millis(median(m.cpu)), benchkit.Millis(median(m.pg)))
	}
}

// preview is what the rule page does for its live preview: compile the
// rule against the account's custom fields and count every lead of the
// last 7 days with decide.Preview, sendable ones included.
func preview(ctx context.Context, st *store.Store, r models.SendRule, now time.Time) (rule.PreviewResult, error) {
	names, err := st.CustomFieldNames(ctx, r.AccountID, now.Add(-30*24*time.Hour))
	if err != nil {
		return rule.PreviewResult{}, err
	}
	m, problems := rule.CompileRule(r, rule.Schema{Custom: names})
	if len(problems) > 0 {
		return rule.PreviewResult{}, fmt.Errorf("the rule does not compile: %v", problems)
	}
	acc, err := st.Account(ctx, r.AccountID)
	if err != nil {
		return rule.PreviewResult{}, err
	}
	datasets, err := st.Datasets(ctx, r.AccountID)
	if err != nil {
		return rule.PreviewResult{}, err
	}
	return decide.Preview(ctx, st, acc, datasets, r, m, now)
}

// pgCPU is the local Postgres's CPU time so far; 0 when unknown.
func pgCPU(pid int) time.Duration {
	d, _ := benchkit.PostgresCPU(pid)
	return d
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
