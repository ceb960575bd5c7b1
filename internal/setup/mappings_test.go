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

// mappingsFile is rulesFile with three stage mappings: one of a template
// stage without a name, one with its value and currency from the change
// (its stage in another case than the account's), and one of a stage the
// account lacks.
func mappingsFile() File {
	f := rulesFile()
	f.StageMappings = []MappingSpec{
		{Stage: "qualified", Dataset: "Main", EventName: "QualifiedLead", Enabled: true},
		{Name: "Big wins", Stage: "Won", Dataset: "main", EventName: "Purchase",
			Conditions: []rule.Condition{{Field: "fields.budget", MatchType: rule.GT, Pattern: "500"}},
			Value:      &ValueSpec{FromChange: true}, Currency: &CurrencySpec{FromChange: true}, Repeatable: true, Enabled: true},
		{Stage: "Proposal", Dataset: "Demo", EventName: "SubmitApplication", Value: &ValueSpec{Fixed: 100}, Currency: &CurrencySpec{Code: "USD"}},
	}
	return f
}

// mappingsOf lists an account's stage mappings in order.
func mappingsOf(t *testing.T, s *store.Store, slug string) []models.SendRule {
	t.Helper()
	return slices.DeleteFunc(rulesOf(t, s, slug), func(r models.SendRule) bool { return !isMapping(r) })
}

// stageNames lists an account's stages in order.
func stageNames(t *testing.T, s *store.Store, slug string) []string {
	t.Helper()
	a, err := s.AccountBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.Stages(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range ss {
		out = append(out, st.Name)
	}
	return out
}

// changesUnder lists the changes whose path starts with prefix.
func changesUnder(cs []Change, prefix string) []string {
	var out []string
	for _, c := range cs {
		if strings.HasPrefix(c.Path, prefix) {
			out = append(out, c.String())
		}
	}
	return out
}

func TestApplyMappingsCreatesThenChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r := mustApply(t, s, box, acmeEnv(), mappingsFile())
		want := []string{
			`stage_mappings[0]: created "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`,
			`stage_mappings[1]: created "Big wins" (stage won: Purchase to Main, value from the stage change, 1 condition, repeatable)`,
			`stage_mappings[2].stage: added the stage "Proposal" to the account's stages, after "won"`,
			`stage_mappings[2]: created "Proposal to SubmitApplication" (stage Proposal: SubmitApplication to Demo, value 100, disabled)`,
		}
		if got := changesUnder(r.Changes, "stage_mappings"); !slices.Equal(got, want) {
			t.Errorf("stage mapping changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if want := (Summary{AccountCreated: true, DatasetsAdded: 2, JunkChanges: 2, RulesAdded: 4, StagesAdded: 1, MappingsAdded: 3}); r.Summary != want {
			t.Errorf("summary = %+v; want %+v", r.Summary, want)
		}

		// The send rules first, then the mappings, each in the file's
		// order.
		rs := rulesOf(t, s, "acme")
		if got, want := ruleNamesOf(rs), []string{"Completed leads", "Big budgets", "Partial", "Booked",
			"qualified to QualifiedLead", "Big wins", "Proposal to SubmitApplication"}; !slices.Equal(got, want) {
			t.Fatalf("rules = %q; want %q", got, want)
		}
		st := load(t, s, "acme")
		main, demo := datasetNamed(t, st.Datasets, "Main"), datasetNamed(t, st.Datasets, "Demo")
		if big := rs[5]; big.Mode != string(rule.Stage) || big.Stage != "won" || big.DatasetID != main.ID || big.EventName != "Purchase" ||
			big.ValueField != models.StageValueFromChange || big.Value != nil || big.CurrencyField != models.StageValueFromChange ||
			big.Currency != "" || !big.Repeatable || !big.Enabled || big.Combinator != "and" || conditionsOf(big).Count() != 1 {
			t.Errorf("Big wins = %+v; want the file's mapping, of the account's stage won", big)
		}
		if p := rs[6]; p.Stage != "Proposal" || p.DatasetID != demo.ID || p.Value == nil || *p.Value != 100 || p.Currency != "USD" || p.Enabled || p.Repeatable {
			t.Errorf("Proposal to SubmitApplication = %+v; want the file's mapping", p)
		}
		if got, want := stageNames(t, s, "acme"), []string{"qualified", "booked", "won", "Proposal"}; !slices.Equal(got, want) {
			t.Errorf("stages = %q; want %q", got, want)
		}
		n := versions(t, s, st.Account.ID, ruleIDs(rs))

		// The same file again: nothing changes, no version is kept.
		r = mustApply(t, s, box, acmeEnv(), mappingsFile())
		if len(r.Changes) != 0 || r.Summary != (Summary{}) {
			t.Errorf("second Apply changes = %q, summary %+v; want none", r.Changes, r.Summary)
		}
		if again := rulesOf(t, s, "acme"); !reflect.DeepEqual(again, rs) {
			t.Errorf("second Apply changed the rules:\n%+v\nwant\n%+v", again, rs)
		}
		if got := versions(t, s, st.Account.ID, ruleIDs(rs)); got != n {
			t.Errorf("versions after a second Apply = %d; want %d", got, n)
		}
		if got := stageNames(t, s, "acme"); len(got) != 4 {
			t.Errorf("stages after a second Apply = %q; want the same 4", got)
		}
	})
}

