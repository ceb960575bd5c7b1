package migrations_test

import (
	"strconv"
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// Migration 0034 adds the sales role and makes today's viewers sales: they
// marked stages on the lead page, which from now on only sales and above
// do. Owners and editors keep their roles, and every role is accepted
// after it while a made-up one is still refused.
func TestSalesRoleMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, step := migratedBefore(t, dialect, 34)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			for i, email := range []string{"owner@example.com", "editor@example.com", "viewer@example.com", "new@example.com"} {
				exec(`INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES (` + strconv.Itoa(i+1) + `, '` + email + `', '', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			}
			exec(`INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (1, 1, 'owner', '2026-01-01 00:00:00'),
				(1, 2, 'editor', '2026-01-01 00:00:00'), (1, 3, 'viewer', '2026-01-01 00:00:00')`)
			exec(step.SQL)

			want := map[int]string{1: "owner", 2: "editor", 3: "sales"}
			for id, role := range want {
				var got string
				if err := db.QueryRowContext(t.Context(), "SELECT role FROM memberships WHERE account_id = 1 AND user_id = $1", id).Scan(&got); err != nil || got != role {
					t.Errorf("user %d role = %q, %v; want %q", id, got, err, role)
				}
			}
			exec(`INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (1, 4, 'viewer', '2026-01-01 00:00:00')`)
			exec(`UPDATE memberships SET role = 'sales' WHERE user_id = 4`)
			if _, err := db.ExecContext(t.Context(), `UPDATE memberships SET role = 'admin' WHERE user_id = 4`); err == nil {
				t.Error("role 'admin' accepted; want the CHECK to refuse it")
			}
			// The users' index of memberships is back: the account list
			// of a user reads by it.
			var n int
			q := `SELECT count(*) FROM pg_indexes WHERE indexname = 'memberships_user_idx'`
			if dialect == migrations.SQLite {
				q = `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'memberships_user_idx'`
			}
			if err := db.QueryRowContext(t.Context(), q).Scan(&n); err != nil || n != 1 {
				t.Errorf("memberships_user_idx: %d, %v; want it kept", n, err)
			}
		})
	}
}
