package store_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A capture's write keeps its plans (keptPlansSQL): the foreign-key checks
// of its leads and events are planned once per connection, not per row,
// and read by key even when planned on a new installation's small tables.
// Its connection plans every other statement for its parameters again
// once the write has committed.
func TestSaveCapturedKeepsItsPlans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dbURL := storetest.MigratedPostgresURL(t)
	s, err := store.Open(ctx, store.Options{PostgresURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, _ := twoAccounts(t, s)
	d := newDataset(t, s, a, models.ModeLive)
	now := time.Now().UTC()
	event := func(l models.Lead) models.Event {
		return models.Event{AccountID: a.ID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault,
			EventName: "Lead", EventID: "lead-" + l.Email, EventTime: now}
	}
	events := func(ls []models.Lead) []models.Event {
		var evs []models.Event
		for _, l := range ls {
			evs = append(evs, event(l))
		}
		return evs
	}
	// A new installation's tables as AnalyzeNew first analyzes them: a
	// hundred-odd rows each.
	var first []models.Lead
	for i := range 150 {
		first = append(first, lead(a, now, "first"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+"@example.com"))
	}
	if _, err := insertCaptured(t, s, first, events); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0"+
		" -c auto_explain.log_nested_statements=on -c auto_explain.log_level=notice")
	u.RawQuery = q.Encode()
	var mu sync.Mutex
	var plans []string
	noticing, err := store.OpenNoticing(ctx, u.String(), func(m string) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { noticing.Close() })
	for round := range 2 {
		ls := []models.Lead{lead(a, now, "new"+string(rune('a'+round))+"1@example.com"), lead(a, now, "new"+string(rune('a'+round))+"2@example.com")}
		if _, err := insertCaptured(t, noticing, ls, events); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	checks := map[string]int{}
	for _, p := range plans {
		if !strings.Contains(p, "FOR KEY SHARE") {
			continue
		}
		for _, table := range []string{"accounts", "datasets", "leads", "events"} {
			if !strings.Contains(p, `."`+table+`" x WHERE`) {
				continue
			}
			checks[table]++
			if !strings.Contains(p, "Index Scan using "+table+"_pkey") || strings.Contains(p, "Seq Scan") {
				t.Errorf("the foreign-key check of %s does not read it by key:\n%s", table, p)
			}
			if !strings.Contains(p, "(id = $1)") {
				t.Errorf("the foreign-key check of %s was planned for its value, not kept:\n%s", table, p)
			}
		}
	}
	// Four new leads, each with one event: a check of each lead's account,
	// and of each event's account, dataset and lead, and its queue row's
	// event.
	for table, want := range map[string]int{"accounts": 8, "datasets": 4, "leads": 4, "events": 4} {
		if checks[table] != want {
			t.Errorf("%d foreign-key checks of %s, want %d (of %d notices)", checks[table], table, want, len(plans))
		}
	}

	if mode, err := store.PlanCacheMode(t, noticing); err != nil || mode != "force_custom_plan" {
		t.Errorf("after a capture its connection plans with %q, %v; want force_custom_plan", mode, err)
	}
}
