package overview

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Stage is one of an account's stages, in funnel order, with the event
// names of its enabled mappings (none: the stage is not mapped).
type Stage struct {
	Name string
	// Aliases are the stage's other labels: changes recorded under one,
	// even before it became an alias, count as the stage.
	Aliases []string
	Events  []string
}

// Is reports whether label (a stage as a change wrote it) names the
// stage: its name or one of its aliases, compared as the recorder compares
// them (name.StageKey).
func (s Stage) Is(label string) bool {
	k := name.StageKey(label)
	if k == "" {
		return false
	}
	if name.StageKey(s.Name) == k {
		return true
	}
	return slices.ContainsFunc(s.Aliases, func(a string) bool { return name.StageKey(a) == k })
}

// Mapped reports whether the stage sends an event.
func (s Stage) Mapped() bool { return len(s.Events) > 0 }

// Stages lists an account's stages in order with their enabled mappings.
func Stages(stages []models.Stage, rules []models.SendRule) []Stage {
	out := make([]Stage, len(stages))
	for i, st := range stages {
		out[i].Name, out[i].Aliases = st.Name, st.Aliases
		for _, r := range rules {
			if r.Enabled && store.IsStageMapping(r, st.Name) && !slices.Contains(out[i].Events, r.EventName) {
				out[i].Events = append(out[i].Events, r.EventName)
			}
		}
	}
	return out
}

// Mapped keeps the mapped stages.
func Mapped(stages []Stage) []Stage {
	var out []Stage
	for _, s := range stages {
		if s.Mapped() {
			out = append(out, s)
		}
	}
	return out
}

// position is the index of the stage that label names in stages (Is);
// -1 when it is none of them.
func position(stages []Stage, label string) int {
	return slices.IndexFunc(stages, func(s Stage) bool { return s.Is(label) })
}

// Qualified is the index of the stage that counts as qualified (the
// chart's and the agency overview's "qualified"): the one named qualified,
// else the first mapped stage, else the first; -1 when there are none.
func Qualified(stages []Stage) int {
	if i := position(stages, models.StageQualified); i >= 0 {
		return i
	}
	if i := slices.IndexFunc(stages, Stage.Mapped); i >= 0 {
		return i
	}
	if len(stages) > 0 {
		return 0
	}
	return -1
}

// AtOrAfter keeps, of the stages written (a lead's stage as its change
// spelled it), those that are stage name or a later stage: a lead at any
// of them reached it. None when the account has no such stage.
func AtOrAfter(stages []Stage, name string, written []string) []string {
	i := position(stages, name)
	if i < 0 {
		return nil
	}
	var out []string
	for _, w := range written {
		if position(stages, w) >= i {
			out = append(out, w)
		}
	}
	return out
}

// Named keeps, of the stages written, those that name the stage called
// name (its name or an alias, however spelled). None when the account has
// no such stage.
func Named(stages []Stage, name string, written []string) []string {
	i := position(stages, name)
	if i < 0 {
		return nil
	}
	var out []string
	for _, w := range written {
		if stages[i].Is(w) {
			out = append(out, w)
		}
	}
	return out
}

// Figures are the headline numbers of one span's leads.
type Figures struct {
	Leads, Junk, Partial int64
	// Reached counts, per stage (as in the stages given), the leads at it
	// or at a later stage now: the capture cohort's funnel (ReachedIn
	// counts by when they reached it).
	Reached []int64
	// Events counts the leads' events by status: queued ones are waiting
	// (sending among them).
	Events map[models.EventStatus]int64
}

// Waiting counts the events that wait to be sent or are being sent.
func (f Figures) Waiting() int64 { return f.Events[models.EventQueued] + f.Events[models.EventSending] }

// Sum adds up the counts of span for the stages given.
func Sum(c store.Counts, span int, stages []Stage) Figures {
	f := Figures{Reached: make([]int64, len(stages)), Events: map[models.EventStatus]int64{}}
	pos := map[string]int{} // by the stage as written
	for _, r := range c.Leads {
		if r.Span != span {
			continue
		}
		f.Leads += r.N
		if r.Junk {
			f.Junk += r.N
		}
		if r.Partial {
			f.Partial += r.N
		}
		if r.Stage == "" {
			continue
		}
		p, ok := pos[r.Stage]
		if !ok {
			p = position(stages, r.Stage)
			pos[r.Stage] = p
		}
		for i := 0; i <= p; i++ {
			f.Reached[i] += r.N
		}
	}
	for _, e := range c.Events {
		if e.Span == span {
			f.Events[e.Status] += e.N
		}
	}
	return f
}

// ReachedIn counts, per stage (as in the stages given), the leads that
// reached it in span, by the time they first reached it (a change to it
// under its name or an alias): a period's count settles when the period
// ends, as the CRM's "became qualified" does. A lead that skipped a stage
// did not reach it; one recorded under two of a stage's labels counts
// under each.
func ReachedIn(c store.Counts, span int, stages []Stage) []int64 {
	out := make([]int64, len(stages))
	pos := map[string]int{} // by the stage as written
	for _, r := range c.Stages {
		if r.Span != span {
			continue
		}
		p, ok := pos[r.Stage]
		if !ok {
			p = position(stages, r.Stage)
			pos[r.Stage] = p
		}
		if p >= 0 {
			out[p] += r.N
		}
	}
	return out
}

// Median is the median time from capture to stage among the leads that
// reached it in span, to the whole hour (the middle of its hour); ok is
// false when there are none.
func Median(c store.Counts, span int, stage Stage) (d time.Duration, ok bool) {
	var rows []store.StageDelay
	var total int64
	for _, r := range c.Stages {
		if r.Span == span && stage.Is(r.Stage) {
			rows = append(rows, r)
			total += r.N
		}
	}
	if total <= 0 {
		return 0, false
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Hours < rows[j].Hours })
	var seen int64
	for _, r := range rows {
		seen += r.N
		if 2*seen >= total {
			return time.Duration(r.Hours)*time.Hour + 30*time.Minute, true
		}
	}
	return 0, false
}

// JunkReason is a junk signal and how many junk leads it flagged; Reason
// is "" for leads a person marked junk with no signal.
type JunkReason struct {
	Reason string
	N      int64
}

// JunkReasons counts span's junk leads by signal, most first. A lead with
// two signals counts under each.
func JunkReasons(c store.Counts, span int) []JunkReason {
	by := map[string]int64{}
	for _, r := range c.Leads {
		if r.Span != span || !r.Junk {
			continue
		}
		reasons := strings.Split(r.JunkSignals, ",")
		for _, reason := range reasons {
			by[reason] += r.N
		}
	}
	out := make([]JunkReason, 0, len(by))
	for reason, n := range by {
		out = append(out, JunkReason{reason, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// Events counts span's events named name by status.
func Events(c store.Counts, span int, name string) map[models.EventStatus]int64 {
	return EventsTo(c, span, name, 0)
}

// EventsTo is Events of one destination (its dataset id); 0 is every
// destination's.
func EventsTo(c store.Counts, span int, name string, datasetID int64) map[models.EventStatus]int64 {
	out := map[models.EventStatus]int64{}
	for _, e := range c.Events {
		if e.Span == span && e.EventName == name && (datasetID == 0 || e.DatasetID == datasetID) {
			out[e.Status] += e.N
		}
	}
	return out
}
