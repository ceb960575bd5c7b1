package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
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
	// conn is a connection of the test's own.
	conn  *pgx.Conn
	plans planNotices
}

func newKeptPlans(t *testing.T) *keptPlans {
	t.Helper()
	return newKeptPlansAnalyzed(t, false)
}

// newKeptPlansAnalyzed is newKeptPlans, whose tables, when empty is
// true, were analyzed before the first leads came, as a new database
// vacuumed and analyzed before it is used: every index of the account
// then costs the same to the planner.
func newKeptPlansAnalyzed(t *testing.T, empty bool) *keptPlans {
	t.Helper()
	ctx := t.Context()
	s, dbURL := postgresStore(t)
	a, _ := twoAccounts(t, s)
	k := &keptPlans{t: t, account: a, dataset: newDataset(t, s, a, models.ModeLive), now: time.Now().UTC()}
	var err error
	if k.conn, err = pgx.Connect(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.conn.Close(context.Background()) })
	exec := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := k.conn.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Autovacuum stays away: the tables keep the statistics of their
	// first rows however they grow (grow).
	exec("ALTER TABLE leads SET (autovacuum_enabled = false)", "ALTER TABLE events SET (autovacuum_enabled = false)")
	if empty {
		exec("ANALYZE")
	}
	var first []models.Lead
	for i := range 150 {
		first = append(first, lead(a, k.now, fmt.Sprintf("first%d@example.com", i)))
	}
	if _, err := insertCaptured(t, s, first, k.events); err != nil {
		t.Fatal(err)
	}
	if !empty {
		exec("ANALYZE")
	}
	if k.store, err = store.OpenNoticing(ctx, autoExplained(t, dbURL), k.plans.add); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.store.Close() })
	return k
}

// bothStatistics runs fn in parallel subtests on tables analyzed with
// their first rows and on tables analyzed while empty (newKeptPlansAnalyzed).
func bothStatistics(t *testing.T, fn func(*testing.T, *keptPlans)) {
	for _, empty := range []bool{false, true} {
		t.Run(fmt.Sprintf("analyzed empty %v", empty), func(t *testing.T) {
			t.Parallel()
			fn(t, newKeptPlansAnalyzed(t, empty))
		})
	}
}

// change records a change of each of ls to stage, each with one event,
// as the stage API's recorder writes them (ChangeLeads).
func (k *keptPlans) change(ls []models.Lead, stage string) {
	k.t.Helper()
	ctx := k.t.Context()
	read, err := k.store.ReadStages(ctx, k.account.ID, nil, len(ls))
	if err != nil {
		k.t.Fatal(err)
	}
	expect := map[int64]time.Time{}
	var cs []store.LeadChange
	for i, l := range ls {
		expect[l.ID] = l.UpdatedAt
		after := l
		after.Stage = stage
		ev := models.Event{AccountID: k.account.ID, DatasetID: k.dataset.ID, LeadID: l.ID, Origin: models.OriginStage,
			EventName: "Lead_" + stage, EventID: fmt.Sprintf("%s-%d", stage, l.ID), EventTime: k.now, StageChangeID: &read.ChangeIDs[i]}
		cs = append(cs, store.LeadChange{
			Change: &models.StageChange{ID: read.ChangeIDs[i], AccountID: k.account.ID, LeadID: l.ID, Stage: stage, OccurredAt: k.now},
			After:  &after,
			Events: store.EventChanges{Stage: []models.Event{ev}},
		})
	}
	if n, err := k.store.ChangeLeads(ctx, k.account.ID, expect, cs); err != nil || n != len(ls) {
		k.t.Fatalf("ChangeLeads = %d, %v; want %d events", n, err, len(ls))
	}
}

