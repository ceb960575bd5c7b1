package migrations_test

import (
	"strconv"
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// first0016 is migration 0016 as it was first released, when it filled
// phone_country for every lead in its one transaction.
var first0016 = map[string]string{
	migrations.Postgres: `ALTER TABLE leads ADD COLUMN phone_country text NOT NULL DEFAULT '';
UPDATE leads SET phone_country = COALESCE(CAST(match_keys AS jsonb) ->> 'phone_country', '')
WHERE phone_e164 <> '' AND match_keys LIKE '%"phone_country"%';`,
	migrations.SQLite: `ALTER TABLE leads ADD COLUMN phone_country text NOT NULL DEFAULT '';
UPDATE leads SET phone_country = COALESCE(json_extract(match_keys, '$.phone_country'), '')
WHERE phone_e164 <> '' AND match_keys LIKE '%"phone_country"%' AND json_valid(match_keys);`,
}

// A database that ran the first 0016 keeps its leads' phone countries: Up
// does not run the step again, and adds schema_backfills, where the
// backfill then finds nothing left to fill.
func TestUpAfterFirst0016(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, _ := migratedBefore(t, dialect, 16)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, phone_e164, match_keys, created_at, received_at, updated_at)
				VALUES (1, 1, 'website', '4930901820', '{"ph":{"normalized":"4930901820","hash":"x"},"phone_country":"DE"}', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(first0016[dialect])
			// The bookkeeping of the version that ran it.
			exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamp NOT NULL)`)
			steps, err := migrations.Steps(dialect)
			if err != nil {
				t.Fatal(err)
			}
			ran := map[string]bool{}
			for _, s := range steps {
				if s.Version <= 16 {
					ran[s.Name] = true
					exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (` + strconv.Itoa(s.Version) + `, '` + s.Name + `', '2026-12-01 00:00:00')`)
				}
			}

			applied, err := migrations.Up(t.Context(), db, dialect)
			if err != nil {
				t.Fatalf("Up = %v", err)
			}
			for _, name := range applied {
				if ran[name] {
					t.Errorf("Up applied %s again; want only later steps", name)
				}
			}
			var country string
			if err := db.QueryRowContext(t.Context(), "SELECT phone_country FROM leads WHERE id = 1").Scan(&country); err != nil || country != "DE" {
				t.Errorf("phone_country = %q, %v; want DE, as the first 0016 left it", country, err)
			}
			var n int
			if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM schema_backfills").Scan(&n); err != nil || n != 0 {
				t.Errorf("schema_backfills has %d rows, %v; want the table, empty: no backfill has started", n, err)
			}
		})
	}
}
