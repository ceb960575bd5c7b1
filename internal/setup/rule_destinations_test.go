package setup

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// fanFile is acmeFile with a TikTok destination, and send rules and stage
// mappings that name several destinations, one of another kind alone,
// and a dataset alone as before.
func fanFile() File {
	f := acmeFile()
	f.Destinations = []DatasetSpec{{Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", Mode: models.ModeDryRun}}
	f.SendRules = []RuleSpec{
		{Name: "Everywhere", Destinations: []string{"Main", "TikTok"}, Mode: rule.AutomaticCompleted, EventName: "Lead", Enabled: true},
		{Name: "TikTok only", Destinations: []string{"tiktok"}, Mode: rule.Manual, EventName: "Contact", Enabled: true},
		{Name: "Meta only", Dataset: "Demo", Mode: rule.AutomaticPartial, EventName: "PartialLead", Enabled: true},
	}
	f.StageMappings = []MappingSpec{
		{Name: "Won", Stage: "won", Destinations: []string{"TikTok", "main"}, EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Enabled: true},
		{Stage: "qualified", Dataset: "Main", EventName: "QualifiedLead", Enabled: true},
	}
	return f
}

// destinationsOfRule names a stored rule's destinations, in the order
// they are kept (of their ids).
func destinationsOfRule(r models.SendRule, ds []models.Dataset) []string {
	var out []string
	for _, id := range r.Destinations() {
		for _, d := range ds {
			if d.ID == id {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

// TestApplyRuleDestinations: send rules and stage mappings get the
// destinations the file names, whatever their kind, kept in the order of
// their ids (the file's order says nothing); the
// same file again changes nothing; a new list is one change, and the same
// destination named either way is none.
func TestApplyRuleDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r := mustApply(t, s, box, acmeEnv(), fanFile())
		want := []string{
			`send_rules[0]: created "Everywhere" (Lead to Main and TikTok, automatic_completed)`,
			`send_rules[1]: created "TikTok only" (Contact to TikTok, manual)`,
			`send_rules[2]: created "Meta only" (PartialLead to Demo, automatic_partial)`,
			`stage_mappings[0]: created "Won" (stage won: Purchase to Main and TikTok, value from the stage change)`,
			`stage_mappings[1]: created "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`,
		}
		if got := slices.Concat(changesUnder(r.Changes, "send_rules"), changesUnder(r.Changes, "stage_mappings")); !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		st := load(t, s, "acme")
		rs := rulesOf(t, s, "acme")
		wantDests := [][]string{{"Main", "TikTok"}, {"TikTok"}, {"Demo"}, {"Main", "TikTok"}, {"Main"}}
		for i, r := range rs {
			if got := destinationsOfRule(r, st.Datasets); !slices.Equal(got, wantDests[i]) {
				t.Errorf("%s's destinations = %q; want %q", r.Name, got, wantDests[i])
			}
		}
		if rs[1].AlsoDatasetIDs != nil || rs[4].AlsoDatasetIDs != nil {
			t.Errorf("rules of one destination have AlsoDatasetIDs %v, %v; want none", rs[1].AlsoDatasetIDs, rs[4].AlsoDatasetIDs)
		}
		n := versions(t, s, st.Account.ID, ruleIDs(rs))

		r = mustApply(t, s, box, acmeEnv(), fanFile())
		if len(r.Changes) != 0 || r.Summary != (Summary{}) {
			t.Errorf("second Apply changes = %q, summary %+v; want none", r.Changes, r.Summary)
		}
		if again := rulesOf(t, s, "acme"); !reflect.DeepEqual(again, rs) {
			t.Errorf("second Apply changed the rules:\n%+v\nwant\n%+v", again, rs)
		}
		if got := versions(t, s, st.Account.ID, ruleIDs(rs)); got != n {
			t.Errorf("versions after a second Apply = %d; want %d", got, n)
		}

		f := fanFile()
		f.SendRules[0].Destinations = []string{"TikTok", "Main", "Demo"}
		f.SendRules[2].Dataset, f.SendRules[2].Destinations = "", []string{"DEMO"} // the same destination
		f.StageMappings[0].Dataset, f.StageMappings[0].Destinations = "Main", nil
		r = mustApply(t, s, box, acmeEnv(), f)
		want = []string{
			"send_rules[0].destinations: Main and TikTok → Main, Demo and TikTok",
			"stage_mappings[0].dataset: Main and TikTok → Main",
		}
		if got := lines(r.Changes); got != strings.Join(want, "\n")+"\n" {
			t.Errorf("changes =\n%s\nwant\n%s", got, strings.Join(want, "\n"))
		}
		if want := (Summary{RulesChanged: 1, MappingsChanged: 1}); r.Summary != want {
			t.Errorf("summary = %+v; want %+v", r.Summary, want)
		}
		rs = rulesOf(t, s, "acme")
		if got := destinationsOfRule(rs[0], st.Datasets); !slices.Equal(got, []string{"Main", "Demo", "TikTok"}) {
			t.Errorf("Everywhere's destinations = %q; want Main, Demo, TikTok", got)
		}
		if won := rs[3]; won.DatasetID != datasetNamed(t, st.Datasets, "Main").ID || won.AlsoDatasetIDs != nil {
			t.Errorf("Won = %+v; want Main alone", won)
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("Apply again changes = %q; want none", r.Changes)
		}

		// A name neither the file nor the account has is refused, with the
		// account's names, and changes nothing.
		f.SendRules[1].Destinations = []string{"TikTok", "Snapchat"}
		_, err := Apply(t.Context(), s, box, env(acmeEnv()), f, Options{})
		wantProblem := `send_rules[1].destinations[1]: no destination is named "Snapchat" in the file or the account; there are "Main", "Demo", "TikTok"`
		if inv, ok := errors.AsType[*Invalid](err); !ok || len(inv.Problems) != 1 || inv.Problems[0].String() != wantProblem {
			t.Errorf("Apply = %v; want %s", err, wantProblem)
		}
		if again := rulesOf(t, s, "acme"); !reflect.DeepEqual(again, rs) {
			t.Errorf("a refused Apply changed the rules")
		}
	})
}

// TestExportRuleDestinations: a rule or mapping whose only destination is
// a Meta dataset exports as dataset, as before; any other with
// destinations and no dataset. The export applies as no change here, and
// as the same rules elsewhere.
func TestExportRuleDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), fanFile())
		exp, _, err := Export(ctx, s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		type refs struct {
			dataset string
			dests   []string
		}
		var got []refs
		for _, r := range exp.SendRules {
			got = append(got, refs{r.Dataset, r.Destinations})
		}
		for _, m := range exp.StageMappings {
			got = append(got, refs{m.Dataset, m.Destinations})
		}
		want := []refs{{"", []string{"Main", "TikTok"}}, {"", []string{"TikTok"}}, {"Demo", nil}, {"", []string{"Main", "TikTok"}}, {"Main", nil}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("exported destinations = %+v; want %+v", got, want)
		}
		for _, tt := range []struct {
			v        any
			has, not string
		}{
			{exp.SendRules[0], `"destinations":["Main","TikTok"]`, `"dataset"`},
			{exp.SendRules[2], `"dataset":"Demo"`, `"destinations"`},
			{exp.StageMappings[0], `"destinations":["Main","TikTok"]`, `"dataset"`},
			{exp.StageMappings[1], `"dataset":"Main"`, `"destinations"`},
		} {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.has) || strings.Contains(string(b), tt.not) {
				t.Errorf("Marshal = %s; want %s and no %s", b, tt.has, tt.not)
			}
		}

		b, err := json.MarshalIndent(exp, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		back, problems := Decode(strings.NewReader(string(b)))
		if len(problems) > 0 {
			t.Fatalf("the export does not decode: %q", problems)
		}
		if r := mustApply(t, s, box, acmeEnv(), back); len(r.Changes) != 0 {
			t.Errorf("applying the export changes %q; want nothing", r.Changes)
		}
		back.Account.Slug = "bright"
		mustApply(t, s, box, acmeEnv(), back)
		cloned, _, err := Export(ctx, s, "bright", "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cloned.SendRules, exp.SendRules) || !reflect.DeepEqual(cloned.StageMappings, exp.StageMappings) {
			t.Errorf("bright's rules and mappings =\n%+v\n%+v\nwant acme's\n%+v\n%+v", cloned.SendRules, cloned.StageMappings, exp.SendRules, exp.StageMappings)
		}
	})
}
