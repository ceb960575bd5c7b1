package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
)

// uploadPath names what the upload's figure measures (see the package
// comment).
const uploadPath = "the Stages page's upload (stageupload.Runner: Create, Work the preview, Apply, Work the apply) without its HTTP"

// uploadHeader is the file's header, as a CRM exports it; stagecsv.Guess
// maps every column by its name.
var uploadHeader = []string{"External ID", "Email", "Deal Stage", "Close Date", "Amount", "Currency", "Deal ID"}

// copyTable is a table of the file's columns, typed, which the baseline
// COPYs the file into.
const copyTable = `CREATE TABLE bench_copy (external_id text, email text, stage text, occurred_at timestamptz,
	amount text, currency text, change_id text)`

// uploadCSV is a file of rows stage changes (nthChange over as many
// leads): one per lead, by its external id or else its email, dated now in
// the account's time zone.
func uploadCSV(rows int, loc *time.Location) []byte {
	var b bytes.Buffer
	b.WriteString("External ID,Email,Deal Stage,Close Date,Amount,Currency,Deal ID\n")
	at := time.Now().In(loc).Format("2006-01-02 15:04:05")
	for k := range rows {
		c := nthChange(k, rows)
		ext, email := c.externalID(), c.email()
		if c.byEmail {
			ext = ""
		}
		amount := ""
		if c.stage == "won" {
			amount = strconv.FormatFloat(c.value, 'f', 0, 64)
			if k%4 == 0 && c.value >= 1000 {
				amount = fmt.Sprintf("\"%d,%03d.00\"", int(c.value)/1000, int(c.value)%1000)
			}
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", ext, email, c.stage, at, amount, c.currency, c.changeID)
	}
	return b.Bytes()
}

// upload measures a CSV upload of stage changes against COPY; ok is
// whether it met its budget.
func (b *bench) upload(ctx context.Context) (bool, error) {
	cfg := b.cfg
	acc, err := b.stagesAccount(ctx, "stages-upload", cfg.rows)
	if err != nil {
		return false, err
	}
	file := uploadCSV(cfg.rows, stagecsv.Location(acc.Timezone))

	copies, err := b.copyBaseline(ctx, file)
	if err != nil {
		return false, fmt.Errorf("copy: %w", err)
	}
	copyTime := median(copies)

	resetStatements(ctx, b.dbURL, b.statements)
	profile := ""
	if cfg.cpuprofile != "" {
		profile = cfg.cpuprofile + ".upload"
	}
	stop, err := benchkit.StartCPUProfile(profile)
	if err != nil {
		return false, err
	}
	cpu0, t0 := benchkit.CPUTime(), time.Now()
	pg0, _ := benchkit.PostgresCPU(b.pgPID)
	u, phases, err := b.uploadFile(ctx, acc.ID, file)
	wall, cpu := time.Since(t0), benchkit.CPUTime()-cpu0
	pg1, _ := benchkit.PostgresCPU(b.pgPID)
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		return false, err
	}
	if profile != "" {
		fmt.Fprintf(os.Stderr, "benchstages: CPU profile of the upload in %s\n", profile)
	}
	stmts := topStatements(ctx, b.dbURL, b.statements)

	changes, events, err := stageRows(ctx, b.dbURL, acc.ID)
	if err != nil {
		return false, err
	}
	ratio := float64(wall) / float64(copyTime)
	ok := ratio <= cfg.uploadBudget && u.Refused == 0 && u.Applied == cfg.rows
	fmt.Println()
	fmt.Printf("== CSV upload of stage changes (docs/operations.md): %d rows (%.1f MB), from the file to all events queued ==\n",
		cfg.rows, float64(len(file))/1e6)
	fmt.Printf("  measured through           %s\n", uploadPath)
	fmt.Printf("  COPY of the file           %10.1f ms      (into a table of its columns; median of %d: %s)\n",
		benchkit.Millis(copyTime), len(copies), durations(copies))
	fmt.Printf("  upload                     %10.1f ms      (%.0f rows/s)\n", benchkit.Millis(wall), float64(cfg.rows)/wall.Seconds())
	for _, p := range phases {
		fmt.Printf("    %-24s %10.1f ms\n", p.name, benchkit.Millis(p.d))
	}
	fmt.Printf("  applied                    %10d rows      replayed %d, refused %d; %d changes and %d events stored (the apply counted %d)\n",
		u.Applied, u.Replayed, u.Refused, changes, events, u.Events)
	fmt.Printf("  CPU per row                %10.3f ms      (Postgres %.3f + Go %.3f)\n",
		benchkit.Millis(pg1-pg0+cpu)/float64(cfg.rows), benchkit.Millis(pg1-pg0)/float64(cfg.rows), benchkit.Millis(cpu)/float64(cfg.rows))
	fmt.Printf("  ratio upload / COPY        %10.2f       budget <= %.1f: %s\n", ratio, cfg.uploadBudget, verdict(ok))
	printStatements("  ", stmts, cfg.rows, "row")
	fmt.Printf("upload_path=runner\nupload_rows=%d\nupload_copy_ms=%.1f\nupload_ms=%.1f\nupload_ratio=%.3f\nupload_result=%s\n",
		cfg.rows, benchkit.Millis(copyTime), benchkit.Millis(wall), ratio, verdict(ok))
	if u.Refused > 0 || u.Applied != cfg.rows {
		return false, fmt.Errorf("applied %d of %d rows, refused %d", u.Applied, cfg.rows, u.Refused)
	}
	return ok, nil
}

