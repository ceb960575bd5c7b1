package store_test

import (
	"fmt"
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

// keptPlans is a new Postgres database with a hundred-odd leads and
// events, analyzed as AnalyzeNew first analyzes a new installation's
// tables, and a store on it whose connections report each plan they run
// (auto_explain).
type keptPlans struct {
	t       *testing.T
	store   *store.Store
	account models.Account
	dataset models.Dataset
	now     time.Time
	mu      sync.Mutex
	plans   []string
}

func newKeptPlans(t *testing.T) *keptPlans {
	t.Helper()
	ctx := t.Context()
	dbURL := storetest.MigratedPostgresURL(t)
	s, err := store.Open(ctx, store.Options{PostgresURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, _ := twoAccounts(t, s)
	k := &keptPlans{t: t, account: a, dataset: newDataset(t, s, a, models.ModeLive), now: time.Now().UTC()}
	var first []models.Lead
	for i := range 150 {
		first = append(first, lead(a, k.now, fmt.Sprintf("first%d@example.com", i)))
	}
	if _, err := insertCaptured(t, s, first, k.events); err != nil {
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
	k.store, err = store.OpenNoticing(ctx, u.String(), func(m string) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.plans = append(k.plans, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.store.Close() })
	return k
}

// events are a Lead event of each of ls.
func (k *keptPlans) events(ls []models.Lead) []models.Event {
	var evs []models.Event
	for _, l := range ls {
		evs = append(evs, models.Event{AccountID: k.account.ID, DatasetID: k.dataset.ID, LeadID: l.ID, Origin: models.OriginDefault,
			EventName: "Lead", EventID: "lead-" + l.Email, EventTime: k.now})
	}
	return evs
}

// wantChecks checks the plans of the foreign-key checks run since the
// last call: as many of each referenced table as want says, each reading
// it by key in a plan kept for any value ($1).
func (k *keptPlans) wantChecks(what string, want map[string]int) {
	k.t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	checks := map[string]int{}
	for _, p := range k.plans {
		if !strings.Contains(p, "FOR KEY SHARE") {
			continue
		}
		for _, table := range []string{"accounts", "datasets", "leads", "events", "users"} {
			if !strings.Contains(p, `."`+table+`" x WHERE`) {
				continue
			}
			checks[table]++
			if !strings.Contains(p, "Index Scan using "+table+"_pkey") || strings.Contains(p, "Seq Scan") {
				k.t.Errorf("%s: the foreign-key check of %s does not read it by key:\n%s", what, table, p)
			}
			if !strings.Contains(p, "(id = $1)") {
				k.t.Errorf("%s: the foreign-key check of %s was planned for its value, not kept:\n%s", what, table, p)
			}
		}
	}
	for _, table := range []string{"accounts", "datasets", "leads", "events", "users"} {
		if checks[table] != want[table] {
			k.t.Errorf("%s: %d foreign-key checks of %s, want %d (of %d notices)", what, checks[table], table, want[table], len(k.plans))
		}
	}
	k.plans = nil
	// The connection plans every other statement for its parameters again
	// once the write has committed.
	if mode, err := store.PlanCacheMode(k.t, k.store); err != nil || mode != "force_custom_plan" {
		k.t.Errorf("%s: after it the connection plans with %q, %v; want force_custom_plan", what, mode, err)
	}
}

// A capture's write keeps its plans (keptPlansSQL): the foreign-key checks
// of its leads and events are planned once per connection, not per row,
// and read by key even when planned on a new installation's small tables.
func TestSaveCapturedKeepsItsPlans(t *testing.T) {
	t.Parallel()
	k := newKeptPlans(t)
	var ls []models.Lead
	for round := range 2 {
		ls = []models.Lead{lead(k.account, k.now, fmt.Sprintf("new%d-1@example.com", round)), lead(k.account, k.now, fmt.Sprintf("new%d-2@example.com", round))}
		if _, err := insertCaptured(t, k.store, ls, k.events); err != nil {
			t.Fatal(err)
		}
	}
	// Four new leads, each with one event: a check of each lead's account,
	// and of each event's account, dataset and lead, and its queue row's
	// event.
	k.wantChecks("capture", map[string]int{"accounts": 8, "datasets": 4, "leads": 4, "events": 4})
}

// So does the write of stage changes (the stage API, CRM webhooks, the
// CSV upload): the COPYs of its stage changes, events and queue rows.
func TestChangeLeadsKeepsItsPlans(t *testing.T) {
	t.Parallel()
	k := newKeptPlans(t)
	ctx := t.Context()
	ls, err := k.store.Leads(ctx, k.account.ID, store.LeadFilter{}, nil, 2)
	if err != nil || len(ls) != 2 {
		t.Fatalf("leads = %d, %v", len(ls), err)
	}
	read, err := k.store.ReadStages(ctx, k.account.ID, nil, len(ls))
	if err != nil {
		t.Fatal(err)
	}
	expect := map[int64]time.Time{}
	var cs []store.LeadChange
	for i, l := range ls {
		expect[l.ID] = l.UpdatedAt
		after := l
		after.Stage = "qualified"
		ev := models.Event{AccountID: k.account.ID, DatasetID: k.dataset.ID, LeadID: l.ID, Origin: models.OriginStage,
			EventName: "QualifiedLead", EventID: fmt.Sprintf("qualified-%d", l.ID), EventTime: k.now, StageChangeID: &read.ChangeIDs[i]}
		cs = append(cs, store.LeadChange{
			Change: &models.StageChange{ID: read.ChangeIDs[i], AccountID: k.account.ID, LeadID: l.ID, Stage: "qualified", OccurredAt: k.now},
			After:  &after,
			Events: store.EventChanges{Stage: []models.Event{ev}},
		})
	}
	k.mu.Lock()
	k.plans = nil
	k.mu.Unlock()
	if n, err := k.store.ChangeLeads(ctx, k.account.ID, expect, cs); err != nil || n != 2 {
		t.Fatalf("ChangeLeads = %d, %v; want 2 events", n, err)
	}
	// Two stage changes, each with one event: a check of each change's
	// account and lead, of each event's account, dataset and lead, and of
	// its queue row's event.
	k.wantChecks("stage changes", map[string]int{"accounts": 4, "datasets": 2, "leads": 4, "events": 2})
}
