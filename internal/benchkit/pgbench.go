package benchkit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pgbench is what pgbench's single-row INSERT reached: the capture
// budgets' baseline.
type Pgbench struct {
	TPS          float64
	LatencyMs    float64
	Transactions int64
	// PgCPU is the local Postgres cluster's CPU time in the run; 0 when
	// unknown.
	PgCPU time.Duration
	// Output is pgbench's report.
	Output string
}

// pgbenchInsert is the capture budgets' baseline transaction, as .ci/bench
// runs it: one INSERT of a lead-sized row (an email, a phone and a
// ~500-byte payload, all varying). %[1]s is the schema.
const pgbenchInsert = `\set account random(1, 100)
\set n random(1, 1000000000)
\set area random(201, 989)
\set line random(2000000, 9999999)
INSERT INTO %[1]s.bench_pg (account_id, email, phone, payload)
VALUES (:account, 'lead' || :n || '@example.com', '+1' || :area || :line,
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 ' || repeat(md5(:n::text), 12));
`

// PgbenchInsert runs pgbench (-n -c clients -j threads -T dur) with
// .ci/bench's single-row INSERT into a scratch table bench_pg of the
// private schema of dbURL (PrivateSchema's URL): the capture budgets'
// baseline, on the same Postgres as the run it is compared with.
func PgbenchInsert(ctx context.Context, dbURL string, clients, threads int, dur time.Duration) (Pgbench, error) {
	var res Pgbench
	bin := pgTool("pgbench")
	if bin == "" {
		return res, errors.New("pgbench not found (Debian package postgresql-client or postgresql)")
	}
	base, schema, err := splitSchema(dbURL)
	if err != nil {
		return res, err
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS bench_pg; CREATE TABLE bench_pg (
    id         bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    email      text NOT NULL,
    phone      text NOT NULL,
    payload    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return res, fmt.Errorf("pgbench table: %w", err)
	}
	script, err := os.CreateTemp("", "leadsignal-pgbench-*.sql")
	if err != nil {
		return res, err
	}
	defer os.Remove(script.Name())
	if _, err := fmt.Fprintf(script, pgbenchInsert, schema); err != nil {
		script.Close()
		return res, err
	}
	if err := script.Close(); err != nil {
		return res, err
	}
	pid := PostgresPID(ctx, dbURL)
	pg0, _ := PostgresCPU(pid)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-n", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(threads),
		"-T", strconv.Itoa(max(1, int(dur.Round(time.Second)/time.Second))), "-f", script.Name(), base)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("pgbench: %w: %s", err, out.String())
	}
	if pg, ok := PostgresCPU(pid); ok {
		res.PgCPU = pg - pg0
	}
	res.Output = out.String()
	num := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(res.Output); m != nil {
			return m[1]
		}
		return ""
	}
	res.TPS, _ = strconv.ParseFloat(num(tpsRE), 64)
	res.LatencyMs, _ = strconv.ParseFloat(num(latencyRE), 64)
	res.Transactions, _ = strconv.ParseInt(num(transactionsRE), 10, 64)
	if res.TPS <= 0 {
		return res, fmt.Errorf("could not read tps from pgbench's output: %s", res.Output)
	}
	return res, nil
}

var (
	tpsRE          = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	latencyRE      = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	transactionsRE = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// splitSchema is PrivateSchema's URL without its search_path (libpq
// tools refuse the parameter) and the schema it named.
func splitSchema(dbURL string) (string, string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", "", fmt.Errorf("parse database URL: %w", err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	if schema == "" {
		return "", "", errors.New("the database URL names no private schema (search_path)")
	}
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
}

// pgTool is the path of a Postgres client program: the newest
// /usr/lib/postgresql/*/bin has it, else PATH; "" when neither.
func pgTool(name string) string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(strings.Split(a, "/")[4])
		vb, _ := strconv.Atoi(strings.Split(b, "/")[4])
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if p := filepath.Join(dirs[i], name); isExec(p) {
			return p
		}
	}
	p, _ := exec.LookPath(name)
	return p
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
