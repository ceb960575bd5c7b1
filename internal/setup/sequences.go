package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// SequenceSpec is one sequence of the account: on Dataset, an initial and
// a final event, whose complete sequences the Stages and Overview pages
// count per week against Meta's learning threshold. A sequence is known
// by all three: there is nothing else to change.
type SequenceSpec struct {
	Dataset      string `json:"dataset"`
	InitialEvent string `json:"initial_event"`
	FinalEvent   string `json:"final_event"`
}

// String is "Lead → Purchase on Main", as changes name a sequence.
func (q SequenceSpec) String() string {
	return fmt.Sprintf("%q on %s", q.InitialEvent+" → "+q.FinalEvent, q.Dataset)
}

func (d *decoder) sequences(path string, raw json.RawMessage) []SequenceSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of sequences, not "+kind(raw))
		return nil
	}
	out := make([]SequenceSpec, len(items))
	for i, item := range items {
		q := &out[i]
		d.fields(fmt.Sprintf("%s[%d]", path, i), item, `must be an object like {"dataset": "Main", "initial_event": "Lead", "final_event": "Purchase"}`, []field{
			{"dataset", &q.Dataset, "a string: the name of a dataset"},
			{"initial_event", &q.InitialEvent, "a string like Lead"},
			{"final_event", &q.FinalEvent, "a string like Purchase"},
		})
	}
	return out
}

// cleanSequences trims the sequences' strings; nil stays nil (absent).
func cleanSequences(qs []SequenceSpec) []SequenceSpec {
	if qs == nil {
		return nil
	}
	out := make([]SequenceSpec, len(qs))
	for i, q := range qs {
		t := strings.TrimSpace
		out[i] = SequenceSpec{Dataset: t(q.Dataset), InitialEvent: t(q.InitialEvent), FinalEvent: t(q.FinalEvent)}
	}
	return out
}

// sequenceProblems checks the file's clean sequences: at most
// store.MaxSequences, each on a dataset of the file or the account, two
// different event names as a send rule's must be, and none twice.
func (f File) sequenceProblems(refs *datasetRefs) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(f.Sequences) > store.MaxSequences {
		add("sequences", "use at most %d sequences, not %d: each is counted on the Stages and Overview pages", store.MaxSequences, len(f.Sequences))
		return ps
	}
	first := map[string]int{}
	for i, q := range f.Sequences {
		p := fmt.Sprintf("sequences[%d]", i)
		if msg := refs.problem(q.Dataset); msg != "" {
			add(p+".dataset", "%s", msg)
		}
		bad := false
		for _, e := range []struct{ key, name string }{{"initial_event", q.InitialEvent}, {"final_event", q.FinalEvent}} {
			if msg := rule.EventNameProblem(e.name); msg != "" {
				add(p+"."+e.key, "%s", msg)
				bad = true
			}
		}
		switch k := strings.ToLower(q.Dataset) + "\x00" + q.InitialEvent + "\x00" + q.FinalEvent; {
		case bad:
		case q.InitialEvent == q.FinalEvent:
			add(p+".final_event", "must differ from initial_event: a sequence goes from one event to a later, different one")
		default:
			if j, ok := first[k]; ok {
				add(p, "is also sequences[%d]: give each sequence once", j)
			} else {
				first[k] = i
			}
		}
	}
	return ps
}

// sequences makes the account's sequences the file's list: the ones it
// has already are kept, the others deleted, the missing created.
func (a *applier) sequences(ctx context.Context, accountID int64, specs []SequenceSpec) error {
	datasetID, datasetName, err := a.datasetNames(ctx, accountID)
	if err != nil {
		return err
	}
	cur, err := a.tx.Sequences(ctx, accountID)
	if err != nil {
		return err
	}
	key := func(q models.Sequence) string {
		return fmt.Sprintf("%d\x00%s\x00%s", q.DatasetID, q.InitialEvent, q.FinalEvent)
	}
	want := make([]models.Sequence, len(specs))
	wanted := map[string]bool{}
	for i, spec := range specs {
		want[i] = models.Sequence{AccountID: accountID, DatasetID: datasetID[strings.ToLower(spec.Dataset)],
			InitialEvent: spec.InitialEvent, FinalEvent: spec.FinalEvent}
		wanted[key(want[i])] = true
	}
	had := map[string]bool{}
	for _, q := range cur {
		had[key(q)] = true
		if !wanted[key(q)] {
			spec := SequenceSpec{Dataset: datasetName[q.DatasetID], InitialEvent: q.InitialEvent, FinalEvent: q.FinalEvent}
			a.change("sequences", "deleted %s", spec)
			a.report.Summary.SequencesDeleted++
		}
	}
	for i, q := range want {
		if !had[key(q)] {
			spec := SequenceSpec{Dataset: datasetName[q.DatasetID], InitialEvent: q.InitialEvent, FinalEvent: q.FinalEvent}
			a.change(fmt.Sprintf("sequences[%d]", i), "created %s", spec)
			a.report.Summary.SequencesAdded++
		}
	}
	if a.report.Summary.SequencesAdded == 0 && a.report.Summary.SequencesDeleted == 0 {
		return nil
	}
	return a.tx.ReplaceSequences(ctx, accountID, want)
}

// exportSequences lists the account's sequences as the file writes them,
// with their datasets by name; an empty list when it has none.
func exportSequences(qs []models.Sequence, datasetName map[int64]string) []SequenceSpec {
	out := make([]SequenceSpec, 0, len(qs))
	for _, q := range qs {
		out = append(out, SequenceSpec{Dataset: datasetName[q.DatasetID], InitialEvent: q.InitialEvent, FinalEvent: q.FinalEvent})
	}
	return out
}
