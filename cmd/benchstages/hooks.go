package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

// hookBody is a generic CRM's delivery in the flat shape, which needs no
// field mapping (docs/crm.md, "What a delivery carries").
type hookBody struct {
	Email      string   `json:"email"`
	Stage      string   `json:"stage"`
	OccurredAt int64    `json:"occurred_at"`
	Value      *float64 `json:"value,omitempty"`
	Currency   string   `json:"currency,omitempty"`
	ChangeID   string   `json:"change_id"`
}

// hookSignature is the header a generic CRM signs its deliveries in.
const hookSignature = "X-Leadsignal-Signature"

// hooks measures the CRM webhooks: the answers against pgbench, and the
// time until every delivery is done against the stage API's rate; ok is
// whether the answers met their budget and every delivery was done.
func (b *bench) hooks(ctx context.Context) (bool, error) {
	cfg := b.cfg
	acc, err := b.stagesAccount(ctx, "stages-hooks", cfg.leads, 0)
	if err != nil {
		return false, err
	}
	box, err := seal.New(benchkit.RandomKey())
	if err != nil {
		return false, err
	}
	secret := rand.Text()
	conn := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Generic), Name: "Bench CRM", Token: store.NewCRMToken()}
	conn.SecretSealed = box.Seal(secret, crm.SecretLabel(conn.Token))
	if err := b.st.CreateCRMConnection(ctx, &conn); err != nil {
		return false, err
	}

	// Served as leadsignal serve serves it: the worker runs beside the
	// server, which wakes it when deliveries are stored.
	worker := crmsync.New(crmsync.Options{Store: b.st, Decider: decide.New(b.st, nil, nil), Box: box, Log: discard})
	wctx, stopWorker := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = worker.Run(wctx) })
	defer func() { stopWorker(); wg.Wait() }()
	base, stop, err := b.serve(web.Options{Box: box, CRM: web.CRMOptions{Notify: worker.Notify}})
	if err != nil {
		return false, err
	}
	defer stop()

	db, err := sql.Open("pgx", b.dbURL)
	if err != nil {
		return false, err
	}
	defer db.Close()

	fmt.Fprintf(os.Stderr, "benchstages: pgbench -n -c %d -j %d -T %s (single-row INSERT)\n", cfg.conc, cfg.threads, cfg.pgbenchT)
	pg, err := benchkit.PgbenchInsert(ctx, b.dbURL, cfg.conc, cfg.threads, cfg.pgbenchT)
	if err != nil {
		return false, err
	}
	fmt.Fprint(os.Stderr, pg.Output)

	load := &benchkit.Posts{Endpoint: base + "/hooks/generic/" + conn.Token,
		Clients: cfg.conc, PostgresPID: b.pgPID, Body: func(k int, buf *bytes.Buffer) {
			c := nthChange(k, cfg.leads)
			body := hookBody{Email: c.email(), Stage: c.stage, OccurredAt: time.Now().Unix(),
				Currency: c.currency, ChangeID: fmt.Sprintf("hook-%s-%d", runID, k)}
			if c.stage == "won" {
				body.Value = &c.value
			}
			_ = json.NewEncoder(buf).Encode(&body)
		}}
	load.Sign(hookSignature, func(body []byte) string { return crm.SignGeneric(secret, time.Now(), body) })
	defer load.Close()
	if cfg.warmup > 0 {
		w, err := load.Run(0, cfg.warmup, "")
		if err != nil {
			return false, err
		}
		if w.Errors > 0 {
			return false, fmt.Errorf("warmup: %d of %d deliveries failed; first: %s", w.Errors, cfg.warmup, w.FirstErr)
		}
		if _, err := waitDeliveries(ctx, db, conn.ID, cfg.hookWait); err != nil {
			return false, fmt.Errorf("warmup: %w", err)
		}
	}

	resetStatements(ctx, b.dbURL, b.statements)
	profile := ""
	if cfg.cpuprofile != "" {
		profile = cfg.cpuprofile + ".hooks"
	}
	stopProfile, err := benchkit.StartCPUProfile(profile)
	if err != nil {
		return false, err
	}
	start := time.Now()
	res, err := load.Run(cfg.warmup, cfg.hookDeliveries, "")
	if err != nil {
		_ = stopProfile()
		return false, err
	}
	doneAt, waitErr := waitDeliveries(ctx, db, conn.ID, cfg.hookWait)
	if err := stopProfile(); err != nil {
		return false, err
	}
	if profile != "" {
		fmt.Fprintf(os.Stderr, "benchstages: CPU profile of the webhooks (first post to all done) in %s\n", profile)
	}
	stmts := topStatements(ctx, b.dbURL, b.statements)
	counts, err := deliveryCounts(ctx, db, conn.ID)
	if err != nil {
		return false, err
	}
	changes, events, err := stageRows(ctx, b.dbURL, acc.ID)
	if err != nil {
		return false, err
	}

	n := len(res.Lat)
	slices.Sort(res.Lat)
	rate := float64(n) / res.Wall.Seconds()
	p50, p99, pmax := benchkit.Percentile(res.Lat, 0.5), benchkit.Percentile(res.Lat, 0.99), benchkit.Percentile(res.Lat, 1)
	ratio := rate / pg.TPS
	answered := res.Errors == 0 && ratio >= cfg.budget && p99 < cfg.p99
	want := int64(cfg.warmup + cfg.hookDeliveries)
	allDone := waitErr == nil && counts[models.DeliveryDone] == want
	fmt.Println()
	fmt.Printf("== CRM webhooks (docs/operations.md): %d deliveries, c=%d, POST /hooks/generic/<token> signed, %d leads in the account, the CRM worker beside the server ==\n",
		cfg.hookDeliveries, cfg.conc, cfg.leads)
	fmt.Printf("  pgbench single-row INSERT  %10.1f tps      latency avg %.3f ms (%d transactions in %s)\n", pg.TPS, pg.LatencyMs, pg.Transactions, cfg.pgbenchT)
	fmt.Printf("  answered                   %10.1f deliveries/s p50 %.2f ms, p99 %.2f ms, max %.2f ms, errors %d (%d in %s)\n",
		rate, benchkit.Millis(p50), benchkit.Millis(p99), benchkit.Millis(pmax), res.Errors, n, res.Wall.Round(time.Millisecond))
	fmt.Printf("  CPU per delivery           %10.3f ms      (Postgres %.3f + Go server, worker and clients %.3f, while answering)\n",
		benchkit.Millis(res.PgCPU+res.CPU)/float64(max(n, 1)), benchkit.Millis(res.PgCPU)/float64(max(n, 1)), benchkit.Millis(res.CPU)/float64(max(n, 1)))
	fmt.Printf("  ratio                      %10.3f       budget >= %.2f, p99 < %s: %s\n", ratio, cfg.budget, cfg.p99, verdict(answered))

	queued := 0.0
	if waitErr == nil {
		queued = float64(cfg.hookDeliveries) / doneAt.Sub(start).Seconds()
		fmt.Printf("  all done and queued        %10.1f changes/s (%d in %s from the first post; the last answer at %s)\n",
			queued, cfg.hookDeliveries, doneAt.Sub(start).Round(time.Millisecond), res.Wall.Round(time.Millisecond))
	} else {
		fmt.Printf("  all done and queued        not reached: %v\n", waitErr)
	}
	fmt.Printf("  deliveries                 %10d done     %d waiting, %d given up (warmup's too); %d stage changes stored, %d events queued for them\n",
		counts[models.DeliveryDone], counts[models.DeliveryWaiting], counts[models.DeliveryGaveUp], changes, events)
	if b.apiRate > 0 && waitErr == nil {
		fmt.Printf("  stage API (this run)       %10.1f changes/s\n", b.apiRate)
		fmt.Printf("  queued over stage API      %10.3f       reported (no budget)\n", queued/b.apiRate)
	} else if b.apiRate == 0 {
		fmt.Printf("  stage API (this run)       not measured (-only hooks): no ratio\n")
	}
	printStatements("  ", stmts, n, "delivery")
	fmt.Printf("hooks_pgbench_tps=%.1f\nhooks_deliveries_per_sec=%.1f\nhooks_p50_ms=%.3f\nhooks_p99_ms=%.3f\nhooks_errors=%d\nhooks_ratio=%.3f\nhooks_result=%s\n",
		pg.TPS, rate, benchkit.Millis(p50), benchkit.Millis(p99), res.Errors, ratio, verdict(answered))
	fmt.Printf("hooks_queued_per_sec=%.1f\nhooks_api_changes_per_sec=%.1f\nhooks_done=%d\nhooks_not_done=%d\n",
		queued, b.apiRate, counts[models.DeliveryDone], want-counts[models.DeliveryDone])
	if b.apiRate > 0 && queued > 0 {
		fmt.Printf("hooks_queued_ratio=%.3f\n", queued/b.apiRate)
	}
	if res.Errors > 0 {
		return false, fmt.Errorf("%d of %d deliveries failed; first: %s", res.Errors, cfg.hookDeliveries, res.FirstErr)
	}
	if !allDone {
		reasons, _ := waitingReasons(ctx, db, conn.ID)
		return false, fmt.Errorf("%d of %d deliveries are not done (%v); reasons: %s", want-counts[models.DeliveryDone], want, counts, reasons)
	}
	return answered, nil
}