func TestApplyMappingsReplaces(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), mappingsFile())
		before := mappingsOf(t, s, "acme")

		f := mappingsFile()
		big, proposal := f.StageMappings[1], f.StageMappings[2]
		big.Name, big.Order = "BIG WINS", 2 // the same mapping, ignoring case
		big.Conditions, big.Value, big.Currency, big.Repeatable = nil, &ValueSpec{Fixed: 500}, nil, false
		proposal.Order, proposal.Enabled = 1, true
		lost := MappingSpec{Name: "Lost deals", Stage: "lost", Dataset: "Main", EventName: "LostDeal", Order: 3, Enabled: true}
		// qualified's mapping left out; the list's order is not the
		// mappings' order.
		f.StageMappings = []MappingSpec{lost, proposal, big}
		r := mustApply(t, s, box, acmeEnv(), f)
		want := []Change{
			{Path: "stage_mappings", What: `deleted "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`},
			{Path: "stage_mappings[0].stage", What: `added the stage "lost" to the account's stages, after "Proposal"`},
			{Path: "stage_mappings[0]", What: `created "Lost deals" (stage lost: LostDeal to Main)`},
			{Path: "stage_mappings[1].enabled", What: "disabled → enabled"},
			{Path: "stage_mappings[2].name", What: "Big wins → BIG WINS"},
			{Path: "stage_mappings[2].conditions", What: "Form field budget is greater than 500 → none"},
			{Path: "stage_mappings[2].value", What: "from the stage change → 500"},
			{Path: "stage_mappings[2].currency", What: "from the stage change → the account's"},
			{Path: "stage_mappings[2].repeatable", What: "every change → once per lead"},
			{Path: "stage_mappings", What: `order "Big wins", "Proposal to SubmitApplication" → "Proposal to SubmitApplication", "Big wins"`},
		}
		if !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply changes =\n%s\nwant\n%s", lines(r.Changes), lines(want))
		}
		if want := (Summary{StagesAdded: 1, MappingsAdded: 1, MappingsChanged: 2, MappingsDeleted: 1, MappingsReordered: true}); r.Summary != want {
			t.Errorf("summary = %+v; want %+v", r.Summary, want)
		}
		after := mappingsOf(t, s, "acme")
		if got := ruleNamesOf(after); !slices.Equal(got, []string{"Proposal to SubmitApplication", "BIG WINS", "Lost deals"}) {
			t.Fatalf("mappings = %q; want them by their order", got)
		}
		if after[1].ID != before[1].ID || after[0].ID != before[2].ID {
			t.Errorf("the kept mappings have new ids: %+v; want them updated in place", after)
		}
		if got := ruleNamesOf(rulesOf(t, s, "acme"))[:4]; !slices.Equal(got, []string{"Completed leads", "Big budgets", "Partial", "Booked"}) {
			t.Errorf("send rules = %q; want them as they were, before the mappings", got)
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}

		// An empty list deletes every mapping, and no send rule.
		f.StageMappings = []MappingSpec{}
		r = mustApply(t, s, box, acmeEnv(), f)
		if r.Summary.MappingsDeleted != 3 || len(mappingsOf(t, s, "acme")) != 0 || len(rulesOf(t, s, "acme")) != 4 {
			t.Errorf("Apply(stage_mappings: []) summary %+v, rules %q; want the 3 mappings deleted, the 4 send rules kept",
				r.Summary, ruleNamesOf(rulesOf(t, s, "acme")))
		}
		// The stages a mapping added stay: stage changes may name them.
		if got := stageNames(t, s, "acme"); !slices.Equal(got, []string{"qualified", "booked", "won", "Proposal", "lost"}) {
			t.Errorf("stages = %q; want the added ones kept", got)
		}
	})
}

