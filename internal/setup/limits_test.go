package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// datasets are n dry-run datasets named first, first+1, ...
func datasets(first, n int) []DatasetSpec {
	out := make([]DatasetSpec, n)
	for i := range out {
		out[i] = DatasetSpec{Name: fmt.Sprintf("Dataset %d", first+i), PixelID: fmt.Sprintf("%d", 100000+first+i), Mode: models.ModeDryRun}
	}
	return out
}

func TestValidateDatasetCount(t *testing.T) {
	t.Parallel()
	accountHas := func(n int) *known {
		k := &known{datasets: map[string]models.Dataset{}}
		for _, d := range datasets(0, n) {
			k.datasets[strings.ToLower(d.Name)] = models.Dataset{Name: d.Name}
		}
		return k
	}
	tests := []struct {
		name  string
		file  []DatasetSpec
		known *known // nil: the command line's check, before the database
		want  string // the problem at datasets; "" for none
	}{
		{"the most", datasets(0, store.MaxDatasets), nil, ""},
		{"one more", datasets(0, store.MaxDatasets+1), nil, "datasets: use at most 50 datasets, not 51"},
		{"a thousand", datasets(0, 1000), accountHas(0), "datasets: use at most 50 datasets, not 1000"},
		{"the account's and the file's together", datasets(45, 5), accountHas(45), ""},
		{"one too many together", datasets(45, 6), accountHas(45),
			"datasets: the account would have 51 datasets, over the limit of 50: it has 45 that the file leaves out"},
		{"the file names some of the account's", datasets(40, 10), accountHas(45), ""},
		{"the file names them ignoring case", []DatasetSpec{{Name: "DATASET 0", PixelID: "123456", Mode: models.ModeDryRun}}, accountHas(50), ""},
		{"an account over the limit from before adds none", datasets(0, 2), accountHas(60), ""},
		{"an account over the limit from before adds one", datasets(60, 1), accountHas(60),
			"datasets: the account would have 61 datasets, over the limit of 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := acmeFile()
			f.Datasets = tt.file
			var got []string
			for _, p := range f.validate(env(acmeEnv()), tt.known) {
				if p.Path == "datasets" {
					got = append(got, p.String())
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("validate = %q; want no problem at datasets", got)
			case tt.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("validate = %q; want one problem starting with %q", got, tt.want)
			}
		})
	}
}

// TestApplyDatasetCount: the account's datasets that the file leaves out
// count too, and nothing is changed when there would be too many.
func TestApplyDatasetCount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		f := acmeFile()
		f.Datasets = datasets(0, 45)
		mustApply(t, s, box, nil, f)
		f.Datasets = datasets(45, 6)
		_, err := Apply(t.Context(), s, box, nil, f, Options{})
		inv, ok := errors.AsType[*Invalid](err)
		if !ok || len(inv.Problems) != 1 || inv.Problems[0].Path != "datasets" || !strings.Contains(inv.Problems[0].Message, "would have 51 datasets") {
			t.Fatalf("Apply(6 more) = %v; want the datasets problem", err)
		}
		if n := len(load(t, s, "acme").Datasets); n != 45 {
			t.Errorf("the account has %d datasets; want 45, as before", n)
		}
		f.Datasets = datasets(45, 5)
		mustApply(t, s, box, nil, f)
		if n := len(load(t, s, "acme").Datasets); n != store.MaxDatasets {
			t.Errorf("the account has %d datasets; want %d", n, store.MaxDatasets)
		}
	})
}

