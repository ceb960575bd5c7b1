package stageupload

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
)

// Summary is what a pass found beyond its counts, kept with the upload
// (its event_counts column, as JSON) and updated after each chunk: the
// events per name, the rows under labels that are none of the account's
// stages, the rows skipped, and the rows whose events would not be sent.
type Summary struct {
	// Events counts the events the pass queued (or would queue) by name.
	Events map[string]int `json:"events"`
	// Unmapped are the labels that name none of the account's stages (by
	// name, alias or CRM label), in the order the pass met them, each
	// with its rows recorded (or that would be) and sending nothing.
	Unmapped []LabelRows `json:"unmapped,omitempty"`
	// UnmappedOther counts the rows of unmapped labels past
	// MaxUnmappedLabels.
	UnmappedOther int `json:"unmapped_other,omitempty"`
	// Skipped counts the rows under a label the upload skips.
	Skipped int `json:"skipped,omitempty"`
	// Flagged counts the rows with an event that would not be sent: a
	// Purchase without its value (refused), or an event the recorder held
	// back with its reason. Flags are the first MaxFlags of them.
	Flagged int    `json:"flagged,omitempty"`
	Flags   []Flag `json:"flags,omitempty"`
	// labels finds an unmapped label's place in Unmapped by its key.
	labels map[string]int
}

// Labels are the unmapped labels, most rows first (in the order the pass
// met them among equals).
func (s Summary) Labels() []LabelRows {
	out := slices.Clone(s.Unmapped)
	slices.SortStableFunc(out, func(a, b LabelRows) int { return b.Rows - a.Rows })
	return out
}

// LabelRows is an unmapped label and its rows.
type LabelRows struct {
	Label string `json:"label"`
	Rows  int    `json:"rows"`
}

// Flag is a row with an event that would not be sent, and why.
type Flag struct {
	Row    int    `json:"row"`
	Event  string `json:"event"`
	Reason string `json:"reason"`
}

// MaxUnmappedLabels bounds the unmapped labels a pass lists: a file whose
// stage column holds free text has as many labels as rows.
const MaxUnmappedLabels = 100

// MaxFlags bounds the flagged rows a pass lists; Flagged counts them all.
const MaxFlags = 100

// DecodeSummary reads a pass's summary as an upload keeps it. Uploads
// kept before the summary hold the events per name alone, and read so.
func DecodeSummary(s string) (Summary, error) {
	var events map[string]int
	if err := json.Unmarshal([]byte(s), &events); err == nil {
		return Summary{Events: events}, nil
	}
	var sum Summary
	if err := json.Unmarshal([]byte(s), &sum); err != nil {
		return sum, fmt.Errorf("upload summary: %w", err)
	}
	if sum.Events == nil {
		sum.Events = map[string]int{}
	}
	return sum, nil
}

// encode is the JSON of s: never a plain object of numbers, which
// DecodeSummary reads as events alone.
func (s Summary) encode() (string, error) {
	if s.Events == nil {
		s.Events = map[string]int{}
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// UnmappedRows counts the rows under unmapped labels.
func (s Summary) UnmappedRows() int {
	n := s.UnmappedOther
	for _, l := range s.Unmapped {
		n += l.Rows
	}
	return n
}

// add counts the outcome of the row on line: its events by name, its
// unmapped label, and a flag when an event would not be sent. The
// recorder decides all of it: a Purchase that needs the value the row
// lacks is refused (decide.ValueRequired), and an event Meta would refuse
// is held back with its reason.
func (s *Summary) add(line int, o decide.Outcome) {
	if s.Events == nil {
		s.Events = map[string]int{}
	}
	if o.Refused != nil {
		if o.Refused.Code == decide.ValueRequired {
			s.flag(line, "Purchase", o.Refused.Message)
		}
		return
	}
	if o.Unmapped {
		s.unmapped(o.Change.Stage)
	}
	if o.Replayed {
		return
	}
	flagged := false
	for _, e := range o.Events {
		s.Events[e.EventName]++
		if !flagged && e.Status == models.EventFailed && e.LastError != "" {
			s.flag(line, e.EventName, e.LastError)
			flagged = true
		}
	}
}

func (s *Summary) unmapped(label string) {
	if s.labels == nil {
		s.labels = make(map[string]int, len(s.Unmapped))
		for i, l := range s.Unmapped {
			s.labels[name.StageKey(l.Label)] = i
		}
	}
	k := name.StageKey(label)
	if i, ok := s.labels[k]; ok {
		s.Unmapped[i].Rows++
		return
	}
	if len(s.Unmapped) >= MaxUnmappedLabels {
		s.UnmappedOther++
		return
	}
	s.labels[k] = len(s.Unmapped)
	s.Unmapped = append(s.Unmapped, LabelRows{Label: label, Rows: 1})
}

func (s *Summary) flag(line int, event, reason string) {
	s.Flagged++
	if len(s.Flags) < MaxFlags {
		s.Flags = append(s.Flags, Flag{Row: line, Event: event, Reason: reason})
	}
}
