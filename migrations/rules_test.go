package migrations_test

import (
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// Migration 0015 gives every existing dataset the rule that does what
// capture did before rules: complete, non-junk leads become Lead events.
func TestSendRulesMigration(t *testing.T) {
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