// TestSendRulesAndMappingsApart: send_rules replaces the send rules only,
// stage_mappings the mappings only; a list left out keeps its rows; and a
// name one list drops may be taken by the other.
func TestSendRulesAndMappingsApart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), mappingsFile())
		mappings := mappingsOf(t, s, "acme")

		// send_rules without stage_mappings, then an empty send_rules.
		f := mappingsFile()
		f.StageMappings = nil
		f.SendRules = f.SendRules[:1]
		for _, list := range [][]RuleSpec{f.SendRules, {}} {
			f.SendRules = list
			r := mustApply(t, s, box, acmeEnv(), f)
			if got := changesUnder(r.Changes, "stage_mappings"); len(got) != 0 {
				t.Errorf("send_rules %d long: mapping changes %q; want none", len(list), got)
			}
			if got := mappingsOf(t, s, "acme"); !reflect.DeepEqual(ruleIDs(got), ruleIDs(mappings)) {
				t.Errorf("send_rules %d long: mappings = %q; want them kept", len(list), ruleNamesOf(got))
			}
		}
		if got := ruleNamesOf(rulesOf(t, s, "acme")); len(got) != 3 {
			t.Errorf("rules = %q; want the 3 mappings only", got)
		}

		// stage_mappings without send_rules.
		mustApply(t, s, box, acmeEnv(), rulesFile())
		f = mappingsFile()
		f.SendRules = nil
		f.StageMappings = f.StageMappings[:1]
		r := mustApply(t, s, box, acmeEnv(), f)
		if got := changesUnder(r.Changes, "send_rules"); len(got) != 0 {
			t.Errorf("mapping changes touched send rules: %q", got)
		}
		if got := ruleNamesOf(rulesOf(t, s, "acme")); !slices.Equal(got, []string{"Completed leads", "Big budgets", "Partial", "Booked", "qualified to QualifiedLead"}) {
			t.Errorf("rules = %q; want the send rules kept and one mapping", got)
		}

		// Export keeps them apart.
		exp, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range exp.SendRules {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"Completed leads", "Big budgets", "Partial", "Booked"}) || len(exp.StageMappings) != 1 ||
			exp.StageMappings[0].Stage != "qualified" {
			t.Errorf("export send_rules %q, stage_mappings %+v; want the 4 send rules and the 1 mapping apart", names, exp.StageMappings)
		}

		// Names move between the lists: a send rule takes the name of a
		// mapping the file drops, and a mapping that of a dropped rule.
		f = mappingsFile()
		f.SendRules = append(f.SendRules[:3], RuleSpec{Name: "QUALIFIED to QualifiedLead", Dataset: "Main", Mode: rule.Manual, EventName: "Contact", Enabled: true})
		f.StageMappings = []MappingSpec{{Name: "Booked", Stage: "booked", Dataset: "Demo", EventName: "Schedule", Enabled: true}}
		r = mustApply(t, s, box, acmeEnv(), f)
		want := []string{
			`send_rules: deleted "Booked" (Schedule to Demo, manual)`,
			`send_rules[3]: created "QUALIFIED to QualifiedLead" (Contact to Main, manual)`,
			`stage_mappings: deleted "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`,
			`stage_mappings[0]: created "Booked" (stage booked: Schedule to Demo)`,
		}
		if got := strings.Split(strings.TrimSpace(lines(r.Changes)), "\n"); !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", lines(r.Changes), strings.Join(want, "\n"))
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}
	})
}

