package stageupload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// An upload's pass (the preview's dry run, or the apply) runs in a
// goroutine of the server that started it, a chunk of rows at a time: each
// row is validated as the stage API validates a body, the chunk's valid
// rows go through decide's Stages (the stage API's path) in one call, and
// the chunk's progress and problems are stored before the next. The
// database is the truth: a server that stops leaves the upload running
// with its lease, which runs out, and the next server to look (every
// minute, and at start) resumes it after its last stored chunk. Rows of
// the chunk that was cut short are recorded again, which records nothing
// twice (a change recorded before is Replayed).

// lease is how long a server holds an upload between two chunks before
// another may take it over.
const lease = 2 * time.Minute

// resumeEvery is how often Run looks for uploads no server works on.
const resumeEvery = time.Minute

// Run resumes the uploads left running (by a server that stopped) at once
// and every minute, until ctx ends; then each pass stops after the chunk
// it is deciding, and Run returns once they all have.
func (r *Runner) Run(ctx context.Context) error {
	err := r.resume.Run(ctx)
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return err
}

// Start works the current pass of upload id in the background unless a
// goroutine works it here already (it then works the new pass once the old
// one ends), or Run has ended.
func (r *Runner) Start(id int64) {
	r.start(id, func(ctx context.Context, id int64) { _ = r.Work(ctx, id) })
}

func (r *Runner) start(id int64, run func(ctx context.Context, id int64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	if r.running[id] {
		r.again[id] = true
		return
	}
	r.running[id] = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			run(r.ctx, id)
			r.mu.Lock()
			more := r.again[id] && !r.stopped
			delete(r.again, id)
			if !more {
				delete(r.running, id)
			}
			r.mu.Unlock()
			if !more {
				return
			}
		}
	}()
}

// resumeUploads starts the uploads that run without a server working on
// them.
func (r *Runner) resumeUploads(ctx context.Context) error {
	ids, err := r.o.Store.StageUploadsToResume(ctx, r.o.Now())
	if err != nil {
		return err
	}
	for _, id := range ids {
		r.Start(id)
	}
	return nil
}

// Work works the current pass of upload id in the caller's goroutine,
// when it can take its lease, until it is done, replaced by a new pass, or
// ctx ends. A pass that fails is marked failed, with why, and its error
// returned; a pass it cannot take (done, or worked on by another server)
// is no error.
func (r *Runner) Work(ctx context.Context, id int64) error {
	u, err := r.o.Store.ClaimStageUpload(ctx, id, r.o.Now(), lease)
	if errors.Is(err, store.ErrNotFound) {
		return nil // done, or worked on by another server
	}
	if err != nil {
		if ctx.Err() == nil {
			r.o.Log.Error("claim stage upload", slog.Int64("upload_id", id), slog.Any("error", err))
		}
		return err
	}
	err = r.work(ctx, u)
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, store.ErrLeaseLost):
		// Done; or stopping, and the next server resumes it; or a new pass
		// replaced this one, or another server took it over (this one was
		// too slow for its lease): its writes changed nothing.
		return nil
	}
	r.o.Log.Error("stage upload", slog.Int64("upload_id", id), slog.Any("error", err))
	fail := store.UploadProgress{ID: u.ID, Lease: *u.LeaseToken, Finished: true, Status: models.UploadFailed,
		Error: "the database did not answer (" + err.Error() + ")."}
	if errors.Is(err, store.ErrStale) {
		fail.Error = "leads of this file kept changing (through the stage API or their pages) while it was recorded. " +
			"Check and apply it again: what was recorded is not recorded twice."
	}
	if cur, gerr := r.o.Store.StageUpload(context.WithoutCancel(ctx), u.AccountID, u.ID); gerr == nil {
		fail.DoneRows, fail.Applied, fail.Replayed, fail.Refused, fail.Events, fail.EventCounts =
			cur.DoneRows, cur.Applied, cur.Replayed, cur.Refused, cur.Events, cur.EventCounts
	}
	if serr := r.o.Store.SaveUploadProgress(context.WithoutCancel(ctx), fail, r.o.Now()); serr != nil && !errors.Is(serr, store.ErrLeaseLost) {
		r.o.Log.Error("stage upload: mark failed", slog.Int64("upload_id", id), slog.Any("error", serr))
	}
	return err
}

// work works upload u's pass from its first row not done. A chunk under
// way when ctx ends is finished and stored before it returns.
func (r *Runner) work(ctx context.Context, u models.StageUpload) error {
	content, err := r.o.Store.StageUploadContent(ctx, u.ID)
	if err != nil {
		return err
	}
	f, err := stagecsv.Read([]byte(content))
	if err != nil {
		return fmt.Errorf("read the file again: %w", err)
	}
	m, _, err := Decode(u)
	if err != nil {
		return err
	}
	acc, err := r.o.Store.Account(ctx, u.AccountID)
	if err != nil {
		return err
	}
	sum, err := DecodeSummary(u.EventCounts)
	if err != nil {
		return err
	}
	labels, err := DecodeLabels(u)
	if err != nil {
		return err
	}
	p := store.UploadProgress{ID: u.ID, Lease: *u.LeaseToken, DoneRows: u.DoneRows, Applied: u.Applied, Replayed: u.Replayed,
		Refused: u.Refused, Events: u.Events}
	ps := pass{decider: r.o.Decider, acc: acc, upload: u.ID, dry: u.Status == models.UploadPreviewing,
		reader: stagecsv.Reader{Mapping: m, Header: f.Header, Loc: stagecsv.Location(acc.Timezone), Currency: acc.Currency},
		labels: newReader(labels)}
	var keys []string
	if ps.dry {
		// A dry run stores nothing, so a chunk cannot see what an earlier
		// one would have recorded: the preview takes each lead's rows
		// together, in the file's order, and never splits them between
		// chunks. Leads are independent, so it counts what applying the
		// file in its own order does.
		keys = ps.groupByLead(&f, u.CreatedAt)
	}
	// The chunk under way is finished and stored even when ctx ends.
	work := context.WithoutCancel(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(p.DoneRows+r.o.Chunk, len(f.Rows))
		for keys != nil && end < len(f.Rows) && keys[end] == keys[end-1] {
			end++
		}
		problems, err := ps.chunk(work, f, p.DoneRows, end, r.o.Now(), &p, &sum)
		if err != nil {
			return err
		}
		p.Problems, p.DoneRows = problems, end
		if p.EventCounts, err = sum.encode(); err != nil {
			return err
		}
		now := r.o.Now()
		p.LeaseUntil = now.Add(lease)
		if end >= len(f.Rows) {
			p.Finished, p.Status = true, models.UploadDone
			if ps.dry {
				p.Status = models.UploadPreviewed
			}
		}
		if err := r.o.Store.SaveUploadProgress(work, p, now); err != nil {
			return err
		}
		if p.Finished {
			return nil
		}
	}
}

