package store_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leadsignal/leadsignal/models"
)

// count_event_moves keeps one plan per session (migration 0046). Made
// while events and leads are small, as in a new installation's first
// captures, it must still read each event and lead by its key: a plan that
// scans the tables would make every count of the session read them whole
// once they had grown.
func TestCountEventMovesReadsByKeyOnNewTables(t *testing.T) {
	t.Parallel()
	s, url := postgresStore(t)
	ctx := t.Context()
	a, _ := twoAccounts(t, s)
	d := newDataset(t, s, a, models.ModeLive)

	cfg, err := pgx.ParseConfig(autoExplained(t, url))
	if err != nil {
		t.Fatal(err)
	}
	var notices planNotices
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices.add(n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	// A new installation's tables as AnalyzeNew first analyzes them: a
	// hundred-odd rows each.
	var id int64
	if err := conn.QueryRow(ctx, `WITH l AS (
		INSERT INTO leads (account_id, source, email, created_at, received_at, updated_at)
		SELECT $1, 'website', 'l' || i || '@example.com', now(), now(), now() FROM generate_series(1, 150) AS i RETURNING id)
	INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
	SELECT $1, $2, l.id, 'rule', 'Lead', 'e' || l.id, now(), now() FROM l RETURNING id`, a.ID, d.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE events, leads"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT count_event_moves(ARRAY[ROW($1, NULL, 'queued')::event_move])`, id); err != nil {
		t.Fatal(err)
	}
	plans := notices.take()
	var counting string
	for _, p := range plans {
		if strings.Contains(p, "INSERT INTO event_counts") {
			counting = p
		}
	}
	if counting == "" {
		t.Fatalf("no plan of count_event_moves' INSERT among %d notices", len(plans))
	}
	for _, want := range []string{"events_pkey", "leads_pkey"} {
		if !strings.Contains(counting, want) {
			t.Errorf("count_event_moves does not read by %s:\n%s", want, counting)
		}
	}
	if whole := wholeReads([]string{counting}, "events", "leads"); len(whole) > 0 {
		t.Errorf("count_event_moves reads a table whole:\n%s\n%s", strings.Join(whole, "\n"), counting)
	}
}
