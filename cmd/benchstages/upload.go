package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/web"
)

// uploadPath names what the upload's figures measure (see the package
// comment).
const uploadPath = "the real web server over HTTP: the Stages page's upload and apply, and POST /api/v1/stage-uploads and its apply"

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

// uploadRun is one upload's measure: from the request that sends the
// file to the last event queued.
type uploadRun struct {
	wall, cpu, pgCPU time.Duration
	phases           []phase
	upload           models.StageUpload
	changes, events  int64
}

// phase is a timed step of an upload.
type phase struct {
	name string
	d    time.Duration
}

// upload measures a CSV upload of stage changes, through the Stages page
// and through the API, each into an account of its own, against COPY of
// the rows the page's upload wrote into the same tables; ok is whether
// both met the budget.
func (b *bench) upload(ctx context.Context) (bool, error) {
	cfg := b.cfg
	const email, pw = "bench-upload@example.com", "bench-password-1"
	hash, err := password.Hash(pw)
	if err != nil {
		return false, err
	}
	user, err := b.st.CreateUser(ctx, email, hash, false)
	if err != nil {
		return false, err
	}
	pageAcc, err := b.stagesAccount(ctx, "stages-upload", cfg.rows, user.ID)
	if err != nil {
		return false, err
	}
	apiAcc, err := b.stagesAccount(ctx, "stages-upload-api", cfg.rows, 0)
	if err != nil {
		return false, err
	}
	_, secret, err := b.st.CreateIngestKey(ctx, apiAcc.ID, "bench")
	if err != nil {
		return false, err
	}
	file := uploadCSV(cfg.rows, stagecsv.Location(pageAcc.Timezone))

	// The server runs the uploads' passes in the background, as serve does.
	runner := stageupload.New(stageupload.Options{Store: b.st, Decider: decide.New(b.st, nil, nil), Log: discard, Chunk: cfg.chunk})
	base, stop, err := b.serve(web.Options{Uploads: runner})
	if err != nil {
		return false, err
	}
	defer stop()
	client, err := signIn(base, email, pw)
	if err != nil {
		return false, err
	}

	resetStatements(ctx, b.dbURL, b.statements)
	profile := ""
	if cfg.cpuprofile != "" {
		profile = cfg.cpuprofile + ".upload"
	}
	stopProfile, err := benchkit.StartCPUProfile(profile)
	if err != nil {
		return false, err
	}
	before, err := b.lastIDs(ctx)
	if err != nil {
		return false, err
	}
	if err := b.settle(ctx); err != nil {
		return false, err
	}
	page, err := b.measure(ctx, pageAcc.ID, func() (models.StageUpload, []phase, error) {
		return b.uploadPage(ctx, client, base, pageAcc.ID, file)
	})
	if serr := stopProfile(); err == nil {
		err = serr
	}
	if err != nil {
		return false, fmt.Errorf("page: %w", err)
	}
	if profile != "" {
		fmt.Fprintf(os.Stderr, "benchstages: CPU profile of the page's upload in %s\n", profile)
	}
	stmts := topStatements(ctx, b.dbURL, b.statements)
	after, err := b.lastIDs(ctx)
	if err != nil {
		return false, err
	}

	if err := b.settle(ctx); err != nil {
		return false, err
	}
	api, err := b.measure(ctx, apiAcc.ID, func() (models.StageUpload, []phase, error) {
		return b.uploadAPI(ctx, base, secret, apiAcc.ID, file)
	})
	if err != nil {
		return false, fmt.Errorf("API: %w", err)
	}

	// The baseline's rows stay in the tables: it runs after both uploads,
	// on tables as large as theirs or larger.
	copies, copied, err := b.copyBaseline(ctx, pageAcc.ID, before, after)
	if err != nil {
		return false, fmt.Errorf("copy: %w", err)
	}
	copyTime := median(copies)

	pageRatio, apiRatio := float64(page.wall)/float64(copyTime), float64(api.wall)/float64(copyTime)
	whole := func(r uploadRun) bool { return r.upload.Refused == 0 && r.upload.Applied == cfg.rows }
	ok := pageRatio <= cfg.uploadBudget && apiRatio <= cfg.uploadBudget && whole(page) && whole(api)
	fmt.Println()
	fmt.Printf("== CSV upload of stage changes (docs/operations.md): %d rows (%.1f MB), from the request to the last event queued ==\n",
		cfg.rows, float64(len(file))/1e6)
	fmt.Printf("  measured through           %s\n", uploadPath)
	fmt.Printf("  COPY of the rows written   %10.1f ms      (%s; median of %d: %s)\n",
		benchkit.Millis(copyTime), copied, len(copies), durations(copies))
	for _, r := range []struct {
		name  string
		run   uploadRun
		ratio float64
	}{{"the Stages page", page, pageRatio}, {"the API", api, apiRatio}} {
		fmt.Printf("  upload by %-16s %10.1f ms      (%.0f rows/s) ratio to COPY %.2f\n", r.name, benchkit.Millis(r.run.wall),
			float64(cfg.rows)/r.run.wall.Seconds(), r.ratio)
		for _, p := range r.run.phases {
			fmt.Printf("    %-24s %10.1f ms\n", p.name, benchkit.Millis(p.d))
		}
		u := r.run.upload
		fmt.Printf("    applied                  %10d rows      replayed %d, refused %d; %d changes and %d events stored (the apply counted %d)\n",
			u.Applied, u.Replayed, u.Refused, r.run.changes, r.run.events, u.Events)
		fmt.Printf("    CPU per row              %10.3f ms      (Postgres %.3f + Go, server and client, %.3f)\n",
			benchkit.Millis(r.run.pgCPU+r.run.cpu)/float64(cfg.rows), benchkit.Millis(r.run.pgCPU)/float64(cfg.rows),
			benchkit.Millis(r.run.cpu)/float64(cfg.rows))
	}
	fmt.Printf("  ratio upload / COPY        %10.2f       (the slower of the two) budget <= %.1f: %s\n",
		max(pageRatio, apiRatio), cfg.uploadBudget, verdict(ok))
	fmt.Println("  the page's upload:")
	printStatements("  ", stmts, cfg.rows, "row")
	fmt.Printf("upload_path=http\nupload_rows=%d\nupload_copy_ms=%.1f\nupload_page_ms=%.1f\nupload_api_ms=%.1f\nupload_page_ratio=%.3f\nupload_api_ratio=%.3f\nupload_result=%s\n",
		cfg.rows, benchkit.Millis(copyTime), benchkit.Millis(page.wall), benchkit.Millis(api.wall), pageRatio, apiRatio, verdict(ok))
	for _, r := range []uploadRun{page, api} {
		if !whole(r) {
			return false, fmt.Errorf("upload %d applied %d of %d rows, refused %d", r.upload.ID, r.upload.Applied, cfg.rows, r.upload.Refused)
		}
	}
	return ok, nil
}

