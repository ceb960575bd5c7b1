package stageupload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Submission is an upload as automation gives it (POST
// /api/v1/stage-uploads, the CLI): the file, and optionally the columns
// that fill some fields and labels read as stages for this upload.
type Submission struct {
	// UserID is who uploaded it; nil for an ingest key.
	UserID *int64
	Name   string
	Raw    []byte
	// Columns name the file's column (its header, compared ignoring case,
	// spaces and punctuation) that fills a field, "" for none; the fields
	// left out keep the guess.
	Columns map[stagecsv.Target]string
	// Aliases read labels as the account's stages, for this upload only.
	Aliases []StageAlias
	// Dates is the order of the file's dates with slashes or dashes, as
	// automation names it (the API's dates parameter, the CLI's --dates):
	// month_first or day_first; "" keeps the guess.
	Dates string
}

// datesName is date order o as a Submission's Dates and a Report name it.
func datesName(o stagecsv.DateOrder) string {
	if o == stagecsv.DayFirst {
		return "day_first"
	}
	return "month_first"
}

// RequestError says why a submission's columns or stage aliases cannot
// be used: Field is "columns" or "stage_aliases".
type RequestError struct {
	Field   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

// Submit stores a submission as an account's upload, its preview ready to
// be worked (Work, or Start). The file's problems are a
// *stagecsv.FileError; columns or aliases that cannot be used, or a
// required field no column fills, a *RequestError. Nothing is stored on
// error.
func (r *Runner) Submit(ctx context.Context, acc models.Account, s Submission) (models.StageUpload, error) {
	return r.create(ctx, acc, s, true)
}

// check applies s's columns to m, the guess for f, and checks s's stage
// aliases against the account's stages; strict, it refuses columns that
// leave a required field unfilled.
func (r *Runner) check(ctx context.Context, acc models.Account, s Submission, f stagecsv.File, m *stagecsv.Mapping, strict bool) error {
	switch s.Dates {
	case "":
	case datesName(stagecsv.MonthFirst):
		m.DateOrder = stagecsv.MonthFirst
	case datesName(stagecsv.DayFirst):
		m.DateOrder = stagecsv.DayFirst
	default:
		return &RequestError{Field: "dates", Message: fmt.Sprintf("dates: %q is no date order; say month_first (12/01/2026 is December 1) or day_first (1 December)", name.Cut(s.Dates, 60))}
	}
	for _, t := range stagecsv.Targets {
		header, ok := s.Columns[t]
		if !ok {
			continue
		}
		if m.Columns == nil {
			m.Columns = map[stagecsv.Target]int{}
		}
		if header == "" {
			delete(m.Columns, t)
			continue
		}
		i := slices.Index(f.Header, header)
		if i < 0 {
			i = slices.IndexFunc(f.Header, func(h string) bool { return name.StageKey(h) != "" && name.StageKey(h) == name.StageKey(header) })
		}
		if i < 0 {
			return &RequestError{Field: "columns", Message: fmt.Sprintf("columns: the file has no column %q; its columns are %s",
				name.Cut(header, 60), quoteAll(f.Header, 30))}
		}
		m.Columns[t] = i
	}
	if strict {
		if ps := m.Problems(f.Header); len(ps) > 0 {
			return &RequestError{Field: "columns", Message: "columns: " + strings.Join(ps, " ") +
				" Name it with columns=<field>:<column>, e.g. columns=stage:Deal Stage."}
		}
	}
	if len(s.Aliases) == 0 {
		return nil
	}
	if len(s.Aliases) > MaxStageAliases {
		return &RequestError{Field: "stage_aliases", Message: fmt.Sprintf("stage_aliases: at most %d labels, not %d", MaxStageAliases, len(s.Aliases))}
	}
	stages, err := r.o.Store.Stages(ctx, acc.ID)
	if err != nil {
		return err
	}
	ix := name.NewStages(stages, nil)
	for i, a := range s.Aliases {
		if msg := name.StageProblem(a.Label); msg != "" {
			return &RequestError{Field: "stage_aliases", Message: fmt.Sprintf("stage_aliases: label %q: %s", name.Cut(a.Label, 60), msg)}
		}
		if name.StageKey(a.Label) == "" {
			return &RequestError{Field: "stage_aliases", Message: fmt.Sprintf("stage_aliases: label %q has no letter or digit", a.Label)}
		}
		stage, ok := ix.Resolve(a.Stage)
		if !ok {
			return &RequestError{Field: "stage_aliases", Message: fmt.Sprintf("stage_aliases: %q is none of the account's stages (%s)",
				name.Cut(a.Stage, 60), stageNames(stages))}
		}
		s.Aliases[i].Stage = stage
	}
	return nil
}

func quoteAll(ss []string, n int) string {
	out := make([]string, 0, min(len(ss), n))
	for _, s := range ss[:min(len(ss), n)] {
		out = append(out, fmt.Sprintf("%q", name.Cut(s, 60)))
	}
	if len(ss) > n {
		out = append(out, "...")
	}
	return strings.Join(out, ", ")
}

func stageNames(ss []models.Stage) string {
	if len(ss) == 0 {
		return "it has none yet"
	}
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return "its stages are " + quoteAll(names, 50)
}

// Report is an upload as automation reads it (the API's JSON, the CLI):
// its columns by field, the pass's counts, refused rows, unmapped labels
// with the stage each probably means, and events by name.
type Report struct {
	ID int64 `json:"id"`
	// Columns name the file's column of each field filled, by the stage
	// API's body field (lead.email, stage, occurred_at, ...).
	Columns map[string]string `json:"columns"`
	// Dates is how dates with slashes or dashes are read: month_first or
	// day_first.
	Dates          string `json:"dates"`
	Rows           int    `json:"rows"`
	WouldRecord    int    `json:"would_record"`
	RecordedBefore int    `json:"recorded_before"`
	// Refused are the pass's first store.MaxUploadProblems refused rows.
	Refused        []RefusedRow    `json:"refused"`
	UnmappedStages []UnmappedStage `json:"unmapped_stages"`
	Events         map[string]int  `json:"events"`

	// Status, DoneRows, RefusedRows, Skipped and Flags are for the CLI and
	// the API's progress; the preview's JSON leaves them out.
	Status      models.StageUploadStatus `json:"-"`
	DoneRows    int                      `json:"-"`
	RefusedRows int                      `json:"-"`
	Skipped     int                      `json:"-"`
	Flagged     int                      `json:"-"`
	Flags       []Flag                   `json:"-"`
	Error       string                   `json:"-"`
}

// RefusedRow is a row that stays out: its line in the file, the file's
// column at fault ("" when none is), and why.
type RefusedRow struct {
	Row    int    `json:"row"`
	Column string `json:"column"`
	Reason string `json:"reason"`
}

// UnmappedStage is a label that names none of the account's stages, its
// rows, and the stage it probably means (name.SuggestStage), or nil.
type UnmappedStage struct {
	Label     string  `json:"label"`
	Rows      int     `json:"rows"`
	Suggested *string `json:"suggested"`
}

// Field names target t as the stage API's body does: lead.email, stage.
func Field(t stagecsv.Target) string {
	if slices.Contains(stagecsv.LeadKeys, t) {
		return "lead." + string(t)
	}
	return string(t)
}

// Report reads upload u as automation sees it.
func (r *Runner) Report(ctx context.Context, u models.StageUpload) (Report, error) {
	m, cols, err := Decode(u)
	if err != nil {
		return Report{}, err
	}
	sum, err := DecodeSummary(u.EventCounts)
	if err != nil {
		return Report{}, err
	}
	rep := Report{ID: u.ID, Columns: map[string]string{}, Dates: datesName(m.DateOrder), Rows: u.TotalRows, WouldRecord: u.Applied, RecordedBefore: u.Replayed,
		Refused: []RefusedRow{}, UnmappedStages: []UnmappedStage{}, Events: sum.Events, Status: u.Status, DoneRows: u.DoneRows,
		RefusedRows: u.Refused, Skipped: sum.Skipped, Flagged: sum.Flagged, Flags: sum.Flags, Error: u.Error}
	byField := map[string]string{}
	for _, t := range stagecsv.Targets {
		if i := m.Column(t); i >= 0 && i < len(cols) {
			rep.Columns[Field(t)] = cols[i].Name
			byField[Field(t)] = cols[i].Name
		}
	}
	ps, err := r.o.Store.StageUploadProblems(ctx, u.AccountID, u.ID, store.MaxUploadProblems)
	if err != nil {
		return Report{}, err
	}
	headers := map[string]bool{}
	for _, c := range cols {
		headers[c.Name] = true
	}
	for _, p := range ps {
		// A problem names the file's column that fed the field at fault,
		// else the field itself.
		col := byField[p.Field]
		if col == "" && headers[p.Field] {
			col = p.Field
		}
		rep.Refused = append(rep.Refused, RefusedRow{Row: p.RowNumber, Column: col, Reason: p.Message})
	}
	if len(sum.Unmapped) > 0 {
		stages, err := r.o.Store.Stages(ctx, u.AccountID)
		if err != nil {
			return Report{}, err
		}
		for _, l := range sum.Labels() {
			us := UnmappedStage{Label: l.Label, Rows: l.Rows}
			if i, ok := name.SuggestStage(l.Label, stages); ok {
				us.Suggested = &stages[i].Name
			}
			rep.UnmappedStages = append(rep.UnmappedStages, us)
		}
	}
	return rep, nil
}

// finishEvery is how often Finish looks at the pass it waits for.
const finishEvery = 100 * time.Millisecond

// Finish starts the current pass of an account's upload id in the
// background (Start) and waits for it to end, or for ctx to end; it
// returns the upload as it then stands (failed, with why, when the
// database failed it). A pass that outlives ctx goes on.
func (r *Runner) Finish(ctx context.Context, accountID, id int64) (models.StageUpload, error) {
	r.Start(id)
	t := time.NewTicker(finishEvery)
	defer t.Stop()
	for {
		u, err := r.o.Store.StageUpload(ctx, accountID, id)
		if err != nil || !u.Running() {
			return u, err
		}
		select {
		case <-ctx.Done():
			return u, ctx.Err()
		case <-t.C:
		}
	}
}

// NothingToRecord says why a previewed upload offers no apply: every row
// is refused, recorded before or skipped ("Nothing to record: 20 rows
// refused.").
func NothingToRecord(refused, replayed, skipped int) string {
	var parts []string
	rows := func(n int, what string) {
		if n == 0 {
			return
		}
		if len(parts) == 0 {
			parts = append(parts, plural(n, "row", "rows")+" "+what)
			return
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, what))
	}
	rows(refused, "refused")
	rows(replayed, "recorded before")
	rows(skipped, "skipped")
	switch len(parts) {
	case 0:
		return "Nothing to record: the file has no row to record."
	case 1:
		return "Nothing to record: " + parts[0] + "."
	}
	return "Nothing to record: " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
