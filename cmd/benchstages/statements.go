package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// statement is a row of pg_stat_statements.
type statement struct {
	calls   int64
	totalMs float64
	rows    int64
	query   string
}

// statementsAvailable creates pg_stat_statements when the Postgres has it
// loaded (shared_preload_libraries) and says whether it can be read: a
// profiling aid, printed when there.
func statementsAvailable(ctx context.Context, dbURL string) bool {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return false
	}
	defer db.Close()
	_, _ = db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public")
	_, err = db.ExecContext(ctx, "SELECT 1 FROM public.pg_stat_statements LIMIT 1")
	return err == nil
}

func resetStatements(ctx context.Context, dbURL string, on bool) {
	if !on {
		return
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return
	}
	defer db.Close()
	_, _ = db.ExecContext(ctx, "SELECT public.pg_stat_statements_reset()")
}

// topStatements are the statements that took most time in this database
// since resetStatements.
func topStatements(ctx context.Context, dbURL string, on bool) []statement {
	if !on {
		return nil
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT calls, total_exec_time, rows, query FROM public.pg_stat_statements
	WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 12`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []statement
	for rows.Next() {
		var s statement
		if err := rows.Scan(&s.calls, &s.totalMs, &s.rows, &s.query); err != nil {
			return out
		}
		out = append(out, s)
	}
	return out
}

// printStatements prints the top statements, their time per unit of work
// (n units named unit).
func printStatements(indent string, ss []statement, n int, unit string) {
	if len(ss) == 0 {
		return
	}
	fmt.Printf("%spg_stat_statements, by total time (ms per %s, calls, rows, statement):\n", indent, unit)
	for _, s := range ss {
		q := strings.Join(strings.Fields(s.query), " ")
		if len(q) > 150 {
			q = q[:150] + "..."
		}
		fmt.Printf("%s  %8.3f ms %8d calls %9d rows  %s\n", indent, s.totalMs/float64(max(n, 1)), s.calls, s.rows, q)
	}
}
