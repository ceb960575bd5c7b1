package store_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The free-text search's expression must be the trigram index's, or every
// search reads all leads of the account again.
func TestLeadSearchCanUseTrigramIndex(t *testing.T) {
	t.Parallel()
	db := migratedPostgres(t)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// With other paths off, a plan can only use the index if it matches.
	for _, set := range []string{"SET enable_seqscan = off", "SET enable_indexscan = off"} {
		if _, err := conn.ExecContext(t.Context(), set); err != nil {
			t.Fatal(err)
		}
	}
	var plan strings.Builder
	rows, err := conn.QueryContext(t.Context(), "EXPLAIN SELECT id FROM leads WHERE "+store.SearchText+" LIKE '%jane%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if !strings.Contains(plan.String(), "leads_search_idx") {
		t.Errorf("the search does not read leads_search_idx:\n%s", plan.String())
	}
}

// Postgres plans a search from how many leads it expects the term to
// match: a term in many leads reads the newest leads in order, a rare one
// the trigram index. The estimate must see a term that 1 lead in 200
// matches, or such a term is planned as if almost none did, and a page of
// a big account reads and sorts all its matches.
func TestLeadSearchEstimatesMatches(t *testing.T) {
	t.Parallel()
	db := migratedPostgres(t)
	ctx := t.Context()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', now(), now())`)
	// 20,000 leads, all in the sample of any statistics target: the
	// search texts, in order, are their emails'. The 100 Fairweathers are
	// the 251st to the 350th: between two of the 101 values that the
	// default target keeps (the 200th and the 400th), so only a finer
	// sample sees them.
	exec(`INSERT INTO leads (account_id, source, email, first_name, last_name, match_keys, created_at, received_at, updated_at)
		SELECT 1, 'website', 'lead' || lpad(i::text, 5, '0') || '@example.com', 'Pat',
			CASE WHEN i BETWEEN 250 AND 349 THEN 'Fairweather' ELSE 'Doe' END, '{}', now(), now(), now()
		FROM generate_series(0, 19999) AS i`)
	exec(`ANALYZE leads`)
	var plan string
	if err := db.QueryRowContext(ctx, "EXPLAIN SELECT id FROM leads WHERE "+store.SearchText+" LIKE '%fairweather%'").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(` rows=(\d+) `).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no row estimate in %q", plan)
	}
	if n, _ := strconv.Atoi(m[1]); n < 50 || n > 200 {
		t.Errorf("Postgres expects %d leads to match a term that 100 of 20,000 match; want 50 to 200\n%s", n, plan)
	}
}

// A search finds the leads whose email, name or phone holds the term,
// whatever its case, newest first, page after page, and counts them up to
// the limit asked: the same leads on SQLite and Postgres, with the term
// in many leads or in few.
func TestLeadSearchNewestMatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		var want []string // emails of the leads "Smith42" finds, newest first
		for i := range 120 {
			l := lead(a, base.Add(time.Duration(i)*time.Minute), fmt.Sprintf("user%03d@example.com", i))
			match := true
			switch i % 6 {
			case 0:
				l.LastName = "Smith42"
			case 1:
				l.LastName = "SMITH420" // a longer name holds it too
			case 2:
				l.Email = fmt.Sprintf("smith42.%03d@example.com", i)
			case 3:
				l.LastName = "Smith4" // one digit short
				match = false
			case 4:
				// Across the email and the name: in neither.
				l.Email, l.FirstName, l.LastName = fmt.Sprintf("u%03d@example.smith", i), "42", "Doe"
				match = false
			default:
				match = false
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			if match {
				want = append(want, l.Email)
			}
		}
		other := lead(b, base.Add(time.Hour), "smith42@example.com")
		if err := s.InsertLead(ctx, &other); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(want)

		f := store.LeadFilter{Query: "  Smith42 "}
		var got []string
		var after *store.LeadCursor
		for range 20 {
			page, err := s.Leads(ctx, a.ID, f, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range page {
				got = append(got, l.Email)
			}
			if len(page) < 7 {
				break
			}
			last := page[len(page)-1]
			after = &store.LeadCursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages of Leads(%q) = %q;\nwant %q", f.Query, got, want)
		}
		var each []string
		if err := s.EachLead(ctx, a.ID, f, func(l models.Lead) error { each = append(each, l.Email); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(each, want) {
			t.Errorf("EachLead(%q) = %q;\nwant %q", f.Query, each, want)
		}
		for _, limit := range []int{1_001, len(want), 10} {
			n, err := s.CountLeads(ctx, a.ID, f, limit)
			if want := min(limit, len(want)); err != nil || n != int64(want) {
				t.Errorf("CountLeads(%q, up to %d) = %d, %v; want %d", f.Query, limit, n, err, want)
			}
		}
	})
}
