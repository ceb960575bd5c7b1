// Command benchpages measures the pages budget (docs/operations.md,
// "Benchmarks"): each page answers with a p95 under 100 ms when the account
// holds a million leads (and the user 500 accounts, for the agency
// overview), and the server stays under 150 MB of RSS.
//
// It creates a private schema in a Postgres database and gives a user
// -accounts accounts (seed.go): one with -leads leads of the last 30 days
// with their events (internal/benchkit), stage changes with their events
// and sequences, and the others, in other time zones, -agency-leads leads
// each. It serves the real web handler on a loopback port in this process,
// signs the user in through the login form, and has -c clients request the
// pages in turn for -d: the big account's Overview (as it opens, filtered
// to a campaign, over 90 days, a CSV), its lists and the agency overview.
// It prints each page's p50/p95/max, the p95 over all requests and the
// process's peak RSS, as key=value lines too, and exits non-zero when a
// page's p95 or the RSS misses the budget or a request failed.
//
// With -keep the seeded schema stays; -schema measures such a schema again
// (migrated to the version built) without the minutes of seeding, so that
// a change is measured on the data its baseline was.
//
// The server and the clients share the process, so the peak RSS is an
// upper bound for the server's.
//
// It is run by .ci/bench-pages (make bench).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

// The pages budget (docs/operations.md, "Benchmarks").
const (
	budgetP95 = 100 * time.Millisecond
	budgetRSS = 150 // MB
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchpages:", err)
		os.Exit(1)
	}
}

