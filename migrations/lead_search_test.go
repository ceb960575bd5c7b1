package migrations_test

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// Migration 0023 samples the leads' search text finely enough to see a
// term that 1 lead in 200 holds, and 0024 analyzes again the leads
// analyzed with the coarse sample: an installation's searches are planned
// from the right estimate at once, not after its next analyze.
func TestLeadSearchStatsMigration(t *testing.T) {
	t.Parallel()
	db, exec, step := migratedBefore(t, migrations.Postgres, 23)
	steps, err := migrations.Steps(migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', now(), now())`)
	// Every lead is in the sample, and the search texts sort by email: the
	// 100 Fairweathers, 251st to 350th, fall between two of the 101 values
	// the default sample keeps (the 200th and the 400th).
	exec(`INSERT INTO leads (account_id, source, email, first_name, last_name, match_keys, created_at, received_at, updated_at)
		SELECT 1, 'website', 'lead' || lpad(i::text, 5, '0') || '@example.com', 'Pat',
			CASE WHEN i BETWEEN 250 AND 349 THEN 'Fairweather' ELSE 'Doe' END, '{}', now(), now(), now()
		FROM generate_series(0, 19999) AS i`)
	exec(`ANALYZE leads`)
	estimate := func() int {
		t.Helper()
		var plan string
		err := db.QueryRowContext(t.Context(), `EXPLAIN SELECT id FROM leads WHERE
			(lower(email) || chr(1) || lower(first_name || ' ' || last_name) || chr(1) || phone_e164) LIKE '%fairweather%'`).Scan(&plan)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(` rows=(\d+) `).FindStringSubmatch(plan)
		if m == nil {
			t.Fatalf("no row estimate in %q", plan)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := estimate(); n > 10 {
		t.Fatalf("before 0023 Postgres expects %d leads to match; want about 2 (1 in 10,000), or this test shows nothing", n)
	}
	// Each step in its own transaction, as Up runs them.
	exec(step.SQL)
	exec(steps[slices.IndexFunc(steps, func(s migrations.Step) bool { return s.Version == 24 })].SQL)
	if n := estimate(); n < 50 || n > 200 {
		t.Errorf("after 0023 and 0024 Postgres expects %d leads to match a term that 100 of 20,000 match; want 50 to 200", n)
	}
}