// pass is what a pass needs to decide its chunks.
type pass struct {
	decider *decide.Decider
	acc     models.Account
	upload  int64
	reader  stagecsv.Reader
	dry     bool
	// labels skips rows and reads labels as the upload says.
	labels reader
}

// groupByLead orders f's rows by the lead key each names (a row that
// names none first), keeping the file's order among the rows of one lead
// and moving each row's line number with it, and returns the rows' keys in
// the new order. The order depends on the file alone (and now, the time
// validation takes, fixed for the upload), so a resumed pass finds its
// rows where it left them.
func (ps pass) groupByLead(f *stagecsv.File, now time.Time) []string {
	keys := make([]string, len(f.Rows))
	for i, row := range f.Rows {
		r, bad := ps.reader.Row(row)
		if bad != nil {
			continue
		}
		if c, verr := r.Request.Change(ps.acc); verr == nil {
			keys[i] = c.Keys[0].Field + "\x00" + c.Keys[0].Value
		}
	}
	order := make([]int, len(f.Rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	rows, lines, sorted := make([][]string, len(order)), make([]int, len(order)), make([]string, len(order))
	for i, j := range order {
		rows[i], lines[i], sorted[i] = f.Rows[j], f.Lines[j], keys[j]
	}
	f.Rows, f.Lines = rows, lines
	return sorted
}

// chunk decides rows [from, to) of f: each row becomes the stage API's
// body and is validated as the API validates it, the valid ones go
// through Stages together; a row under a label the upload skips is only
// counted. It adds the rows' outcomes to p's counts and sum and returns
// the rows' problems.
func (ps pass) chunk(ctx context.Context, f stagecsv.File, from, to int, now time.Time,
	p *store.UploadProgress, sum *Summary) ([]models.StageUploadProblem, error) {
	var problems []models.StageUploadProblem
	// A problem is stored under the file's column that fed the field at
	// fault (the field itself when none did).
	refuse := func(line int, pr stagecsv.Problem) {
		where := pr.Column
		if where == "" {
			where = pr.Field
		}
		problems = append(problems, models.StageUploadProblem{RowNumber: line, Field: where, Message: pr.Message})
		p.Refused++
	}
	changes := make([]decide.Change, 0, to-from)
	rows := make([]stagecsv.Row, 0, to-from)
	lines := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		row, bad := ps.reader.Row(f.Rows[i])
		// A row is skipped by its stage as read (a won status makes it
		// won), or by its stage cell when the row cannot be read.
		label := row.Request.Stage
		if bad != nil {
			label = stagecsv.Cell(f.Rows[i], ps.reader.Mapping.Column(stagecsv.Stage))
		}
		if ps.labels.skips(label) {
			sum.Skipped++
			continue
		}
		if bad != nil {
			refuse(f.Lines[i], *bad)
			continue
		}
		c, verr := row.Request.Change(ps.acc)
		if verr != nil {
			refuse(f.Lines[i], ps.reader.Explain(row, verr.Field, verr.Message))
			continue
		}
		c.DateOnly = row.DateOnly
		c.Via, c.ViaID, c.ViaRow = models.ViaUpload, &ps.upload, &f.Lines[i]
		c.Stage = ps.labels.stage(c.Stage)
		changes = append(changes, c)
		rows = append(rows, row)
		lines = append(lines, f.Lines[i])
	}
	if len(changes) == 0 {
		return problems, nil
	}
	record := ps.decider.RecordAll
	if ps.dry {
		record = ps.decider.DryRun
	}
	outs, err := record(ctx, ps.acc.ID, changes)
	if err != nil {
		return nil, err
	}
	for i, o := range outs {
		sum.add(lines[i], o)
		switch {
		case o.Refused != nil && o.Refused.Code == decide.BeforeLead:
			refuse(lines[i], ps.reader.BeforeLead(rows[i], o.Lead.CreatedAt))
		case o.Refused != nil:
			refuse(lines[i], ps.reader.Explain(rows[i], o.Refused.Field, o.Refused.Message))
		case o.Replayed:
			p.Replayed++
		default:
			p.Applied++
			p.Events += len(o.Events)
		}
	}
	// Problems are stored by row: Stages' come after the chunk's own.
	slices.SortStableFunc(problems, func(a, b models.StageUploadProblem) int { return a.RowNumber - b.RowNumber })
	return problems, nil
}
