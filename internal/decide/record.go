package decide

import (
	"context"
	"log/slog"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// The recorder is the one door of stage changes (docs/architecture.md,
// "Stage changes"): the stage API, a CSV upload, a CRM connection's
// worker, the lead page, the demo and the bench commands all hand their
// changes to Record or RecordAll, and only decode their input and map the
// outcomes to their own answers. Every rule of accepting a change lives in
// accept.go; how a batch is decided and written, in batch.go.

// Origin is where a stage change comes from. The rules of accepting a
// change are the same for every way in but for what Origin says.
type Origin int

const (
	// FromAPI is the stage API, a CSV upload, the demo or a bench: a
	// change in the future or before its lead is refused, a junk verdict
	// is refused, and so is a change whose Purchase needs the value it
	// lacks. The caller can send the change again, corrected.
	FromAPI Origin = iota
	// FromPerson is a person on the lead page: the stage is one of the
	// account's stages or a junk verdict (junk, not_junk).
	FromPerson
	// FromCRM is a CRM connection's delivery, on the CRM's clock: a time
	// in the future is taken as now and one before its lead as just after
	// it (CRM clocks differ; the delivery keeps the CRM's time), and a
	// Purchase without its value is recorded with the event held back
	// and its reason, so the funnel still counts the stage. A CRM cannot
	// be asked to send the change again.
	FromCRM
)

// Change is one stage change handed to the recorder.
type Change struct {
	// Keys name the lead: the first key that finds one of the account's
	// leads decides (the CRM worker gives a contact's keys in order).
	Keys       []store.LeadKey
	Stage      string
	OccurredAt time.Time
	// DateOnly: OccurredAt is a day with no time of day (its midnight in
	// the account's zone), as a CSV export may write it. On the lead's
	// own day it is recorded just after the lead, never refused as
	// before it.
	DateOnly bool
	Value    *float64
	Currency string
	// ChangeID is the sender's own key of the change; without it a change
	// is known by its lead, stage and time.
	ChangeID *string
	// UserID is the person who made the change, nil for a system.
	UserID *int64
	// Source is the CRM's name for Meta's lead_event_source, "" for the
	// account's CRM name.
	Source string
	// Origin is the kind of sender, which decides what may be fixed up
	// (a CRM's clock) and what a person may set.
	Origin Origin
	// Via, ViaID and ViaRow say where the change came from, kept with it
	// for the lead page (models.StageChange.Via).
	Via    string
	ViaID  *int64
	ViaRow *int
}

// Outcome is what became of one Change: recorded, replayed, or refused.
type Outcome struct {
	// Lead is the lead as the change left it; for a change refused
	// against its lead (before it, say), the lead as it is.
	Lead models.Lead
	// Change is the change as recorded (its ID set unless dry), or for a
	// replay the change recorded before.
	Change models.StageChange
	// Events are the events queued for the change, filled in ones first
	// (for a dry run, those it would queue); for a replay, those queued
	// when it was recorded.
	Events []models.Event
	// Replayed: the change was recorded before (its change_id, or its
	// stage and time); nothing was queued now.
	Replayed bool
	// Unmapped: the change's stage is none of the account's stages by
	// name, alias or CRM label; it is recorded under its label as it came
	// and sends nothing until the label becomes an alias.
	Unmapped bool
	// Refused says why the change was not recorded; nil when it was.
	Refused *Refusal
	// Datasets are the account's datasets as the batch read them: those
	// of the events.
	Datasets []models.Dataset
}

// Code names why a change is refused.
type Code string

// The codes of a Refusal.
const (
	// LeadNotFound: no lead of the account has the change's keys.
	LeadNotFound Code = "lead_not_found"
	// Invalid: a field of the change is not one the account can take
	// (Refusal.Field names it).
	Invalid Code = "invalid_field"
	// BeforeLead: the change happened before its lead was captured.
	BeforeLead Code = "before_lead"
	// ValueRequired: a mapping of the stage is a Purchase that takes its
	// value from the change, which has none.
	ValueRequired Code = "value_required"
)

// Refusal is why the account cannot take a change: a code, the field at
// fault (as the stage API names it: "stage", "occurred_at", "value",
// "lead.email", ...) and what to do, in words.
type Refusal struct {
	Code    Code
	Field   string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Record records one change of an account's lead and says what became of
// it. Changes of an account given at the same time are recorded together,
// in the order they came, as one batch of RecordAll: one read, one
// transaction and one commit for all of them (group commit). Once given,
// the change is recorded even if ctx ends: a retry then finds it recorded.
// The error is the database's.
func (d *Decider) Record(ctx context.Context, accountID int64, c Change) (Outcome, error) {
	j := &stageJob{change: c, done: make(chan stageDone, 1)}
	d.line.Add(accountID, j)
	select {
	case r := <-j.done:
		return r.out, r.err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// RecordAll records changes of an account's leads, in order: a change
// later in cs sees those before it. Recording is idempotent (a change
// recorded already is Replayed with what was recorded); a change the
// account cannot take is Refused (accept.go). Each change's events are
// decided from the lead as the change leaves it. The error is the
// database's.
func (d *Decider) RecordAll(ctx context.Context, accountID int64, cs []Change) ([]Outcome, error) {
	return d.recordAll(ctx, accountID, cs, false)
}

// DryRun says what RecordAll would do with cs, writing nothing: an
// upload's preview.
func (d *Decider) DryRun(ctx context.Context, accountID int64, cs []Change) ([]Outcome, error) {
	return d.recordAll(ctx, accountID, cs, true)
}

// stageLine bounds the changes of one account that Record records
// together. A busy account has up to stageWriters batches in flight: while
// one is written, another writer takes the changes waiting behind it once
// there are stageSide of them and none names a lead or a change_id that a
// batch in flight or a change before it names (stageMarks). Batches in
// flight are as two replicas' are: a lead one of them changed after the
// other read it is decided again (staleTries).
const (
	stageLine    = 64
	stageWriters = 3
	stageSide    = 8
)

// stageMarks are what a change given to Record may not share with a
// change of another batch in flight: the keys that name its lead and its
// change_id.
func stageMarks(j *stageJob) []string {
	ms := make([]string, 0, len(j.change.Keys)+1)
	for _, k := range j.change.Keys {
		ms = append(ms, "k"+k.Field+"\x00"+k.Value)
	}
	if id := j.change.ChangeID; id != nil {
		ms = append(ms, "c"+*id)
	}
	return ms
}

// stageJob is a change given to Record, waiting in its account's line.
type stageJob struct {
	change Change
	done   chan stageDone
}

type stageDone struct {
	out Outcome
	err error
}

// writeLine records a batch of an account's changes given to Record and
// answers each. If the batch fails, each change is tried alone: one that
// fails never costs the others their answer.
func (d *Decider) writeLine(accountID int64, batch []*stageJob) {
	cs := make([]Change, len(batch))
	for i, j := range batch {
		cs[i] = j.change
	}
	out, err := d.RecordAll(context.Background(), accountID, cs)
	if err != nil && len(batch) > 1 {
		slog.Warn("batched stage changes failed; recording one by one", slog.Int("changes", len(batch)), slog.Any("error", err))
		for _, j := range batch {
			d.writeLine(accountID, []*stageJob{j})
		}
		return
	}
	for i, j := range batch {
		if err != nil {
			j.done <- stageDone{err: err}
			continue
		}
		j.done <- stageDone{out: out[i]}
	}
}

// ByID is the key of the lead with this id.
func ByID(id int64) []store.LeadKey {
	return []store.LeadKey{{Field: "id", Value: itoa(id)}}
}