// measure times run, an upload into account accountID, with the CPU it
// took, and counts what it stored.
func (b *bench) measure(ctx context.Context, accountID int64, run func() (models.StageUpload, []phase, error)) (uploadRun, error) {
	var r uploadRun
	cpu0, t0 := benchkit.CPUTime(), time.Now()
	pg0, _ := benchkit.PostgresCPU(b.pgPID)
	u, phases, err := run()
	r.wall, r.cpu = time.Since(t0), benchkit.CPUTime()-cpu0
	pg1, _ := benchkit.PostgresCPU(b.pgPID)
	if err != nil {
		return r, err
	}
	r.pgCPU, r.upload, r.phases = pg1-pg0, u, phases
	r.changes, r.events, err = stageRows(ctx, b.dbURL, accountID)
	return r, err
}

// uploadPage uploads file through the Stages page as a person does: the
// form's POST, the preview that runs in the server's background, the
// apply button, the apply's pass. It follows the passes by the upload's
// row, which the page's progress bar reads.
func (b *bench) uploadPage(ctx context.Context, c *http.Client, base string, accountID int64, file []byte) (models.StageUpload, []phase, error) {
	var phases []phase
	mark := func(name string, t0 time.Time) { phases = append(phases, phase{name, time.Since(t0)}) }
	prefix := base + "/accounts/" + strconv.FormatInt(accountID, 10) + "/stages/uploads"
	token, err := csrfToken(c, prefix)
	if err != nil {
		return models.StageUpload{}, nil, err
	}
	t0 := time.Now()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("_csrf", token)
	fw, _ := mw.CreateFormFile("file", "deals.csv")
	_, _ = fw.Write(file)
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, prefix, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	loc, err := redirect(c, req)
	if err != nil {
		return models.StageUpload{}, nil, fmt.Errorf("upload the file: %w", err)
	}
	id, err := strconv.ParseInt(loc[strings.LastIndexByte(loc, '/')+1:], 10, 64)
	if err != nil {
		return models.StageUpload{}, nil, fmt.Errorf("upload the file: redirected to %q", loc)
	}
	u, err := b.waitUpload(ctx, accountID, id, models.UploadPreviewed)
	if err != nil {
		return u, nil, err
	}
	mark("upload and preview", t0)

	t0 = time.Now()
	form := url.Values{"_csrf": {token}, "pass": {strconv.Itoa(u.Pass)}}
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, prefix+"/"+strconv.FormatInt(id, 10)+"/apply", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := redirect(c, req); err != nil {
		return u, nil, fmt.Errorf("apply: %w", err)
	}
	if u, err = b.waitUpload(ctx, accountID, id, models.UploadDone); err != nil {
		return u, nil, err
	}
	mark("apply", t0)
	return u, phases, nil
}

