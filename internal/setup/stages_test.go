package setup

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// stagesFile is a setup file of account slug with stages (a JSON list)
// and, when not empty, stage mappings.
func stagesFile(slug, stages, mappings string) string {
	s := `{"account": {"slug": "` + slug + `", "name": "Acme Inc", "timezone": "Europe/Berlin", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "stages": ` + stages
	if mappings != "" {
		s += `, "stage_mappings": ` + mappings
	}
	return s + "}"
}

// stageLine is an account's stages as "name[alias|alias]*", * for the
// booking stage, comma-separated.
func stageLine(t *testing.T, s *store.Store, slug string) string {
	t.Helper()
	acc, err := s.AccountBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.Stages(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range ss {
		x := st.Name + "[" + strings.Join(st.Aliases, "|") + "]"
		if st.Booking {
			x += "*"
		}
		out = append(out, x)
	}
	return strings.Join(out, ",")
}

func changePaths(r Report) string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, c.String())
	}
	return strings.Join(out, "\n")
}

// A file's stages set the account's order, aliases and booking stage and
// add the new ones; a stage it leaves out stays, with a note. Applied
// again it changes nothing; exported and applied, here or to a new
// account, it gives the same list.
func TestApplyStagesRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		text := stagesFile("acme", `[
  {"name": "Qualified", "aliases": ["SQL", " Qualified To Buy ", "sql"]},
  {"name": "proposal", "aliases": ["Proposal Sent"]},
  {"name": "won", "aliases": ["Closed Won", "closedwon"], "booking": true}]`, "")
		r := mustApply(t, s, box, nil, decodeFile(t, text))
		want := "qualified[SQL|Qualified To Buy],proposal[Proposal Sent],won[Closed Won]*,booked[]"
		if got := stageLine(t, s, "acme"); got != want {
			t.Errorf("stages = %s; want %s", got, want)
		}
		changes := changePaths(r)
		for _, w := range []string{`stages[1]: added the stage "proposal"`, `stages[2].aliases: won: none → ["Closed Won"]`,
			"stages[2].booking: won: false → true", "stages.booking: booked: true → false"} {
			if !strings.Contains(changes, w) {
				t.Errorf("changes lack %q:\n%s", w, changes)
			}
		}
		var notes []string
		for _, n := range r.Notes {
			notes = append(notes, n.String())
		}
		if got := strings.Join(notes, "\n"); !strings.Contains(got, "stages: the file leaves out booked") || !strings.Contains(got, `stages[0].name: the account spells this stage "qualified"`) {
			t.Errorf("notes:\n%s\nwant booked kept and qualified's spelling", got)
		}
		if r.Summary.StagesAdded != 1 || r.Summary.StagesChanged != 3 || !r.Summary.StagesReordered {
			t.Errorf("summary %+v; want 1 stage added, 3 changed, reordered", r.Summary)
		}

		if again := mustApply(t, s, box, nil, decodeFile(t, text)); len(again.Changes) != 0 {
			t.Errorf("applied again: changes\n%s\nwant none", changePaths(again))
		}
		exp, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(exp)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"stages":[{"name":"qualified","aliases":["SQL","Qualified To Buy"],"booking":false},{"name":"proposal"`) {
			t.Errorf("export's stages:\n%s", b)
		}
		if r := mustApply(t, s, box, nil, decodeFile(t, string(b))); len(r.Changes) != 0 {
			t.Errorf("Apply(export) changes\n%s\nwant none", changePaths(r))
		}
		exp.Account.Slug = "beta"
		mustApply(t, s, box, nil, exp)
		if got := stageLine(t, s, "beta"); got != want {
			t.Errorf("the export applied to a new account: stages = %s; want %s", got, want)
		}
	})
}

// A file whose stages cannot be the account's list is refused whole, with
// each problem at its path, and changes nothing.
func TestApplyStagesProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, nil, decodeFile(t, stagesFile("acme", `[{"name": "won", "aliases": ["Closed Won"]}]`, "")))
		before := stageLine(t, s, "acme")
		for _, tt := range []struct {
			name, stages, mappings string
			want                   []string
		}{
			{"one alias, two stages", `[{"name": "won", "aliases": ["Closed Won"]}, {"name": "lost", "aliases": ["closed-won"]}]`, "",
				[]string{`stages[1].aliases: "closed-won" names both the stage won (stages[0].aliases) and the stage lost`}},
			{"a name another stage has as an alias", `[{"name": "won", "aliases": ["Deal"]}, {"name": "deal"}]`, "",
				[]string{`stages[1].name: "deal" names both the stage won (stages[0].aliases) and the stage deal`}},
			{"an alias a stage left out has as its name", `[{"name": "lost", "aliases": ["WON"]}]`, "",
				[]string{`stages[0].aliases: "won" is the account's stage won or one of its aliases, and the file leaves won out`}},
			{"two stages of one name", `[{"name": "won"}, {"name": "WON"}]`, "", []string{`stages[1].name: "WON" names both`}},
			{"a renamed stage keeps its alias", `[{"name": "Won deal", "aliases": ["Closed Won"]}]`, "",
				[]string{`stages[0].aliases: "Closed Won" is the account's stage won or one of its aliases, and the file leaves won out: a setup file never deletes a stage`}},
			{"two booking stages", `[{"name": "booked", "booking": true}, {"name": "won", "aliases": ["Closed Won"], "booking": true}]`, "",
				[]string{"stages: one stage at most is the booking stage, not stages[0] and stages[1]"}},
			{"not stage names", `[{"name": "junk"}, {"name": ""}, {"name": "!!"}, {"name": "won", "aliases": ["---"]}]`, "",
				[]string{"stages[0].name: junk is a person's verdict", "stages[1].name: required", `stages[2].name: "!!" has no letter or digit`,
					`stages[3].aliases: alias "---" has no letter or digit`}},
			{"a mapping of an alias", `[{"name": "won", "aliases": ["Closed Won"]}]`,
				`[{"name": "Won deals", "stage": "Closed Won", "dataset": "Main", "event_name": "Purchase", "order": 1, "value": "from_change"}]`,
				[]string{`stage_mappings[0].stage: "Closed Won" is an alias of the stage won: a mapping names the stage itself, won`}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := Apply(t.Context(), s, box, nil, decodeFile(t, stagesFile("acme", tt.stages, tt.mappings)), Options{})
				inv, ok := errors.AsType[*Invalid](err)
				if !ok {
					t.Fatalf("Apply err = %v; want *Invalid", err)
				}
				got := inv.Error()
				for _, w := range tt.want {
					if !strings.Contains(got, w) {
						t.Errorf("problems: %s\nwant %q", got, w)
					}
				}
				if after := stageLine(t, s, "acme"); after != before {
					t.Errorf("stages after a refused file = %s; want %s", after, before)
				}
			})
		}
		// A stage that changes name and claims none of the old one's
		// labels is added; the old one stays.
		mustApply(t, s, box, nil, decodeFile(t, stagesFile("acme", `[{"name": "Won deal"}]`, "")))
		if got := stageLine(t, s, "acme"); got != "Won deal[],won[Closed Won],qualified[],booked[]*" {
			t.Errorf("after a new name: %s; want won kept", got)
		}
	})
}

