package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// StageSpec is one of the account's stages, in the file's order: its
// name, its aliases (the other labels CRMs and files use for it: a change
// under one records this stage; docs/setup.md) and whether it is the
// booking stage. A stage is known by its name, compared as stage changes
// compare labels (name.StageKey).
type StageSpec struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	Booking bool     `json:"booking"`
}

func (d *decoder) stages(path string, raw json.RawMessage) []StageSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of stages, not "+kind(raw))
		return nil
	}
	if len(items) > store.MaxStages {
		d.add(path, fmt.Sprintf("use at most %d stages, not %d", store.MaxStages, len(items)))
		return nil
	}
	out := make([]StageSpec, len(items))
	for i, item := range items {
		st := &out[i]
		d.fields(fmt.Sprintf("%s[%d]", path, i), item, `must be an object like {"name": "won", "aliases": ["Closed Won"], "booking": false}`, []field{
			{"name", &st.Name, "a string"},
			{"aliases", &st.Aliases, "a list of strings"},
			{"booking", &st.Booking, "true or false"},
		})
	}
	return out
}

// cleanStages trims the stages' names and aliases, leaving out empty
// aliases; nil stays nil (absent).
func cleanStages(ss []StageSpec) []StageSpec {
	if ss == nil {
		return nil
	}
	out := make([]StageSpec, len(ss))
	for i, s := range ss {
		out[i] = StageSpec{Name: strings.TrimSpace(s.Name), Booking: s.Booking, Aliases: []string{}}
		for _, a := range s.Aliases {
			if a = strings.TrimSpace(a); a != "" {
				out[i].Aliases = append(out[i].Aliases, a)
			}
		}
	}
	return out
}

// stageList is the stage list the clean file's stages ask of an account
// whose stages are ss: the file's stages in its order, each with the id
// and spelling of the account's stage of its name (name.StageKey; id 0
// for a new one), then the stages the file leaves out, which stay, in
// their order and with their aliases. The booking stage is the file's;
// when the file marks none, a stage it leaves out keeps its mark.
func stageList(specs []StageSpec, ss []models.Stage) []models.Stage {
	out := make([]models.Stage, 0, len(specs)+len(ss))
	listed := make([]bool, len(ss))
	fileBooking := false
	for _, spec := range specs {
		st := models.Stage{Name: spec.Name, Aliases: spec.Aliases, Booking: spec.Booking}
		if i := slices.IndexFunc(ss, func(x models.Stage) bool { return name.StageKey(x.Name) == name.StageKey(spec.Name) }); i >= 0 {
			st.ID, st.Name = ss[i].ID, ss[i].Name
			listed[i] = true
		}
		fileBooking = fileBooking || spec.Booking
		out = append(out, st)
	}
	for i, st := range ss {
		if !listed[i] {
			st.Booking = st.Booking && !fileBooking
			out = append(out, st)
		}
	}
	return out
}

// stageProblems checks the clean file's stages against the account's
// stages ss (the template's for a new account; nil when nothing is known
// of the account): each a stage name, its aliases labels, each label
// (name or alias) one stage's only, also among the stages the file leaves
// out, one booking stage at most; and the stage mappings name stages, not
// aliases.
func (f File) stageProblems(ss []models.Stage) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	type claim struct {
		stage, path string // the stage's, and the path of the label
		leftOut     bool
	}
	claims := map[string]claim{}
	var booking []string
	for i, spec := range f.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		if msg := name.StageProblem(spec.Name); msg != "" {
			add(p+".name", "%s", msg)
			continue
		}
		if name.StageKey(spec.Name) == "" {
			add(p+".name", "%q has no letter or digit: stages are matched by their letters and digits", spec.Name)
			continue
		}
		if spec.Booking {
			booking = append(booking, p)
		}
		aliases, err := store.CleanAliases(spec.Name, spec.Aliases)
		if err != nil {
			add(p+".aliases", "%s", err)
			aliases = nil
		}
		for j, label := range append([]string{spec.Name}, aliases...) {
			k, at := name.StageKey(label), p+".name"
			if j > 0 {
				at = p + ".aliases"
			}
			if o, taken := claims[k]; taken {
				add(at, "%q names both the stage %s (%s) and the stage %s; a label is one stage's", label, o.stage, o.path, spec.Name)
				continue
			}
			claims[k] = claim{stage: spec.Name, path: at}
		}
	}
	if len(booking) > 1 {
		add("stages", "one stage at most is the booking stage, not %s", strings.Join(booking, " and "))
	}
	if len(ps) > 0 {
		return ps
	}
	list := stageList(f.Stages, ss)
	for _, st := range list[len(f.Stages):] {
		for _, label := range append([]string{st.Name}, st.Aliases...) {
			if o, taken := claims[name.StageKey(label)]; taken && !o.leftOut {
				add(o.path, "%q is the account's stage %s or one of its aliases, and the file leaves %s out: a setup file never deletes a stage, "+
					"so list %s with its aliases, or delete it on the Stages page first", label, st.Name, st.Name, st.Name)
			}
			claims[name.StageKey(label)] = claim{stage: st.Name, leftOut: true}
		}
	}
	ix := name.NewStages(list, nil)
	for i, m := range f.StageMappings {
		if j := ix.Index(m.Stage); j >= 0 && name.StageKey(list[j].Name) != name.StageKey(m.Stage) {
			add(fmt.Sprintf("stage_mappings[%d].stage", i), "%q is an alias of the stage %s: a mapping names the stage itself, %s", m.Stage, list[j].Name, list[j].Name)
		}
	}
	return ps
}

