package migrations_test

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// Migration 0015 gives every existing dataset the rule that does what
// capture did before rules: complete, non-junk leads become Lead events.
func TestSendRulesMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, rules := migratedBefore(t, dialect, 15)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (7, 1, 'Main', '1', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (8, 1, 'Backup', '2', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(rules.SQL)
			rows, err := db.QueryContext(t.Context(), `SELECT dataset_id, name, mode, event_name, enabled, position, conditions FROM send_rules ORDER BY position`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var ds, pos int
				var name, mode, event, conds string
				var enabled bool
				if err := rows.Scan(&ds, &name, &mode, &event, &enabled, &pos, &conds); err != nil {
					t.Fatal(err)
				}
				if mode != "automatic_completed" || event != "Lead" || !enabled || conds != "[]" {
					t.Errorf("rule %q = %s %s enabled %v conditions %s; want automatic_completed Lead, enabled, none", name, mode, event, enabled, conds)
				}
				got = append(got, name)
			}
			if len(got) != 2 || got[0] != "Completed leads to Backup" || got[1] != "Completed leads to Main" {
				t.Errorf("rules = %q; want one per dataset, by name", got)
			}
		})
	}
}

// Migration 0016 only adds the column, empty for every lead: the leads it
// finds get their phone country from a backfill after start
// (store.BackfillNext), never in the step's one transaction.
func TestLeadPhoneCountryMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, step := migratedBefore(t, dialect, 16)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, phone_e164, match_keys, created_at, received_at, updated_at)
				VALUES (1, 1, 'website', '4930901820', '{"ph":{"normalized":"4930901820","hash":"x"},"phone_country":"DE"}', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, phone_e164, match_keys, created_at, received_at, updated_at)
				VALUES (2, 1, 'website', '', '{}', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			if strings.Contains(strings.ToUpper(step.SQL), "UPDATE") {
				t.Errorf("0016 updates rows:\n%s\nwant only the new column; the backfill fills it", step.SQL)
			}
			exec(step.SQL)
			for _, id := range []int{1, 2} {
				var got string
				if err := db.QueryRowContext(t.Context(), "SELECT phone_country FROM leads WHERE id = $1", id).Scan(&got); err != nil || got != "" {
					t.Errorf("lead %d phone_country = %q, %v; want \"\" until the backfill", id, got, err)
				}
			}
		})
	}
}
