package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/web"
)

// stageBody is the JSON of POST /api/v1/stages (docs/api.md, "Stage
// changes").
type stageBody struct {
	Lead struct {
		ExternalID string `json:"external_id,omitempty"`
		Email      string `json:"email,omitempty"`
	} `json:"lead"`
	Stage      string   `json:"stage"`
	OccurredAt string   `json:"occurred_at"`
	Value      *float64 `json:"value,omitempty"`
	Currency   string   `json:"currency,omitempty"`
	ChangeID   string   `json:"change_id,omitempty"`
}

// api measures the stage API against pgbench; ok is whether it met its
// budget.
func (b *bench) api(ctx context.Context) (bool, error) {
	cfg := b.cfg
	acc, err := b.stagesAccount(ctx, "stages-api", cfg.leads, 0)
	if err != nil {
		return false, err
	}
	_, secret, err := b.st.CreateIngestKey(ctx, acc.ID, "bench")
	if err != nil {
		return false, err
	}
	base, stop, err := b.serve(web.Options{})
	if err != nil {
		return false, err
	}
	defer stop()

	fmt.Fprintf(os.Stderr, "benchstages: pgbench -n -c %d -j %d -T %s (single-row INSERT)\n", cfg.conc, cfg.threads, cfg.pgbenchT)
	pg, err := benchkit.PgbenchInsert(ctx, b.dbURL, cfg.conc, cfg.threads, cfg.pgbenchT)
	if err != nil {
		return false, err
	}
	fmt.Fprint(os.Stderr, pg.Output)

	load := &benchkit.Posts{Endpoint: base + "/api/v1/stages", Secret: secret,
		Clients: cfg.conc, PostgresPID: b.pgPID, Body: func(k int, buf *bytes.Buffer) {
			c := nthChange(k, cfg.leads)
			var body stageBody
			if c.byEmail {
				body.Lead.Email = c.email()
			} else {
				body.Lead.ExternalID = c.externalID()
			}
			body.Stage, body.Currency, body.ChangeID = c.stage, c.currency, c.changeID
			body.OccurredAt = time.Now().UTC().Format(time.RFC3339Nano)
			if c.stage == "won" {
				body.Value = &c.value
			}
			_ = json.NewEncoder(buf).Encode(&body)
		}}
	defer load.Close()
	if cfg.warmup > 0 {
		w, err := load.Run(0, cfg.warmup, "")
		if err != nil {
			return false, err
		}
		if w.Errors > 0 {
			return false, fmt.Errorf("warmup: %d of %d changes failed; first: %s", w.Errors, cfg.warmup, w.FirstErr)
		}
	}
	resetStatements(ctx, b.dbURL, b.statements)
	res, err := load.Run(cfg.warmup, cfg.changes, cfg.cpuprofile)
	if err != nil {
		return false, err
	}
	if cfg.cpuprofile != "" {
		fmt.Fprintf(os.Stderr, "benchstages: CPU profile of the stage API run in %s\n", cfg.cpuprofile)
	}
	stmts := topStatements(ctx, b.dbURL, b.statements)

	changes, events, err := stageRows(ctx, b.dbURL, acc.ID)
	if err != nil {
		return false, err
	}

	n := len(res.Lat)
	slices.Sort(res.Lat)
	rate := float64(n) / res.Wall.Seconds()
	p50, p99, pmax := benchkit.Percentile(res.Lat, 0.5), benchkit.Percentile(res.Lat, 0.99), benchkit.Percentile(res.Lat, 1)
	ratio := rate / pg.TPS
	ok := res.Errors == 0 && ratio >= cfg.budget && p99 < cfg.p99
	b.apiRate = rate
	fmt.Println()
	fmt.Printf("== stage API (docs/operations.md): %d stage changes, c=%d, POST /api/v1/stages over HTTP, %d leads in the account ==\n",
		cfg.changes, cfg.conc, cfg.leads)
	fmt.Printf("  pgbench single-row INSERT  %10.1f tps      latency avg %.3f ms (%d transactions in %s)\n", pg.TPS, pg.LatencyMs, pg.Transactions, cfg.pgbenchT)
	fmt.Printf("  POST /api/v1/stages        %10.1f changes/s p50 %.2f ms, p99 %.2f ms, max %.2f ms, errors %d (%d in %s)\n",
		rate, benchkit.Millis(p50), benchkit.Millis(p99), benchkit.Millis(pmax), res.Errors, n, res.Wall.Round(time.Millisecond))
	fmt.Printf("  stored                     %10d changes   %d events queued for them (warmup's too), statuses %v\n", changes, events, res.Status)
	if pg.PgCPU > 0 && pg.Transactions > 0 {
		fmt.Printf("  CPU per INSERT             %10.3f ms      (Postgres)\n", benchkit.Millis(pg.PgCPU)/float64(pg.Transactions))
	}
	fmt.Printf("  CPU per change             %10.3f ms      (Postgres %.3f + Go server and clients %.3f)\n",
		benchkit.Millis(res.PgCPU+res.CPU)/float64(max(n, 1)), benchkit.Millis(res.PgCPU)/float64(max(n, 1)), benchkit.Millis(res.CPU)/float64(max(n, 1)))
	fmt.Printf("  ratio                      %10.3f       budget >= %.2f, p99 < %s: %s\n", ratio, cfg.budget, cfg.p99, verdict(ok))
	printStatements("  ", stmts, n, "change")
	fmt.Printf("api_pgbench_tps=%.1f\napi_changes_per_sec=%.1f\napi_p50_ms=%.3f\napi_p99_ms=%.3f\napi_errors=%d\napi_ratio=%.3f\napi_result=%s\n",
		pg.TPS, rate, benchkit.Millis(p50), benchkit.Millis(p99), res.Errors, ratio, verdict(ok))
	if res.Errors > 0 {
		return false, fmt.Errorf("%d of %d changes failed; first: %s", res.Errors, cfg.changes, res.FirstErr)
	}
	if changes != int64(cfg.warmup+cfg.changes) {
		return false, fmt.Errorf("stored %d stage changes; want %d", changes, cfg.warmup+cfg.changes)
	}
	return ok, nil
}

// stageRows counts an account's stage changes and the events queued for
// them.
func stageRows(ctx context.Context, dbURL string, accountID int64) (changes, events int64, err error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM stage_changes WHERE account_id = $1),
	(SELECT count(*) FROM events WHERE account_id = $1 AND stage_change_id IS NOT NULL)`, accountID).Scan(&changes, &events)
	return changes, events, err
}