// uploadPoll is how often the bench looks whether a pass has ended: the
// resolution of the upload's time (a quarter of a percent of it at 50,000
// rows), seldom enough that the API's answers, each the upload's report,
// take little from the passes they wait for.
const uploadPoll = 100 * time.Millisecond

// waitUpload waits until upload id's pass ends, and wants it to end as
// want.
func (b *bench) waitUpload(ctx context.Context, accountID, id int64, want models.StageUploadStatus) (models.StageUpload, error) {
	for {
		u, err := b.st.StageUpload(ctx, accountID, id)
		if err != nil || !u.Running() {
			if err == nil && u.Status != want {
				err = fmt.Errorf("upload %d ended %s, not %s: %s", id, u.Status, want, u.Error)
			}
			return u, err
		}
		time.Sleep(uploadPoll)
	}
}

// uploadAPI uploads file as automation does: POST /api/v1/stage-uploads
// (which answers the preview), its apply, then GET until it is done.
func (b *bench) uploadAPI(ctx context.Context, base, secret string, accountID int64, file []byte) (models.StageUpload, []phase, error) {
	var phases []phase
	mark := func(name string, t0 time.Time) { phases = append(phases, phase{name, time.Since(t0)}) }
	call := func(method, path string, body []byte) (apiUpload, error) {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		if body != nil {
			req.Header.Set("Content-Type", "text/csv")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return apiUpload{}, err
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var u apiUpload
		if res.StatusCode >= 300 {
			return u, fmt.Errorf("%s %s: status %d: %s", method, path, res.StatusCode, raw)
		}
		return u, json.Unmarshal(raw, &u)
	}
	wait := func(id int64, want models.StageUploadStatus) error {
		for {
			u, err := call(http.MethodGet, "/api/v1/stage-uploads/"+strconv.FormatInt(id, 10), nil)
			switch {
			case err != nil:
				return err
			case u.Status == want:
				return nil
			case u.Status != models.UploadPreviewing && u.Status != models.UploadApplying:
				return fmt.Errorf("upload %d ended %s, not %s: %s", id, u.Status, want, u.Failure)
			}
			time.Sleep(uploadPoll)
		}
	}
	t0 := time.Now()
	u, err := call(http.MethodPost, "/api/v1/stage-uploads?name=deals.csv", file)
	if err != nil {
		return models.StageUpload{}, nil, err
	}
	if u.Status != models.UploadPreviewed {
		if err := wait(u.ID, models.UploadPreviewed); err != nil {
			return models.StageUpload{}, nil, err
		}
	}
	mark("upload and preview", t0)
	t0 = time.Now()
	if _, err := call(http.MethodPost, "/api/v1/stage-uploads/"+strconv.FormatInt(u.ID, 10)+"/apply", nil); err != nil {
		return models.StageUpload{}, nil, err
	}
	if err := wait(u.ID, models.UploadDone); err != nil {
		return models.StageUpload{}, nil, err
	}
	mark("apply", t0)
	done, err := b.st.StageUpload(ctx, accountID, u.ID)
	return done, phases, err
}

// apiUpload is what the bench reads of the stage uploads API's answers.
type apiUpload struct {
	ID      int64                    `json:"id"`
	Status  models.StageUploadStatus `json:"status"`
	Failure string                   `json:"failure"`
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn logs in through the form, as a browser does, and returns a client
// holding the session that does not follow redirects.
func signIn(base, email, pw string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token, err := csrfToken(c, base+"/login")
	if err != nil {
		return nil, err
	}
	res, err := c.PostForm(base+"/login", url.Values{"email": {email}, "password": {pw}, "_csrf": {token}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("login: status %d", res.StatusCode)
	}
	return c, nil
}

// csrfToken is the CSRF token of the form on page u.
func csrfToken(c *http.Client, u string) (string, error) {
	res, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	m := csrfRE.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		return "", fmt.Errorf("%s: status %d, no form with a CSRF token", u, res.StatusCode)
	}
	return string(m[1]), nil
}

// redirect sends a form's request and returns where it redirects to.
func redirect(c *http.Client, req *http.Request) (string, error) {
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 500))
		return "", fmt.Errorf("status %d: %s", res.StatusCode, body)
	}
	return res.Header.Get("Location"), nil
}

// settle readies the database for a measured step alike for the uploads
// and the COPYs: the tables the upload reads and writes vacuumed and
// analyzed (autovacuum would otherwise start on them during whichever step
// comes next after a large write) and a checkpoint (each step then writes
// its pages' first images after one).
func (b *bench) settle(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, b.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE leads, stage_changes, events, unsent_events"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	// Only a superuser (or pg_checkpoint) may: without it, steps start
	// wherever the last checkpoint left them.
	_, _ = conn.Exec(ctx, "CHECKPOINT")
	return nil
}

