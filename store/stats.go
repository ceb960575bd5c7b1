package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// hotTables are the tables whose queries run on every capture, claim and
// page: their plans need statistics.
var hotTables = []string{"leads", "events", "unsent_events", "event_sends", "send_requests"}

// minRowsToAnalyze is how many rows a table gets before AnalyzeNew
// analyzes it: below it, any plan is cheap.
const minRowsToAnalyze = 100

// AnalyzeNew analyzes the hot tables whose statistics say nothing of their
// rows, once they have rows, and returns their names: tables Postgres has
// never analyzed that have gained rows since they were created, and tables
// analyzed while they were empty (a VACUUM ANALYZE of a new database) that
// now hold rows. Until then, Postgres plans their queries as if they had
// none or with default selectivities, under which an account's own index
// looks as selective as its email-hash index: a capture's lookup of recent
// contacts may then read every lead of the account, and a plan the
// capture keeps (keptPlansSQL) keeps doing so until the next ANALYZE.
// Autovacuum analyzes a new table only after a minute or more; a new
// installation busy from the start would run on such plans until then.
// Once every hot table has statistics of its rows, autovacuum keeps them,
// and done is true. SQLite needs none: done at once. serve runs it every
// second for its first 10 minutes (internal/upkeep).
func (s *Store) AnalyzeNew(ctx context.Context) (analyzed []string, done bool, err error) {
	if s.dialect != "postgres" {
		return nil, true, nil
	}
	var rows []struct {
		Relname       string
		NeverAnalyzed bool
		Empty         bool // analyzed (or vacuumed) with no rows
		Modified      int64
		Live          int64
	}
	err = s.q(ctx).Raw(`
SELECT s.relname, s.last_analyze IS NULL AND s.last_autoanalyze IS NULL AS never_analyzed, c.reltuples = 0 AS empty,
	s.n_mod_since_analyze AS modified, s.n_live_tup AS live
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND s.relname IN ?`, hotTables).Scan(&rows).Error
	if err != nil {
		return nil, false, wrap("analyze new tables", err)
	}
	done = true
	for _, r := range rows {
		switch {
		case r.NeverAnalyzed && r.Modified >= minRowsToAnalyze, r.Empty && r.Live >= minRowsToAnalyze:
			analyzed = append(analyzed, r.Relname)
		case r.NeverAnalyzed || r.Empty:
			done = false
		}
	}
	if len(analyzed) > 0 {
		// The names come from the list above, never from input.
		if err := s.q(ctx).Exec("ANALYZE " + strings.Join(analyzed, ", ")).Error; err != nil {
			return nil, false, wrap("analyze new tables", err)
		}
	}
	return analyzed, done, nil
}

// CleanSearchIndex moves the rows that leads' trigram search index
// (leads_search_idx, a GIN index) keeps in its pending list into the index
// proper. Postgres otherwise does that in whichever insert finds the list
// full (gin_pending_list_limit), and that capture, with the captures of
// its account waiting behind it, waits for the whole list. Run every
// second beside the web server (internal/upkeep), the list stays small and
// the work is off the capture path. SQLite has no such index.
func (s *Store) CleanSearchIndex(ctx context.Context) error {
	if s.dialect != "postgres" {
		return nil
	}
	err := s.q(ctx).Exec(`SELECT gin_clean_pending_list(c.oid) FROM pg_class c
		WHERE c.relname = 'leads_search_idx' AND c.relnamespace = current_schema()::regnamespace`).Error
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42501" {
		return fmt.Errorf("store: clean search index: %w: %s", ErrNotOwner, pgErr.Message)
	}
	return wrap("clean search index", err)
}

// ErrNotOwner means the database user may not do a chore only a table's
// owner may (the user that ran the migrations owns them).
var ErrNotOwner = errors.New("the database user does not own the table")