// stages applies the clean file's stages (store.ArrangeStages): their
// order and aliases, the booking stage, the new ones; the stages the file
// leaves out stay after them, with a note.
func (a *applier) stages(ctx context.Context, accountID int64, specs []StageSpec) error {
	before, err := a.tx.Stages(ctx, accountID)
	if err != nil {
		return err
	}
	want := stageList(specs, before)
	after, err := a.tx.ArrangeStages(ctx, accountID, want)
	if err != nil {
		return err
	}
	old := map[int64]models.Stage{}
	for _, st := range before {
		old[st.ID] = st
	}
	for i, st := range after {
		path := "stages"
		if i < len(specs) {
			path = fmt.Sprintf("stages[%d]", i)
		}
		o, existed := old[want[i].ID]
		if !existed {
			a.change(path, "added the stage %q", st.Name)
			a.report.Summary.StagesAdded++
			continue
		}
		changed := false
		if !slices.Equal(o.Aliases, st.Aliases) && (len(o.Aliases) > 0 || len(st.Aliases) > 0) {
			a.change(path+".aliases", "%s: %s → %s", st.Name, labelList(o.Aliases), labelList(st.Aliases))
			changed = true
		}
		if o.Booking != st.Booking {
			a.change(path+".booking", "%s: %t → %t", st.Name, o.Booking, st.Booking)
			changed = true
		}
		if changed {
			a.report.Summary.StagesChanged++
		}
		if i < len(specs) && st.Name != specs[i].Name {
			a.note(path+".name", "the account spells this stage %q; rename it on the Stages page to change that", st.Name)
		}
	}
	var was, now []string
	for _, st := range before {
		was = append(was, st.Name)
	}
	for _, st := range after {
		if _, existed := old[st.ID]; existed {
			now = append(now, st.Name)
		}
	}
	if !slices.Equal(was, now) {
		a.change("stages", "order: %s → %s", strings.Join(was, ", "), strings.Join(now, ", "))
		a.report.Summary.StagesReordered = true
	}
	if left := after[len(specs):]; len(left) > 0 {
		names := make([]string, len(left))
		for i, st := range left {
			names[i] = st.Name
		}
		a.note("stages", "the file leaves out %s: a setup file never deletes a stage, so they stay, after the file's; delete a stage on the Stages page",
			strings.Join(names, ", "))
	}
	return nil
}

// labelList writes labels as a report shows them: ["Closed Won", "won"].
func labelList(ls []string) string {
	if len(ls) == 0 {
		return "none"
	}
	b, _ := json.Marshal(ls)
	return string(b)
}

// exportStages are the account's stages as the file writes them.
func exportStages(ss []models.Stage) []StageSpec {
	out := make([]StageSpec, len(ss))
	for i, st := range ss {
		out[i] = StageSpec{Name: st.Name, Aliases: append([]string{}, st.Aliases...), Booking: st.Booking}
	}
	return out
}
