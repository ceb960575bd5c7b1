package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// uploadPath names what the upload's figure measures (see the package
// comment).
const uploadPath = "functions the upload is built from (stagecsv, store's uploads, decide.Stages): the Stages page's upload handler and worker are not built yet"

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
	fmt.Printf("upload_path=functions\nupload_rows=%d\nupload_copy_ms=%.1f\nupload_ms=%.1f\nupload_ratio=%.3f\nupload_result=%s\n",
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
// of its apply: read and map the file, store it, preview (a dry run),
// apply. It returns the upload as the apply left it and each step's time.
func (b *bench) uploadFile(ctx context.Context, accountID int64, file []byte) (models.StageUpload, []phase, error) {
	var phases []phase
	mark := func(name string, t0 time.Time) { phases = append(phases, phase{name, time.Since(t0)}) }
	t0 := time.Now()
	acc, err := b.st.Account(ctx, accountID)
	if err != nil {
		return models.StageUpload{}, nil, err
	}
	f, err := stagecsv.Read(file)
	if err != nil {
		return models.StageUpload{}, nil, err
	}
	m := stagecsv.Guess(f, acc.DefaultCountry)
	if ps := m.Problems(f.Header); len(ps) > 0 {
		return models.StageUpload{}, nil, fmt.Errorf("mapping: %v", ps)
	}
	type column struct {
		Name   string `json:"name"`
		Sample string `json:"sample"`
	}
	var cols []column
	for i, h := range f.Header {
		cols = append(cols, column{h, stagecsv.Cell(f.Rows[0], i)})
	}
	now := time.Now().UTC()
	u := models.StageUpload{AccountID: acc.ID, FileName: "stages.csv", Header: mustJSON(cols), Mapping: mustJSON(m),
		Status: models.UploadMapping, TotalRows: len(f.Rows), EventCounts: "{}", CreatedAt: now, UpdatedAt: now}
	if err := b.st.CreateStageUpload(ctx, &u, string(file)); err != nil {
		return u, nil, err
	}
	mark("read, map, store the file", t0)

	decider := decide.New(b.st, nil, nil)
	for _, pass := range []struct {
		name   string
		status models.StageUploadStatus
		from   models.StageUploadStatus
		end    models.StageUploadStatus
		dry    bool
	}{
		{"preview (dry run)", models.UploadPreviewing, models.UploadMapping, models.UploadPreviewed, true},
		{"apply", models.UploadApplying, models.UploadPreviewed, models.UploadDone, false},
	} {
		t0 := time.Now()
		if u, err = b.st.StartStageUpload(ctx, acc.ID, u.ID, u.Mapping, pass.status, []models.StageUploadStatus{pass.from}, time.Now()); err != nil {
			return u, nil, err
		}
		if u, err = b.st.ClaimStageUpload(ctx, u.ID, time.Now(), time.Minute); err != nil {
			return u, nil, err
		}
		if u, err = b.pass(ctx, decider, acc, u, f, m, pass.dry, pass.end); err != nil {
			return u, nil, err
		}
		mark(pass.name, t0)
	}
	return u, phases, nil
}

// pass works one pass of an upload, a chunk of rows at a time: each row
// becomes the stage API's body, is validated as the API validates it, and
// the chunk's changes are recorded (or, dry, decided) by decide.Stages;
// the progress is saved after each chunk.
func (b *bench) pass(ctx context.Context, d *decide.Decider, acc models.Account, u models.StageUpload, f stagecsv.File,
	m stagecsv.Mapping, dry bool, end models.StageUploadStatus) (models.StageUpload, error) {
	loc := stagecsv.Location(acc.Timezone)
	p := store.UploadProgress{ID: u.ID, Pass: u.Pass}
	counts := map[string]int{}
	for start := 0; start < len(f.Rows); start += b.cfg.chunk {
		rows := f.Rows[start:min(start+b.cfg.chunk, len(f.Rows))]
		var changes []decide.Change
		var lines []int
		p.Problems = nil
		for i, row := range rows {
			line := f.Lines[start+i]
			req, prob := m.Request(row, loc)
			if prob != nil {
				p.Problems = append(p.Problems, models.StageUploadProblem{RowNumber: line, Field: prob.Field, Message: prob.Message})
				continue
			}
			c, verr := req.Change(acc)
			if verr != nil {
				p.Problems = append(p.Problems, models.StageUploadProblem{RowNumber: line, Field: verr.Field, Message: verr.Message})
				continue
			}
			changes = append(changes, c)
			lines = append(lines, line)
		}
		record := d.RecordAll
		if dry {
			record = d.DryRun
		}
		out, err := record(ctx, acc.ID, changes)
		if err != nil {
			return u, err
		}
		for i, o := range out {
			switch {
			case o.Refused != nil:
				p.Problems = append(p.Problems, models.StageUploadProblem{RowNumber: lines[i], Field: o.Refused.Field, Message: o.Refused.Message})
			case o.Replayed:
				p.Replayed++
			default:
				p.Applied++
				p.Events += len(o.Events)
				for _, e := range o.Events {
					counts[e.EventName]++
				}
			}
		}
		p.Refused += len(p.Problems)
		p.DoneRows += len(rows)
		p.EventCounts = mustJSON(counts)
		p.LeaseUntil = time.Now().Add(time.Minute)
		if p.DoneRows == len(f.Rows) {
			p.Finished, p.Status = true, end
		}
		if err := b.st.SaveUploadProgress(ctx, p, time.Now()); err != nil {
			return u, err
		}
	}
	return b.st.StageUpload(ctx, acc.ID, u.ID)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
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