type config struct {
	database string
	leads    int
	conc     int
	dur      time.Duration
	keep     bool
	// schema, when set, names a schema kept by an earlier run (-keep) to
	// measure again instead of seeding a new one.
	schema string
	// accounts is how many accounts the user is a member of: the big one
	// and accounts-1 with agencyLeads leads each.
	accounts    int
	agencyLeads int
	// cpuprofile, when set, is the file of a CPU profile of the measured
	// requests (server and clients share the process).
	cpuprofile string
	// only, when set, keeps the pages whose name it matches (to profile
	// one page); the budget is then judged on those alone.
	only string
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.leads, "leads", 1_000_000, "leads in the account")
	flag.IntVar(&cfg.conc, "c", 4, "concurrent clients")
	flag.DurationVar(&cfg.dur, "d", 10*time.Second, "measured duration")
	flag.IntVar(&cfg.accounts, "accounts", 500, "accounts of the user, for the agency overview: the big one and the others")
	flag.IntVar(&cfg.agencyLeads, "agency-leads", 400, "leads in each of the other accounts")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the measured requests to this file")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.StringVar(&cfg.schema, "schema", "", "measure the schema an earlier run kept (-keep) again, migrated to this version, instead of seeding a new one (which takes minutes); it is kept")
	flag.StringVar(&cfg.only, "only", "", "measure only the pages whose name this regular expression matches, e.g. 'agency|send log'")
	flag.Parse()
	only, err := regexp.Compile(cfg.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	if cfg.conc < 1 || cfg.dur <= 0 || cfg.leads < 1 || cfg.accounts < 1 || cfg.agencyLeads < 1 {
		return errors.New("-c, -d, -leads, -accounts and -agency-leads must be positive")
	}

	ctx := context.Background()
	const email, pw = "bench@example.com", "bench-password-1"
	var (
		st    *store.Store
		dbURL string
		sd    seeded
	)
	if cfg.schema != "" {
		if st, dbURL, sd, err = reopen(ctx, cfg.database, cfg.schema); err != nil {
			return err
		}
		defer st.Close()
	} else {
		var done func()
		if st, dbURL, done, err = benchkit.OpenStore(ctx, cfg.database, "benchpages", cfg.keep); err != nil {
			return err
		}
		defer done()
		hash, err := password.Hash(pw)
		if err != nil {
			return err
		}
		u, err := st.CreateUser(ctx, email, hash, false)
		if err != nil {
			return err
		}
		if sd, err = seed(ctx, st, dbURL, u.ID, cfg); err != nil {
			return err
		}
	}
	// serve merges the counts' deltas every few seconds; the seed's are
	// merged once here, and the merge runs beside the measured pages as it
	// does in serve.
	start := time.Now()
	if err := st.CompactCounts(ctx); err != nil {
		return fmt.Errorf("compact counts: %w", err)
	}
	// Loading a million leads in minutes left the counts tables a
	// million merged deltas, dead until autovacuum passes: it would have
	// in the months a real account takes to get there. Their space is
	// given back too (VACUUM FULL): a table whose deltas are merged
	// every few seconds reuses it as it goes, while the load left
	// lead_counts 1,448 pages for 5,772 rows, which the agency
	// overview's join then read in full.
	if err := vacuumCounts(ctx, dbURL); err != nil {
		return fmt.Errorf("vacuum counts: %w", err)
	}
	fmt.Fprintf(os.Stderr, "benchpages: counts merged and vacuumed in %s\n", time.Since(start).Round(time.Millisecond))
	compactCtx, stopCompact := context.WithCancel(ctx)
	defer stopCompact()
	go func() { _ = upkeep.Counts(st, slog.New(slog.DiscardHandler)).Run(compactCtx) }()

	srv := &http.Server{
		Handler: web.New(web.Options{Store: st, Log: slog.New(slog.DiscardHandler),
			SessionHashKey: benchkit.RandomKey(), SessionBlockKey: benchkit.RandomKey()}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	pages, err := pagesOf(ctx, st, sd.account, sd.dataset.ID)
	if err != nil {
		return err
	}
	if pages = slices.DeleteFunc(pages, func(p page) bool { return !only.MatchString(p.name) }); len(pages) == 0 {
		return fmt.Errorf("-only %q matches no page", cfg.only)
	}
	clients := make([]*http.Client, cfg.conc)
	for i := range clients {
		if clients[i], err = signIn(base, email, pw); err != nil {
			return err
		}
	}
	// One unmeasured round warms caches and connections.
	for _, p := range pages {
		if _, err := fetch(clients[0], base+p.path); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	stopProfile, err := benchkit.StartCPUProfile(cfg.cpuprofile)
	if err != nil {
		return err
	}
	res := drive(cfg, clients, base, pages)
	if err := stopProfile(); err != nil {
		return err
	}
	return res.report(pages)
}

// page is a page of the account, by name.
type page struct{ name, path string }

// pagesOf lists what people look at most: the account's Overview, as it
// opens, filtered to a campaign, over 90 days and as a CSV; the leads list
// and its filters, a search, a lead, the send log and its filters, an
// event, the datasets; and the agency overview of all the user's accounts.
func pagesOf(ctx context.Context, st *store.Store, account models.Account, datasetID int64) ([]page, error) {
	leads, err := st.Leads(ctx, account.ID, store.LeadFilter{}, nil, 1)
	if err != nil || len(leads) == 0 {
		return nil, fmt.Errorf("a lead to show: %v", err)
	}
	evs, err := st.Events(ctx, account.ID, store.EventFilter{}, nil, 1)
	if err != nil || len(evs) == 0 {
		return nil, fmt.Errorf("an event to show: %v", err)
	}
	loc, err := time.LoadLocation(account.Timezone)
	if err != nil {
		return nil, err
	}
	today := time.Now().In(loc)
	acc := "/accounts/" + strconv.FormatInt(account.ID, 10)
	return []page{
		{"overview", acc},
		{"overview campaign", acc + "?source=website&campaign=" + campaigns[0]},
		{"overview 90 days", acc + "?from=" + today.AddDate(0, 0, -89).Format("2006-01-02") + "&to=" + today.Format("2006-01-02")},
		{"overview csv funnel", acc + "?csv=funnel"},
		{"agency overview", "/accounts"},
		{"leads", acc + "/leads"},
		{"leads junk", acc + "/leads?junk=junk"},
		{"leads won", acc + "/leads?stage=won"},
		{"leads last 7 days", acc + "/leads?from=" + time.Now().AddDate(0, 0, -7).Format("2006-01-02")},
		{"leads email search", acc + "/leads?q=lead777%40example.com"},
		{"leads name search", acc + "/leads?q=smith42"},
		{"leads partial email search", acc + "/leads?q=ead12345"},
		{"leads phone search", acc + "/leads?q=%28555%29+000-0777"},
		{"lead", acc + "/leads/" + strconv.FormatInt(leads[0].ID, 10)},
		{"send log", acc + "/events"},
		{"send log failed", acc + "/events?status=failed"},
		{"event", acc + "/events/" + strconv.FormatInt(evs[0].ID, 10)},
		{"datasets", acc + "/datasets"},
		{"dataset", acc + "/datasets/" + strconv.FormatInt(datasetID, 10)},
	}, nil
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn logs in through the form, as a browser would, and returns a
// client holding the session.
func signIn(base, email, pw string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	body, err := fetch(c, base+"/login")
	if err != nil {
		return nil, err
	}
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		return nil, errors.New("login form without a CSRF token")
	}
	res, err := c.PostForm(base+"/login", url.Values{"email": {email}, "password": {pw}, "_csrf": {m[1]}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("login: status %d", res.StatusCode)
	}
	return c, nil
}

func fetch(c *http.Client, u string) (string, error) {
	res, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", res.StatusCode)
	}
	return string(b), err
}

type result struct {
	lat      map[string][]time.Duration
	errors   int
	firstErr string
}

// drive has each client request the pages in turn, starting at its own
// page, until the duration is up.
func drive(cfg config, clients []*http.Client, base string, pages []page) *result {
	res := &result{lat: map[string][]time.Duration{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(cfg.dur)
	for i, c := range clients {
		wg.Go(func() {
			for n := i; time.Now().Before(end); n++ {
				p := pages[n%len(pages)]
				t0 := time.Now()
				_, err := fetch(c, base+p.path)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = p.name + ": " + err.Error()
					}
				} else {
					res.lat[p.name] = append(res.lat[p.name], d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res
}

// report prints each page's latencies and judges each page's p95, and
// the peak RSS, against the budget.
func (r *result) report(pages []page) error {
	var all []time.Duration
	var slow []string
	fmt.Printf("%-28s %6s %9s %9s %9s\n", "page", "n", "p50 ms", "p95 ms", "max ms")
	for _, p := range pages {
		l := r.lat[p.name]
		slices.Sort(l)
		all = append(all, l...)
		p95 := benchkit.Percentile(l, 0.95)
		mark := ""
		if p95 > budgetP95 {
			mark = "  over budget"
			slow = append(slow, p.name)
		}
		fmt.Printf("%-28s %6d %9.1f %9.1f %9.1f%s\n", p.name, len(l), benchkit.Millis(benchkit.Percentile(l, 0.5)), benchkit.Millis(p95), benchkit.Millis(benchkit.Percentile(l, 1)), mark)
	}
	slices.Sort(all)
	p95, rss := benchkit.Percentile(all, 0.95), benchkit.ProcStatusKB("VmHWM")/1024
	verdict := "PASS"
	if len(slow) > 0 || rss > budgetRSS || r.errors > 0 {
		verdict = "FAIL"
	}
	fmt.Printf("requests=%d\nerrors=%d\np95_ms=%.1f\npages_over_budget=%d\npeak_rss_mb=%d\nverdict=%s\n", len(all), r.errors, benchkit.Millis(p95), len(slow), rss, verdict)
	if r.errors > 0 {
		return fmt.Errorf("%d requests failed; first: %s", r.errors, r.firstErr)
	}
	if verdict == "FAIL" {
		return fmt.Errorf("pages with a p95 over %v: %v; peak RSS %d MB (budget %d)", budgetP95, slow, rss, budgetRSS)
	}
	return nil
}

// vacuumCounts rewrites and analyzes the counts tables of the bench
// schema, then vacuums them as autovacuum would have by then: VACUUM FULL
// leaves no page marked all-visible, and a read of the counts' keys would
// then look up every row in the table anyway.
func vacuumCounts(ctx context.Context, dbURL string) error {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{"VACUUM (FULL, ANALYZE) lead_counts, stage_counts, event_counts", "VACUUM lead_counts, stage_counts, event_counts"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
