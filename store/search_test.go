package store_test

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/store"
)

// The free-text search's expression must be the trigram index's, or every
// search reads all leads of the account again.
func TestLeadSearchCanUseTrigramIndex(t *testing.T) {
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
