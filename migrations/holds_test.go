package migrations_test

import (
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// TestDatasetHoldsMigration: a dataset throttled when 0013 runs is held,
// so its throttle is still honoured; the others are not.
func TestDatasetHoldsMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, holds := migratedBefore(t, dialect, 13)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, throttled_until, created_at, updated_at)
				VALUES (7, 1, 'Throttled', '1', '2999-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at)
				VALUES (8, 1, 'Fine', '2', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(holds.SQL)
			var throttledHeld, fineHeld bool
			var tries int
			err := db.QueryRowContext(t.Context(), `SELECT held_since IS NOT NULL AND hold_until IS NOT NULL, hold_tries FROM datasets WHERE id = 7`).Scan(&throttledHeld, &tries)
			if err != nil || !throttledHeld || tries != 1 {
				t.Errorf("throttled dataset: held %v, %d tries, %v; want held", throttledHeld, tries, err)
			}
			if err := db.QueryRowContext(t.Context(), `SELECT held_since IS NOT NULL FROM datasets WHERE id = 8`).Scan(&fineHeld); err != nil || fineHeld {
				t.Errorf("dataset that was not throttled: held %v, %v; want not held", fineHeld, err)
			}
		})
	}
}
