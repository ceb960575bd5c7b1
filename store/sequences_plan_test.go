package store_test

import (
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// The weekly count of complete sequences reads indexes only, and answers
// for 12 weeks well within a page's budget on an account of many leads:
// SEQUENCE_PLAN_LEADS=200000 (or 1000000) with TEST_DATABASE_URL seeds
// that many leads over 30 days (benchkit.SeedLeads: a Lead event each),
// qualifies one in 10 (QualifiedLead two days later) and wins one in 100
// (Purchase), then logs EXPLAIN ANALYZE and the median of 20 counts.
func TestSequenceWeeksPlan(t *testing.T) {
	t.Parallel()
	n, _ := strconv.Atoi(os.Getenv("SEQUENCE_PLAN_LEADS"))
	base := os.Getenv("TEST_DATABASE_URL")
	if n == 0 || base == "" {
		t.Skip("set SEQUENCE_PLAN_LEADS and TEST_DATABASE_URL to check the plan at volume")
	}
	ctx := t.Context()
	st, dbURL, done, err := benchkit.OpenStore(ctx, base, "sequences plan", os.Getenv("SEQUENCE_PLAN_KEEP") != "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(done)
	acc, err := benchkit.Account(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
	if err := st.CreateDataset(ctx, &d); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one session, for its settings
	start := time.Now()
	if err := benchkit.SeedLeads(ctx, dbURL, acc.ID, n); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		mod  int
	}{{"QualifiedLead", 10}, {"Purchase", 100}} {
		if _, err := db.ExecContext(ctx, `
WITH ev AS (
	INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, payload, created_at)
	SELECT l.account_id, d.id, l.id, 'stage', $2, 'hist-' || $2 || '-' || l.id, LEAST(l.created_at + interval '2 days', now()),
		repeat('x', 1000), l.created_at
	FROM leads l JOIN datasets d ON d.account_id = l.account_id
	WHERE l.account_id = $1 AND NOT l.junk AND NOT l.partial AND l.id % $3 = 4
	RETURNING id, created_at
)
INSERT INTO event_sends (event_id, attempts, fbtrace_id, sent_at) SELECT id, 1, 'trace', created_at FROM ev`, acc.ID, f.name, f.mod); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d leads in %v", n, time.Since(start).Round(time.Second))
	for _, final := range []string{"QualifiedLead", "Purchase"} {
		if err := st.CreateSequence(ctx, &models.Sequence{AccountID: acc.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: final}); err != nil {
			t.Fatal(err)
		}
	}
	loc, err := time.LoadLocation(acc.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	query, args := store.SequenceWeeksQuery(st.Dialect(), acc.ID, store.WeekStarts(loc, now, 12))
	// gorm's @names as Postgres's $n, the longest names first.
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	var vals []any
	for _, k := range names {
		vals = append(vals, args[k])
		query = strings.ReplaceAll(query, "@"+k, fmt.Sprintf("$%d", len(vals)))
	}
	// As SequenceWeeks runs it: without JIT.
	if _, err := db.ExecContext(ctx, "SET jit = off"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+query, vals...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	t.Logf("EXPLAIN ANALYZE:\n%s", strings.Join(plan, "\n"))
	if text := strings.Join(plan, "\n"); strings.Contains(text, "Seq Scan on events") {
		t.Errorf("the count reads events in full; want it index-driven")
	}

	var took []time.Duration
	var counts []store.SequenceCount
	for range 20 {
		t0 := time.Now()
		if counts, err = st.SequenceWeeks(ctx, acc.ID, loc, now, 12); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	for _, c := range counts {
		var ws []string
		for _, w := range c.Weeks {
			ws = append(ws, strconv.FormatInt(w.Complete, 10))
		}
		t.Logf("%s → %s: %s", c.Sequence.InitialEvent, c.Sequence.FinalEvent, strings.Join(ws, " "))
	}
	t.Logf("SequenceWeeks, 12 weeks, %d leads: median %v, max %v", n, took[len(took)/2], took[len(took)-1])
	if took[len(took)/2] > 30*time.Millisecond {
		t.Errorf("median %v; want well under 30 ms", took[len(took)/2])
	}
}