// TestValidateCost: the file's send_rules replace the account's, so their
// cost together must be within the account's budget (rule.CostProblem).
func TestValidateCost(t *testing.T) {
	t.Parallel()
	costly := func(i int) RuleSpec {
		return RuleSpec{Name: fmt.Sprintf("Costly %d", i), Dataset: "Main", Mode: rule.AutomaticMatch, EventName: "QualifiedLead",
			Combinator: rule.And, Enabled: true,
			Conditions: []rule.Condition{{Field: "message", MatchType: rule.Regex, Pattern: strings.Repeat("[a-z]x", 100) + fmt.Sprint(i)}}}
	}
	f := rulesFile()
	f.SendRules = nil
	var stored []models.SendRule
	for i := 0; rule.AccountCost(stored) <= rule.MaxAccountCost; i++ {
		f.SendRules = append(f.SendRules, costly(i))
		stored = append(stored, ruleOf(models.SendRule{}, f.SendRules[i], nil))
	}
	want := []string{"send_rules: " + rule.CostProblem(rule.AccountCost(stored))}
	if got := strings.Split(strings.TrimSpace(join2(f.Validate(env(acmeEnv())))), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("Validate(%d costly rules) =\n%q\nwant\n%q", len(f.SendRules), got, want)
	}
	// A disabled rule costs nothing.
	f.SendRules[0].Enabled = false
	if got := f.Validate(env(acmeEnv())); len(got) != 0 {
		t.Errorf("Validate(one of them disabled) = %q; want no problem", got)
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	r := func(name, dataset string, mode rule.Mode, event string, enabled bool) RuleSpec {
		var cs []rule.Condition
		if mode == rule.AutomaticMatch {
			cs = []rule.Condition{{Field: "email", MatchType: rule.NotEmpty}}
		}
		return RuleSpec{Name: name, Dataset: dataset, Mode: mode, EventName: event, Combinator: rule.And, Conditions: cs, Enabled: enabled}
	}
	tests := []struct {
		name  string
		rules []RuleSpec
		want  []string
	}{
		{"different events", []RuleSpec{
			r("A", "Main", rule.AutomaticCompleted, "Lead", true), r("B", "Main", rule.AutomaticMatch, "QualifiedLead", true)}, nil},
		{"different datasets", []RuleSpec{
			r("A", "Main", rule.AutomaticCompleted, "Lead", true), r("B", "Demo", rule.AutomaticMatch, "Lead", true)}, nil},
		{"same dataset and event", []RuleSpec{
			r("A", "Main", rule.AutomaticCompleted, "Lead", true), r("B", "Demo", rule.AutomaticCompleted, "Lead", true),
			r("C", "main", rule.AutomaticMatch, "Lead", true)},
			[]string{`send_rules[2]: shares dataset "main" and event Lead with send_rules[0]; leads that match both get one event, owned by send_rules[0]`}},
		{"three share: each names the first", []RuleSpec{
			r("A", "Main", rule.AutomaticMatch, "QualifiedLead", true), r("B", "Main", rule.AutomaticMatch, "QualifiedLead", true),
			r("C", "Main", rule.AutomaticMatch, "QualifiedLead", true)},
			[]string{
				`send_rules[1]: shares dataset "Main" and event QualifiedLead with send_rules[0]; leads that match both get one event, owned by send_rules[0]`,
				`send_rules[2]: shares dataset "Main" and event QualifiedLead with send_rules[0]; leads that match both get one event, owned by send_rules[0]`,
			}},
		{"a disabled rule", []RuleSpec{
			r("A", "Main", rule.AutomaticCompleted, "Lead", false), r("B", "Main", rule.AutomaticMatch, "Lead", true)}, nil},
		{"manual rules are not automatic", []RuleSpec{
			r("A", "Main", rule.AutomaticCompleted, "Lead", true), r("C", "Main", rule.Manual, "Lead", true)}, nil},
		{"partial leads too", []RuleSpec{
			r("A", "Main", rule.AutomaticPartial, "PartialLead", true), r("B", "Main", rule.AutomaticPartial, "PartialLead", true)},
			[]string{`send_rules[1]: shares dataset "Main" and event PartialLead with send_rules[0]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := rulesFile()
			f.SendRules = tt.rules
			if ps := f.Validate(env(acmeEnv())); len(ps) > 0 {
				t.Fatalf("Validate = %q; a warning is no problem", ps)
			}
			got := f.clean().warnings()
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q; want %q", got, tt.want)
			}
			for i, w := range got {
				if !strings.HasPrefix(w.String(), tt.want[i]) {
					t.Errorf("warning %d = %q; want it to start with %q", i, w, tt.want[i])
				}
			}
		})
	}
}

// TestApplyReportsWarnings: the file applies, and the report (of a plan
// and of an apply) carries its warnings.
func TestApplyReportsWarnings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := rulesFile()
		f.SendRules = append(f.SendRules, RuleSpec{Name: "Main leads again", Dataset: "MAIN", Mode: rule.AutomaticMatch, EventName: "Lead",
			Combinator: rule.And, Conditions: []rule.Condition{{Field: "email", MatchType: rule.NotEmpty}}, Enabled: true})
		want := []Warning{{Path: "send_rules[4]", Message: `shares dataset "MAIN" and event Lead with send_rules[0]; ` +
			"leads that match both get one event, owned by send_rules[0]"}}
		for _, do := range []func() (Report, error){
			func() (Report, error) { return Plan(t.Context(), s, newBox(t), env(acmeEnv()), f, Options{}) },
			func() (Report, error) { return Apply(t.Context(), s, newBox(t), env(acmeEnv()), f, Options{}) },
		} {
			r, err := do()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Warnings, want) {
				t.Errorf("warnings = %q; want %q", r.Warnings, want)
			}
		}
		if n := len(rulesOf(t, s, "acme")); n != 5 {
			t.Errorf("the account has %d rules; want the file's 5", n)
		}
	})
}

// TestDefaultRuleOfALongDataset: a dataset whose name has the most
// characters a name may have gets a default rule whose name fits too, so
// the account's export applies again, here and to another account.
func TestDefaultRuleOfALongDataset(t *testing.T) {
	t.Parallel()
	for _, long := range []string{strings.Repeat("d", name.MaxLen), strings.Repeat("ü", name.MaxLen-1) + "😀"} {
		t.Run(fmt.Sprintf("%.3s", long), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, s *store.Store) {
				box := newBox(t)
				f := acmeFile()
				f.Datasets = []DatasetSpec{{Name: long, PixelID: "123456789", Mode: models.ModeDryRun}}
				mustApply(t, s, box, nil, f)
				rs := rulesOf(t, s, "acme")
				if len(rs) != 1 {
					t.Fatalf("rules = %q; want the dataset's default rule", ruleNamesOf(rs))
				}
				if got := rs[0].Name; name.Problem(got) != "" || !strings.HasPrefix(got, "Completed leads to ") || !strings.HasSuffix(got, "…") {
					t.Errorf("default rule name = %q (%d characters): %s", got, utf8.RuneCountInString(got), name.Problem(got))
				}

				exported, _, err := Export(t.Context(), s, "acme", "")
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := json.NewEncoder(&buf).Encode(exported); err != nil {
					t.Fatal(err)
				}
				again, problems := Decode(&buf)
				if len(problems) > 0 {
					t.Fatalf("Decode(export) = %q", problems)
				}
				if r := mustApply(t, s, box, nil, again); len(r.Changes) != 0 {
					t.Errorf("Apply(export) changes = %q; want none", r.Changes)
				}
				again.Account.Slug = "bright"
				mustApply(t, s, box, nil, again)
				if got := ruleNamesOf(rulesOf(t, s, "bright")); !reflect.DeepEqual(got, ruleNamesOf(rs)) {
					t.Errorf("bright's rules = %q; want acme's %q", got, ruleNamesOf(rs))
				}
			})
		})
	}
}
