package upkeep_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The backfill's loop runs until every backfill is done, says so once, and
// ends; run again, it ends at once and says nothing.
func TestBackfillEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		var log bytes.Buffer
		if err := upkeep.Backfill(s, slog.New(slog.NewJSONHandler(&log, nil))).Run(t.Context()); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if !strings.Contains(log.String(), `"msg":"backfilled","backfill":"0016_lead_phone_country","leads":0`) {
			t.Errorf("log = %s; want backfilled", log.String())
		}
		log.Reset()
		if err := upkeep.Backfill(s, slog.New(slog.NewJSONHandler(&log, nil))).Run(t.Context()); err != nil || log.Len() != 0 {
			t.Errorf("Run again = %v, log %q; want nil and nothing logged", err, log.String())
		}
	})
}

// The statistics' loop ends once every hot table has statistics: at once
// on SQLite, which needs none.
func TestStatsEndsOnSQLite(t *testing.T) {
	if err := upkeep.Stats(storetest.New(t), slog.New(slog.DiscardHandler)).Run(t.Context()); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// The search index's loop stops, saying why once, when the database user
// may not clean the index (it does not own it); the owner's keeps going.
func TestSearchStopsWhenNotOwner(t *testing.T) {
	url := storetest.MigratedPostgresURL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	role := fmt.Sprintf("ls_search_%d", time.Now().UnixNano())
	if _, err := db.ExecContext(t.Context(), `CREATE ROLE `+role+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), `DROP ROLE `+role) })
	u, _ := neturl.Parse(url)
	u.User = neturl.User(role)
	reader, err := store.Open(t.Context(), store.Options{PostgresURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := upkeep.Search(reader, slog.New(slog.NewJSONHandler(&log, nil))).Run(ctx); err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (context %v); want it to end by itself", err, ctx.Err())
	}
	if n := strings.Count(log.String(), "left to Postgres"); n != 1 {
		t.Errorf("log = %s; want the reason once", log.String())
	}

	owner, err := store.Open(t.Context(), store.Options{PostgresURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ctx, cancel = context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if err := upkeep.Search(owner, slog.New(slog.DiscardHandler)).Run(ctx); ctx.Err() == nil {
		t.Errorf("the owner's loop ended by itself (%v); want it to run until stopped", err)
	}
}
