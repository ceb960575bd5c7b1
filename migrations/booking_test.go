package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Migration 0019 makes every booking rule the stage mapping of its
// account's booking stage, keeping what it sends: its settings, its place,
// its event ids (a lead booked before gets nothing twice), and its history
// with one more version. An account without a booking stage gets its
// mappings at 'booked', disabled, as its booking rules never sent; the
// stage is added when it lacks it. 'booking' is no mode any more.
func TestBookingMappingsMigration(t *testing.T) {
	t.Parallel()
	const pixel = "123456789012345"
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			ctx := t.Context()
			db, exec, open := storeBefore(t, dialect, 19)
			const at = "'2026-01-01 00:00:00'"
			for _, a := range []string{"1, 'a'", "2, 'b'", "3, 'c'"} {
				exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (` + a + `, 'Acc', ` + at + `, ` + at + `)`)
			}
			for _, d := range []string{"7, 1, '" + pixel + "'", "8, 2, '2222222'", "9, 3, '3333333'"} {
				exec(`INSERT INTO datasets (id, account_id, pixel_id, name, created_at, updated_at) VALUES (` + d + `, 'Main', ` + at + `, ` + at + `)`)
			}
			// a: Booked is its booking stage; b: a 'booked' stage, but
			// none is the booking stage; c: neither.
			for _, st := range []string{"1, 'qualified', 1, false", "1, 'Booked', 2, true", "1, 'won', 3, false",
				"2, 'booked', 1, false", "2, 'won', 2, false", "3, 'qualified', 1, false", "3, 'won', 2, false"} {
				exec(`INSERT INTO stages (account_id, name, position, booking, created_at) VALUES (` + st + `, ` + at + `)`)
			}
			rule := func(id, account, dataset int64, name, mode, event, extra string, enabled bool, position int) {
				exec(fmt.Sprintf(`INSERT INTO send_rules (id, account_id, dataset_id, name, mode, event_name, enabled, position, created_at, updated_at)
					VALUES (%d, %d, %d, '%s', '%s', '%s', %v, %d, %s, %s)`, id, account, dataset, name, mode, event, enabled, position, at, at))
				if extra != "" {
					exec(fmt.Sprintf(`UPDATE send_rules SET %s WHERE id = %d`, extra, id))
				}
			}
			rule(11, 1, 7, "Call back", "manual", "Contact", "", true, 1)
			rule(12, 1, 7, "Booked calls", "booking", "Schedule",
				`value = 150, currency = 'EUR', test_event_code = 'TEST1', conditions = '[{"field":"country","match_type":"not_equals","pattern":"FR"}]'`, true, 2)
			rule(13, 1, 7, "Old booking", "booking", "BookedOld", "", false, 3)
			rule(14, 1, 7, "won to Purchase", "stage", "Purchase", "stage = 'won', value_field = 'change'", true, 4)
			rule(20, 2, 8, "Booked", "booking", "Schedule", "", true, 1)
			rule(30, 3, 9, "Booked", "booking", "Schedule", "", true, 1)
			// A rule deleted before the migration: its id is never taken
			// again, its versions staying under it.
			exec(`INSERT INTO send_rules (account_id, dataset_id, name, mode, event_name, created_at, updated_at) VALUES (1, 7, 'Gone', 'manual', 'Contact', ` + at + `, ` + at + `)`)
			var gone int64
			if err := db.QueryRowContext(ctx, `SELECT id FROM send_rules WHERE name = 'Gone'`).Scan(&gone); err != nil {
				t.Fatal(err)
			}
			exec(`DELETE FROM send_rules WHERE name = 'Gone'`)
			// Rule 12's history, as the store wrote it.
			old := models.SendRule{Name: "Booked calls", DatasetID: 7, Mode: "booking", EventName: "Schedule", Value: ptr(150.0), Currency: "EUR",
				TestEventCode: "TEST1", Combinator: "and", Conditions: `[{"field":"country","match_type":"not_equals","pattern":"FR"}]`, Enabled: true}
			exec(`INSERT INTO send_rule_versions (account_id, rule_id, before, after, created_at) VALUES (1, 12, '', '` + store.SnapshotOf(old).JSON() + `', ` + at + `)`)

			s := open()
			rules := map[int64]models.SendRule{}
			for _, acc := range []int64{1, 2, 3} {
				rs, err := s.SendRules(ctx, acc)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rs {
					rules[r.ID] = r
				}
			}
			type mapping struct {
				mode, stage, event string
				enabled            bool
				position           int
			}
			for id, want := range map[int64]mapping{
				11: {"manual", "", "Contact", true, 1},
				12: {"stage", "Booked", "Schedule", true, 2},
				13: {"stage", "Booked", "BookedOld", false, 3},
				14: {"stage", "won", "Purchase", true, 4},
				20: {"stage", "booked", "Schedule", false, 1},
				30: {"stage", "booked", "Schedule", false, 1},
			} {
				r := rules[id]
				if got := (mapping{r.Mode, r.Stage, r.EventName, r.Enabled, r.Position}); got != want {
					t.Errorf("rule %d = %+v; want %+v", id, got, want)
				}
			}
			if r := rules[12]; r.Name != "Booked calls" || r.DatasetID != 7 || r.Value == nil || *r.Value != 150 || r.Currency != "EUR" ||
				r.TestEventCode != "TEST1" || r.Repeatable || r.Conditions != `[{"field":"country","match_type":"not_equals","pattern":"FR"}]` {
				t.Errorf("Booked calls = %+v; want its settings kept", r)
			}

			// c got a stage booked at the end, not the booking stage.
			ss, err := s.Stages(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range ss {
				got = append(got, fmt.Sprintf("%s %d %v", st.Name, st.Position, st.Booking))
			}
			if fmt.Sprint(got) != "[qualified 1 false won 2 false booked 3 false]" {
				t.Errorf("c's stages = %q; want booked added at the end, not the booking stage", got)
			}
			if ss, _ := s.Stages(ctx, 2); len(ss) != 2 {
				t.Errorf("b's stages = %v; want its own two", ss)
			}

			// The history: one more version, from the booking rule to the
			// mapping, as the store writes a rule (SnapshotOf).
			vs, err := s.SendRuleVersions(ctx, 1, 12, 10)
			if err != nil || len(vs) != 2 {
				t.Fatalf("versions of rule 12 = %d, %v; want 2", len(vs), err)
			}
			if vs[0].Before != store.SnapshotOf(old).JSON() || vs[0].After != store.SnapshotOf(rules[12]).JSON() || vs[0].UserID != nil {
				t.Errorf("the migration's version = %q → %q; want %q → %q, no person's", vs[0].Before, vs[0].After,
					store.SnapshotOf(old).JSON(), store.SnapshotOf(rules[12]).JSON())
			}
			if vs, _ := s.SendRuleVersions(ctx, 3, 30, 10); len(vs) != 0 {
				t.Errorf("rule 30, without history, has %d versions; want none", len(vs))
			}

			// 'booking' is no mode any more.
			br := models.SendRule{AccountID: 1, DatasetID: 7, Name: "New booking", Mode: "booking", EventName: "Schedule", Combinator: "and", Conditions: "[]"}
			if err := s.CreateSendRule(ctx, &br, nil); err == nil {
				t.Error("created a rule of mode booking; want the CHECK to refuse it")
			}
			br.Mode = "manual"
			if err := s.CreateSendRule(ctx, &br, nil); err != nil || br.ID == gone {
				t.Errorf("a new rule = id %d, %v; want a new id, not deleted rule %d's", br.ID, err, gone)
			}

			// A lead the booking rule sent gets nothing new when it is
			// booked again: the mapping's event id is the booking rule's.
			now := time.Now().UTC().Truncate(time.Second)
			lead := func() models.Lead {
				l := models.Lead{AccountID: 1, Source: models.SourceWebsite, Email: "a@example.com", MatchKeys: "{}", Fields: "{}", JunkReasons: "[]",
					CreatedAt: now.Add(-time.Hour), ReceivedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)}
				if err := s.InsertLead(ctx, &l); err != nil {
					t.Fatal(err)
				}
				return l
			}
			booked := lead()
			id := capi.EventID(pixel, "Schedule", capi.StageRecordKey(booked, "booked", ""))
			ruleID := int64(12)
			if _, _, err := s.EnqueueEvents(ctx, []models.Event{{AccountID: 1, DatasetID: 7, LeadID: booked.ID, Origin: models.OriginRule, OriginID: &ruleID,
				Status: models.EventQueued, EventName: "Schedule", EventID: id, EventTime: now.Add(-50 * time.Minute)}}); err != nil {
				t.Fatal(err)
			}
			mark := func(l models.Lead, stage string) []models.Event {
				t.Helper()
				if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: 1, LeadID: l.ID, Stage: stage, OccurredAt: now.Add(-30 * time.Minute)}); err != nil {
					t.Fatal(err)
				}
				evs, err := s.LeadEvents(ctx, 1, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				return evs
			}
			if evs := mark(booked, "booked"); len(evs) != 1 || evs[0].EventID != id {
				t.Errorf("events of a lead booked before, booked again = %v; want only the booking rule's %s", events(evs), id)
			}

			// A lead booked now gets the event the booking rule made, under
			// the same id, and the disabled one's none.
			fresh := lead()
			evs := mark(fresh, "BOOKED")
			want := capi.EventID(pixel, "Schedule", capi.StageRecordKey(fresh, "booked", ""))
			if len(evs) != 1 || evs[0].EventID != want || evs[0].Value == nil || *evs[0].Value != 150 || evs[0].Currency != "EUR" {
				t.Errorf("events of a lead booked now = %v; want Schedule %s worth 150 EUR", events(evs), want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// events says which events there are, for a failure.
func events(evs []models.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventName + " " + e.EventID
	}
	return out
}

// storeBefore makes a fresh database of dialect migrated up to, not
// including, version, with those steps recorded as applied. It returns it
// (closed by open), a way to run SQL on it, and open, which opens the store on it and
// migrates the rest as leadsignal does on start.
func storeBefore(t *testing.T, dialect string, version int) (db *sql.DB, exec func(string), open func() *store.Store) {
	t.Helper()
	var o store.Options
	var err error
	if dialect == migrations.SQLite {
		o.SQLitePath = filepath.Join(t.TempDir(), "m.db")
		db, err = sql.Open("sqlite", o.SQLitePath)
	} else {
		o.PostgresURL = storetest.PostgresURL(t)
		db, err = sql.Open("pgx", o.PostgresURL)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	exec = func(q string) {
		t.Helper()
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	steps, err := migrations.Steps(dialect)
	if err != nil {
		t.Fatal(err)
	}
	exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamp NOT NULL)`)
	for _, s := range steps {
		if s.Version < version {
			exec(s.SQL)
			exec(fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, '%s', '2026-01-01 00:00:00')`, s.Version, s.Name))
		}
	}
	open = func() *store.Store {
		t.Helper()
		db.Close() // SQLite: the store's connections take over the file
		s, err := store.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		applied, err := s.Migrate(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) == 0 || !strings.HasPrefix(applied[0], fmt.Sprintf("%04d_", version)) {
			t.Fatalf("migrate applied %q; want the steps from %d on", applied, version)
		}
		return s
	}
	return db, exec, open
}