// grow adds n leads, each with an event, without analyzing them, as a new
// installation's first hour of captures does before autovacuum comes, and
// drops the plans reported until then: what a test checks is the plans
// run on the grown tables.
func (k *keptPlans) grow(n int) {
	k.t.Helper()
	if _, err := k.conn.Exec(k.t.Context(), `WITH l AS (
		INSERT INTO leads (account_id, source, email, email_hash, created_at, received_at, updated_at, fields, match_keys, junk_reasons)
		SELECT $1, 'website', 'grown' || i || '@example.com', md5(i::text), now(), now(), now(), '{}', '{}', '[]'
		FROM generate_series(1, $3) AS i RETURNING id)
	INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
	SELECT $1, $2, l.id, 'default', 'Lead', 'grown-' || l.id, now(), now() FROM l`, k.account.ID, k.dataset.ID, n); err != nil {
		k.t.Fatal(err)
	}
	k.plans.take()
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
	plans := k.plans.take()
	checks := map[string]int{}
	for _, p := range plans {
		if !strings.Contains(p, "FOR KEY SHARE") {
			continue
		}
		for _, table := range []string{"accounts", "datasets", "leads", "events", "users", "crm_connections"} {
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
	for _, table := range []string{"accounts", "datasets", "leads", "events", "users", "crm_connections"} {
		if checks[table] != want[table] {
			k.t.Errorf("%s: %d foreign-key checks of %s, want %d (of %d notices)", what, checks[table], table, want[table], len(plans))
		}
	}
	// Whatever the tables held when the plans were made, nothing reads one
	// whole (the tests grow them in between).
	if whole := wholeReads(plans, "leads", "events", "stage_changes"); len(whole) > 0 {
		k.t.Errorf("%s: plans read a table whole:\n%s", what, strings.Join(whole, "\n"))

	}
	if p := byAccountAlone(plans); p != "" {
		k.t.Errorf("%s: a plan looks rows up by their account or dataset alone:\n%s", what, p)
	}
	// The connection plans every other statement for its parameters again
	// once the write has committed.
	if mode, err := store.PlanCacheMode(k.t, k.store); err != nil || mode != "force_custom_plan" {
		k.t.Errorf("%s: after it the connection plans with %q, %v; want force_custom_plan", what, mode, err)
	}
}

// wholeReads are the lines of plans that read one of tables whole: a
// sequential scan, an index scan with no condition on the index, or a merge
// join (which reads one side whole in order).
func wholeReads(plans []string, tables ...string) []string {
	var out []string
	for _, p := range plans {
		lines := strings.Split(p, "\n")
		for i, line := range lines {
			if strings.Contains(line, "Merge Join") {
				out = append(out, line)
			}
			for _, t := range tables {
				switch {
				case strings.Contains(line, "Seq Scan on "+t+" "):
					out = append(out, line)
				case strings.Contains(line, "Scan using ") && strings.Contains(line, " on "+t+" ") &&
					(i+1 == len(lines) || !strings.Contains(lines[i+1], "Index Cond")):
					out = append(out, line)
				}
			}
		}
	}
	return out
}

// A capture's write keeps its plans (keptPlansSQL): the foreign-key checks
// of its leads and events are planned once per connection, not per row,
// and read by key even when planned on a new installation's first rows and
// run once the tables have grown.
func TestSaveCapturedKeepsItsPlans(t *testing.T) {
	t.Parallel()
	k := newKeptPlans(t)
	for round := range 2 {
		if round == 1 {
			k.grow(20000)
		}
		ls := []models.Lead{lead(k.account, k.now, fmt.Sprintf("new%d-1@example.com", round)), lead(k.account, k.now, fmt.Sprintf("new%d-2@example.com", round))}
		if _, err := insertCaptured(t, k.store, ls, k.events); err != nil {
			t.Fatal(err)
		}
	}
	// Two new leads, each with one event: a check of each lead's account,
	// and of each event's account, dataset and lead, and its queue row's
	// event.
	k.wantChecks("capture", map[string]int{"accounts": 4, "datasets": 2, "leads": 2, "events": 2})
}

// So does the write of stage changes (the stage API, CRM webhooks, the
// CSV upload): the COPYs of its stage changes, events and queue rows.
func TestChangeLeadsKeepsItsPlans(t *testing.T) {
	t.Parallel()
	bothStatistics(t, changeLeadsKeepsItsPlans)
}

func changeLeadsKeepsItsPlans(t *testing.T, k *keptPlans) {
	ctx := t.Context()
	change := k.change
	ls, err := k.store.Leads(ctx, k.account.ID, store.LeadFilter{}, nil, 4)
	if err != nil || len(ls) != 4 {
		t.Fatalf("leads = %d, %v", len(ls), err)
	}
	change(ls[:2], "qualified") // planned on the first rows
	k.grow(20000)
	change(ls[2:], "won")
	// The lock of the leads, and the look for each change's earlier one to
	// its stage, keep their plans too.
	for what, text := range map[string]string{
		"the lock of the leads":      "FROM unnest(p_ids, p_updated)",
		"the look for first reaches": "FROM stage_changes p WHERE p.lead_id = sc.lead_id",
	} {
		n := 0
		for _, p := range k.plans.peek() {
			if !strings.Contains(p, text) {
				continue
			}
			n++
			if !keptPlan.MatchString(p) {
				t.Errorf("%s was planned for its values, not kept:\n%s", what, p)
			}
		}
		if n == 0 {
			t.Errorf("no plan of %s", what)
		}
	}
	// Two stage changes, each with one event: a check of each change's
	// account and lead, of each event's account, dataset and lead, and of
	// its queue row's event.
	k.wantChecks("stage changes", map[string]int{"accounts": 4, "datasets": 2, "leads": 4, "events": 2})
}

// Completing a partial lead finds its row by a join of its id and
// account with leads, which keeps no plan: one kept from a new
// installation's first leads, or from a table analyzed while empty, would
// read every lead of the account (a merge join over the whole of
// leads_pkey, the account's own index) for each completion once the table
// had grown. Its events are found by their queue rows, each by key.
func TestCompletingAPartialLeadPlansForItsRows(t *testing.T) {
	t.Parallel()
	bothStatistics(t, completingAPartialLeadPlansForItsRows)
}

func completingAPartialLeadPlansForItsRows(t *testing.T, k *keptPlans) {
	ctx := t.Context()
	var partial []models.Lead
	for i := range 2 {
		p := lead(k.account, k.now, fmt.Sprintf("partial%d@example.com", i))
		p.Partial, p.ExternalID = true, strp(fmt.Sprintf("form-p%d", i))
		partial = append(partial, p)
	}
	if _, err := insertCaptured(t, k.store, partial, k.events); err != nil {
		t.Fatal(err)
	}
	complete := func(l models.Lead) {
		t.Helper()
		l.Partial = false
		if err := k.store.SaveCaptured(ctx, store.Captured{Completed: []models.Lead{l}}); err != nil {
			t.Fatal(err)
		}
	}
	complete(partial[0]) // planned on the first leads
	k.grow(20000)
	complete(partial[1])
	plans := k.plans.take()
	updates := 0
	for _, p := range plans {
		if strings.Contains(p, "Query Text: UPDATE leads") || strings.Contains(p, "Query Text: UPDATE events") {
			updates++
		}
	}
	if updates != 2 {
		t.Errorf("%d plans of the completion's updates of leads and events, want 2 (of %d notices)", updates, len(plans))
	}
	if whole := wholeReads(plans, "leads", "events", "stage_changes"); len(whole) > 0 {
		t.Errorf("completing a lead reads a table whole:\n%s", strings.Join(whole, "\n"))
	}
	if p := byAccountAlone(plans); p != "" {
		t.Errorf("completing a lead looks rows up by their account or dataset alone:\n%s", p)
	}
}

// keptPlan matches a plan kept for any parameters: a condition compares a
// column with a parameter ($1), which a plan made for the values would
// show as the value. (A subquery's array, "ANY ($0)", is neither.)
var keptPlan = regexp.MustCompile(`(Cond|Filter): .*= \$\d`)

// ownerOnly is an index condition on a row's account or dataset alone.
var ownerOnly = regexp.MustCompile(`^\s*Index Cond: \((account_id|dataset_id) = [^ ]+\)$`)

// byAccountAlone is the first of plans that reads leads or events by their
// account or dataset alone, every one of it, rather than by a key; "" when
// none does.
func byAccountAlone(plans []string) string {
	for _, p := range plans {
		lines := strings.Split(p, "\n")
		for i, line := range lines {
			if (strings.Contains(line, " on leads ") || strings.Contains(line, " on events ")) && i+1 < len(lines) &&
				ownerOnly.MatchString(lines[i+1]) {
				return p
			}
		}
	}
	return ""
}

// The reads of a batch of stage changes (ReadStages) keep their plans
// too: the account's settings, its leads by each kind of key, and their
// stage changes and events with their state are planned once per
// connection, and still read by key once the tables have grown.
func TestReadStagesKeepsItsPlans(t *testing.T) {
	t.Parallel()
	bothStatistics(t, readStagesKeepsItsPlans)
}

func readStagesKeepsItsPlans(t *testing.T, k *keptPlans) {
	ctx := t.Context()
	ls, err := k.store.Leads(ctx, k.account.ID, store.LeadFilter{}, nil, 1)
	if err != nil || len(ls) != 1 {
		t.Fatalf("leads = %d, %v", len(ls), err)
	}
	keys := func(n int) []store.LeadKey {
		return []store.LeadKey{{Field: "id", Value: fmt.Sprint(ls[0].ID)}, {Field: "email", Value: ls[0].EmailHash},
			{Field: "external_id", Value: fmt.Sprint("form-", n)}, {Field: "phone", Value: fmt.Sprint("ph-", n)},
			{Field: "meta_lead_id", Value: fmt.Sprint("m-", n)}}
	}
	read := func(n int) {
		t.Helper()
		r, err := k.store.ReadStages(ctx, k.account.ID, keys(n), 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Leads[store.LeadKey{Field: "email", Value: ls[0].EmailHash}]; got.ID != ls[0].ID || len(r.Events[ls[0].ID]) != 1 {
			t.Fatalf("read found lead %d with %d events; want lead %d and its event", got.ID, len(r.Events[ls[0].ID]), ls[0].ID)
		}
	}
	read(1) // planned on the first rows
	k.grow(20000)
	for _, q := range []string{
		`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, updated_at)
			SELECT id, dataset_id, lead_id, 'queued', event_time, now(), now() FROM events WHERE event_id LIKE 'grown-%'`,
		`INSERT INTO stage_changes (account_id, lead_id, stage, occurred_at, created_at, source)
			SELECT account_id, id, 'qualified', now(), now(), 'api' FROM leads WHERE email LIKE 'grown%'`,
	} {
		if _, err := k.conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	k.plans.take()
	read(2)
	plans := k.plans.take()
	reads := 0
	for _, p := range plans {
		if !strings.Contains(p, "Query Text: SELECT") || strings.Contains(p, "set_config") || strings.Contains(p, "nextval") {
			continue
		}
		reads++
		if !keptPlan.MatchString(p) {
			t.Errorf("a read was planned for its values, not kept:\n%s", p)
		}
	}
	// The account, its datasets, rules, stages and CRM labels; and for
	// each of the five keys its leads, their stage changes and events.
	if reads != 5+5*3 {
		t.Errorf("%d plans of reads, want %d (of %d notices)", reads, 5+5*3, len(plans))
	}
	if whole := wholeReads(plans, "leads", "events", "stage_changes", "unsent_events", "event_sends", "crm_stages"); len(whole) > 0 {
		t.Errorf("reading stage changes' leads reads a table whole:\n%s", strings.Join(whole, "\n"))
	}
	if p := byAccountAlone(plans); p != "" {
		t.Errorf("a read looks rows up by their account or dataset alone:\n%s", p)
	}
}

// The CRM inbox's store of new deliveries and the worker's write of what
// it made of them keep their plans and the foreign-key checks of their
// rows, made on a new installation's first rows: each delivery by its key,
// each account, connection and lead by key.
func TestCRMDeliveriesKeepTheirPlans(t *testing.T) {
	t.Parallel()
	k := newKeptPlans(t)
	ctx := t.Context()
	c := models.CRMConnection{AccountID: k.account.ID, Kind: "generic", Name: "Zap", Token: store.NewCRMToken()}
	if err := k.store.CreateCRMConnection(ctx, &c); err != nil {
		t.Fatal(err)
	}
	ls, err := k.store.Leads(ctx, k.account.ID, store.LeadFilter{}, nil, 2)
	if err != nil || len(ls) != 2 {
		t.Fatalf("leads = %d, %v", len(ls), err)
	}
	finish := func(round int, l models.Lead) {
		t.Helper()
		d := models.CRMDelivery{AccountID: k.account.ID, ConnectionID: c.ID, Key: fmt.Sprint("k", round), Body: "{}",
			ReceivedAt: k.now, OccurredAt: k.now, CRMStageID: "won"}
		if _, err := k.store.AddCRMDeliveries(ctx, []models.CRMDelivery{d}); err != nil {
			t.Fatal(err)
		}
		ds, err := k.store.ClaimCRMDeliveries(ctx, k.now.Add(time.Minute), 10)
		if err != nil || len(ds) != 1 {
			t.Fatalf("claimed %d, %v", len(ds), err)
		}
		ds[0].Status, ds[0].LeadID = models.DeliveryDone, &l.ID
		if round == 1 {
			// One delivery stored: a check of its account and its
			// connection.
			k.wantChecks("storing a delivery", map[string]int{"accounts": 1, "crm_connections": 1})
		}
		if err := k.store.FinishCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	finish(0, ls[0]) // planned on the first rows
	k.grow(20000)
	finish(1, ls[1])
	// One delivery come to its lead: a check of the lead.
	k.wantChecks("finishing deliveries", map[string]int{"leads": 1})
}

// The stage counts of a batch of stage changes join the batch's leads and
// changes by hashing, in the plan kept from a batch of two (migration
// 0050): a nested loop over the two arrays, all a kept plan allows
// elsewhere, compared each of an upload's thousand changes with every lead.
func TestStageCountsJoinByHashing(t *testing.T) {
	t.Parallel()
	k := newKeptPlans(t)
	ls, err := k.store.Leads(t.Context(), k.account.ID, store.LeadFilter{}, nil, 102)
	if err != nil || len(ls) != 102 {
		t.Fatalf("leads = %d, %v", len(ls), err)
	}
	k.change(ls[:2], "qualified") // the plan is kept from here
	k.plans.take()
	k.change(ls[2:], "won")
	joins := 0
	for _, p := range k.plans.take() {
		if !strings.Contains(p, "Query Text: INSERT INTO stage_counts") || !strings.Contains(p, "unnest(ls)") {
			continue
		}
		joins++
		if !strings.Contains(p, "Hash Join") || strings.Contains(p, "Nested Loop") {
			t.Errorf("the stage counts join the leads and changes by a nested loop:\n%s", p)
		}
	}
	if joins == 0 {
		t.Error("no plan of the stage counts' join")
	}
}