// Decode reads stages strictly.
func TestDecodeStages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ stages, want string }{
		{`{}`, "stages: must be a list of stages, not an object"},
		{`[{"name": "won", "alias": ["x"]}]`, "stages[0].alias: unknown field"},
		{`[{"name": "won", "aliases": "Closed Won"}]`, "stages[0].aliases: must be a list of strings"},
		{`[{"name": "won", "aliases": ["a\u0000b"]}]`, "stages[0].aliases: contains a NUL character"},
		{`[{"name": "won", "booking": "yes"}]`, "stages[0].booking: must be true or false"},
		{`[` + strings.Repeat(`{"name": "x"},`, store.MaxStages) + `{"name": "y"}]`, "stages: use at most 200 stages, not 201"},
	} {
		_, ps := Decode(strings.NewReader(stagesFile("acme", tt.stages, "")))
		if len(ps) == 0 || !strings.HasPrefix(ps[0].String(), tt.want) {
			t.Errorf("Decode(stages %.40s) problems = %v; want %q", tt.stages, ps, tt.want)
		}
	}
	f, ps := Decode(strings.NewReader(stagesFile("acme", `null`, "")))
	if len(ps) > 0 || f.Stages != nil {
		t.Errorf("stages null: %v, %v; want absent", f.Stages, ps)
	}
}