// pollEvery is how often waitDeliveries looks: the resolution of the
// time until all are done (about 0.5% of it at 10,000 deliveries), seldom
// enough that the polls take little from the worker they wait for.
const pollEvery = 100 * time.Millisecond

// waitDeliveries waits until none of the connection's deliveries waits
// and returns when it saw that; an error after limit.
func waitDeliveries(ctx context.Context, db *sql.DB, connectionID int64, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		var waiting bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM crm_deliveries WHERE connection_id = $1 AND status = 'waiting')`,
			connectionID).Scan(&waiting); err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		if !waiting {
			return now, nil
		}
		if now.After(deadline) {
			return time.Time{}, fmt.Errorf("deliveries still waiting %s after the last answer", limit)
		}
		time.Sleep(pollEvery)
	}
}

// deliveryCounts counts a connection's deliveries by status.
func deliveryCounts(ctx context.Context, db *sql.DB, connectionID int64) (map[models.DeliveryStatus]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT status, count(*) FROM crm_deliveries WHERE connection_id = $1 GROUP BY status`, connectionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[models.DeliveryStatus]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[models.DeliveryStatus(s)] = n
	}
	return out, rows.Err()
}

// waitingReasons are the commonest reasons of a connection's deliveries
// that are not done, for the failure's message.
func waitingReasons(ctx context.Context, db *sql.DB, connectionID int64) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT status, reason, count(*) FROM crm_deliveries WHERE connection_id = $1 AND status <> 'done'
	GROUP BY status, reason ORDER BY count(*) DESC LIMIT 5`, connectionID)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var status, reason string
		var n int64
		if err := rows.Scan(&status, &reason, &n); err != nil {
			return "", err
		}
		out = append(out, fmt.Sprintf("%d %s: %q", n, status, reason))
	}
	if len(out) == 0 {
		return "none listed", rows.Err()
	}
	return strings.Join(out, "; "), rows.Err()
}