// ids are the last ids of the tables an upload writes.
type ids struct{ change, event int64 }

func (b *bench) lastIDs(ctx context.Context) (ids, error) {
	var last ids
	conn, err := pgx.Connect(ctx, b.dbURL)
	if err != nil {
		return last, err
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM stage_changes), (SELECT coalesce(max(id), 0) FROM events)`).
		Scan(&last.change, &last.event)
	return last, err
}

// copyBaseline times COPY of exactly the rows the upload into account
// accountID wrote, its rows with ids after before and up to after (its
// stage changes, events and their queue rows), into the same tables, with
// their indexes, foreign keys and triggers, in one transaction, a COPY per
// table: cfg.copies times after one unmeasured run. Each run's rows are
// the upload's with new ids, and suffixed change and event ids, which the
// tables' unique keys take; they are the same leads', account's and
// datasets'. It returns the times and what one run copies.
func (b *bench) copyBaseline(ctx context.Context, accountID int64, before, after ids) ([]time.Duration, string, error) {
	conn, err := pgx.Connect(ctx, b.dbURL)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close(ctx)
	var times []time.Duration
	var counts [3]int64
	for i := -1; i < b.cfg.copies; i++ {
		var files [3][]byte
		files, counts, err = copyFiles(ctx, conn, accountID, before, after, fmt.Sprintf("~copy%d", i+2))
		if err != nil {
			return nil, "", err
		}
		if err := b.settle(ctx); err != nil {
			return nil, "", err
		}
		t0 := time.Now()
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for k, table := range copyTables {
				if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(files[k]), "COPY "+table+" FROM STDIN (FORMAT binary)"); err != nil {
					return fmt.Errorf("%s: %w", table, err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
		if d := time.Since(t0); i >= 0 {
			times = append(times, d)
		}
	}
	return times, fmt.Sprintf("%d stage changes, %d events, %d queue rows into the same tables, one transaction", counts[0], counts[1], counts[2]), nil
}

// copyTables are the tables the upload writes new rows into, in the order
// of their foreign keys.
var copyTables = []string{"stage_changes", "events", "unsent_events"}

// copyFiles are the rows the upload wrote, as COPY's binary files of
// copyTables, and how many each holds: ids moved past every id the tables
// hold (and the sequences past them), change and event ids given suffix.
func copyFiles(ctx context.Context, conn *pgx.Conn, accountID int64, before, after ids, suffix string) ([3][]byte, [3]int64, error) {
	var files [3][]byte
	var counts [3]int64
	var changeShift, eventShift int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT max(id) FROM stage_changes) - $1, (SELECT max(id) FROM events) - $2`,
		before.change, before.event).Scan(&changeShift, &eventShift); err != nil {
		return files, counts, err
	}
	if _, err := conn.Exec(ctx, `SELECT setval('stage_changes_id_seq', $1), setval('events_id_seq', $2)`,
		after.change+changeShift+1, after.event+eventShift+1); err != nil {
		return files, counts, err
	}
	stmts := []string{
		`CREATE TEMP TABLE copy_changes ON COMMIT DROP AS SELECT * FROM stage_changes WHERE account_id = $1 AND id > $2 AND id <= $3`,
		`UPDATE copy_changes SET id = id + $1, change_id = change_id || $2`,
		`CREATE TEMP TABLE copy_events ON COMMIT DROP AS SELECT * FROM events WHERE account_id = $1 AND id > $2 AND id <= $3`,
		`CREATE TEMP TABLE copy_unsent ON COMMIT DROP AS SELECT u.* FROM unsent_events u JOIN copy_events e ON e.id = u.event_id`,
		`UPDATE copy_events SET id = id + $1, event_id = event_id || $2, stage_change_id = stage_change_id + $3`,
		`UPDATE copy_unsent SET event_id = event_id + $1`,
	}
	args := [][]any{{accountID, before.change, after.change}, {changeShift, suffix}, {accountID, before.event, after.event}, nil,
		{eventShift, suffix, changeShift}, {eventShift}}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for i, s := range stmts {
			if _, err := tx.Exec(ctx, s, args[i]...); err != nil {
				return err
			}
		}
		for k, t := range []string{"copy_changes", "copy_events", "copy_unsent"} {
			var buf bytes.Buffer
			tag, err := tx.Conn().PgConn().CopyTo(ctx, &buf, "COPY "+t+" TO STDOUT (FORMAT binary)")
			if err != nil {
				return err
			}
			files[k], counts[k] = buf.Bytes(), tag.RowsAffected()
		}
		return nil
	})
	if err == nil && (counts[0] == 0 || counts[1] == 0) {
		err = errors.New("the upload wrote no rows to copy")
	}
	return files, counts, err
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