// TestExportMappingsRoundTrip: the export writes the mappings as the file
// gave them (a default name left out, orders from 1), applies to another
// account as the same mappings, and to the same account as no change.
func TestExportMappingsRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), mappingsFile())
		exp, _, err := Export(ctx, s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		want := []MappingSpec{
			{Stage: "qualified", Dataset: "Main", EventName: "QualifiedLead", Order: 1, Combinator: rule.And, Conditions: []rule.Condition{}, Enabled: true},
			{Name: "Big wins", Stage: "won", Dataset: "Main", EventName: "Purchase", Order: 2, Combinator: rule.And,
				Conditions: []rule.Condition{{Field: "fields.budget", MatchType: rule.GT, Pattern: "500"}},
				Value:      &ValueSpec{FromChange: true}, Currency: &CurrencySpec{FromChange: true}, Repeatable: true, Enabled: true},
			{Stage: "Proposal", Dataset: "Demo", EventName: "SubmitApplication", Order: 3, Combinator: rule.And, Conditions: []rule.Condition{},
				Value: &ValueSpec{Fixed: 100}, Currency: &CurrencySpec{Code: "USD"}},
		}
		if !reflect.DeepEqual(exp.StageMappings, want) {
			t.Errorf("export stage_mappings =\n%+v\nwant\n%+v", exp.StageMappings, want)
		}
		b, err := json.MarshalIndent(exp, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{`"value": "from_change"`, `"currency": "from_change"`, `"stage": "Proposal"`, `"order": 3`} {
			if !strings.Contains(string(b), part) {
				t.Errorf("export JSON lacks %s:\n%s", part, b)
			}
		}

		// Decoded back, the export is no change here, and the same
		// mappings (and the stage they need) elsewhere.
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
		if !reflect.DeepEqual(cloned.StageMappings, exp.StageMappings) {
			t.Errorf("bright's stage_mappings =\n%+v\nwant acme's\n%+v", cloned.StageMappings, exp.StageMappings)
		}
		if got := stageNames(t, s, "bright"); !slices.Equal(got, []string{"qualified", "booked", "won", "Proposal"}) {
			t.Errorf("bright's stages = %q; want Proposal added", got)
		}

		// An account without mappings exports an empty list.
		mustApply(t, s, box, nil, File{Account: AccountSpec{Slug: "empty", Name: "Empty", Timezone: "UTC", Currency: "EUR"}})
		if f, _, err := Export(ctx, s, "empty", ""); err != nil || f.StageMappings == nil || len(f.StageMappings) != 0 {
			t.Errorf("export of an account without mappings = %+v, %v; want stage_mappings: []", f.StageMappings, err)
		}
	})
}

// A plan reports the stage it would add, and adds none; the account's
// names that a file leaves in place are refused by Apply, which knows
// them.
func TestPlanMappingsAndAccountNames(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), mappingsFile())
		f := mappingsFile()
		f.StageMappings[0].Name, f.StageMappings[0].Stage = "qualified to QualifiedLead", "Negotiation"
		r, err := Plan(t.Context(), s, box, env(acmeEnv()), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := changesUnder(r.Changes, "stage_mappings[0].stage"); len(got) != 2 ||
			got[0] != `stage_mappings[0].stage: added the stage "Negotiation" to the account's stages, after "Proposal"` {
			t.Errorf("plan changes = %q; want the stage added, then the mapping's stage changed", got)
		}
		if got := stageNames(t, s, "acme"); slices.Contains(got, "Negotiation") {
			t.Errorf("stages after a plan = %q; want no Negotiation", got)
		}

		f = mappingsFile()
		f.StageMappings = nil
		f.SendRules[0].Name = "big wins"
		_, err = Apply(t.Context(), s, box, env(acmeEnv()), f, Options{})
		want := `send_rules[0].name: "big wins" is the name of the account's stage mapping of stage won, which the file leaves as it is (it has no stage_mappings)`
		if inv, ok := errors.AsType[*Invalid](err); !ok || len(inv.Problems) != 1 || !strings.HasPrefix(inv.Problems[0].String(), want) {
			t.Errorf("Apply = %v; want %s", err, want)
		}
	})
}

func TestMappingWarnings(t *testing.T) {
	t.Parallel()
	f := mappingsFile()
	f.StageMappings = append(f.StageMappings,
		MappingSpec{Name: "Won again", Stage: "won", Dataset: "MAIN", EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Repeatable: true, Enabled: true, Order: 1},
		MappingSpec{Name: "Won once", Stage: "won", Dataset: "Main", EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Enabled: true},
		MappingSpec{Name: "Won off", Stage: "won", Dataset: "Main", EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Repeatable: true},
	)
	if ps := f.Validate(env(acmeEnv())); len(ps) > 0 {
		t.Fatalf("Validate = %q", ps)
	}
	got := f.clean().warnings()
	want := []Warning{{Path: "stage_mappings[1]", Message: `sends stage Won as Purchase to dataset "main" like stage_mappings[3]; ` +
		"leads that match both get one event, owned by stage_mappings[3], the first in order"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q; want %q", got, want)
	}
}