// copyBaseline times COPY of the file into a new table of its columns,
// cfg.copies times after one unmeasured run.
func (b *bench) copyBaseline(ctx context.Context, file []byte) ([]time.Duration, error) {
	conn, err := pgx.Connect(ctx, b.dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var out []time.Duration
	for i := -1; i < b.cfg.copies; i++ {
		if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS bench_copy; "+copyTable); err != nil {
			return nil, err
		}
		t0 := time.Now()
		tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(file), "COPY bench_copy FROM STDIN WITH (FORMAT csv, HEADER true)")
		d := time.Since(t0)
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() != int64(b.cfg.rows) {
			return nil, fmt.Errorf("COPY took %d rows; want %d", tag.RowsAffected(), b.cfg.rows)
		}
		if i >= 0 {
			out = append(out, d)
		}
	}
	_, err = conn.Exec(ctx, "DROP TABLE bench_copy")
	return out, err
}

// phase is a timed step of the upload.
type phase struct {
	name string
	d    time.Duration
}

// uploadFile does what an upload does, from the file's bytes to the end
// of its apply, through the Stages page's Runner: read, map and store the
// file, preview (a dry run), apply. It returns the upload as the apply
// left it and each step's time.
func (b *bench) uploadFile(ctx context.Context, accountID int64, file []byte) (models.StageUpload, []phase, error) {
	var phases []phase
	mark := func(name string, t0 time.Time) { phases = append(phases, phase{name, time.Since(t0)}) }
	t0 := time.Now()
	acc, err := b.st.Account(ctx, accountID)
	if err != nil {
		return models.StageUpload{}, nil, err
	}
	r := stageupload.New(stageupload.Options{Store: b.st, Decider: decide.New(b.st, nil, nil), Chunk: b.cfg.chunk})
	u, err := r.Create(ctx, acc, nil, "stages.csv", file)
	if err != nil {
		return u, nil, err
	}
	if u.Status != models.UploadPreviewing {
		return u, nil, fmt.Errorf("the file's columns were not all guessed: %s", u.Mapping)
	}
	mark("read, map, store the file", t0)

	t0 = time.Now()
	if err := r.Work(ctx, u.ID); err != nil {
		return u, nil, err
	}
	if u, err = b.st.StageUpload(ctx, acc.ID, u.ID); err != nil {
		return u, nil, err
	}
	if u.Status != models.UploadPreviewed {
		return u, nil, fmt.Errorf("preview ended %s: %s", u.Status, u.Error)
	}
	mark("preview (dry run)", t0)

	t0 = time.Now()
	if u, err = r.Apply(ctx, u, u.Pass); err != nil {
		return u, nil, err
	}
	if err := r.Work(ctx, u.ID); err != nil {
		return u, nil, err
	}
	if u, err = b.st.StageUpload(ctx, acc.ID, u.ID); err != nil {
		return u, nil, err
	}
	if u.Status != models.UploadDone {
		return u, nil, fmt.Errorf("apply ended %s: %s", u.Status, u.Error)
	}
	mark("apply", t0)
	return u, phases, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func durations(ds []time.Duration) string {
	var b bytes.Buffer
	for i, d := range ds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.0f", benchkit.Millis(d))
	}
	return b.String() + " ms"
}
