package setup

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

func TestDecodeRuleDestinations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value string // the destinations key's JSON
		want  []string
		// problem, when set, is the start of the one problem, after the
		// rule's or mapping's path.
		problem string
	}{
		{"names", `["Main", " TikTok "]`, []string{"Main", " TikTok "}, ""},
		{"an empty list", `[]`, []string{}, ""},
		{"null", `null`, nil, ""},
		{"a string", `"Main"`, nil, `.destinations: must be a list of destination names, like ["Main", "TikTok"], not a string`},
		{"an object", `{"name": "Main"}`, nil, `.destinations: must be a list of destination names, like ["Main", "TikTok"], not an object`},
		{"a number in the list", `["Main", 7]`, nil, ".destinations[1]: must be a string: the name of a destination, not a number"},
		{"a list in the list", `[["Main"]]`, nil, ".destinations[0]: must be a string: the name of a destination, not a list"},
		{"NUL in a name", `["Ma\u0000in"]`, nil, `.destinations[0]: contains a NUL character`},
	}
	for _, tt := range tests {
		for _, section := range []string{"send_rules", "stage_mappings"} {
			t.Run(tt.name+" in "+section, func(t *testing.T) {
				doc := fmt.Sprintf(`{"account": {"slug": "acme"}, %q: [{"name": "R", "stage": "won", "destinations": %s}]}`, section, tt.value)
				if section == "send_rules" {
					doc = strings.Replace(doc, `"stage": "won", `, "", 1)
				}
				f, problems := Decode(strings.NewReader(doc))
				if tt.problem != "" {
					if want := section + "[0]" + tt.problem; len(problems) != 1 || !strings.HasPrefix(problems[0].String(), want) {
						t.Errorf("Decode(%s) problems = %q; want one starting %q", doc, problems, want)
					}
					return
				}
				if len(problems) > 0 {
					t.Fatalf("Decode(%s) problems = %q; want none", doc, problems)
				}
				var dests []string
				if section == "send_rules" {
					dests = f.SendRules[0].Destinations
				} else {
					dests = f.StageMappings[0].Destinations
				}
				if !reflect.DeepEqual(dests, tt.want) {
					t.Errorf("destinations = %#v; want %#v", dests, tt.want)
				}
			})
		}
	}
}

// TestValidateRuleDestinations checks each problem of a send rule's or
// stage mapping's destinations, at its path.
func TestValidateRuleDestinations(t *testing.T) {
	t.Parallel()
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf("d%d", i)
	}
	tests := []struct {
		name    string
		dataset string
		dests   []string
		want    []string // after the rule's or mapping's path; none for valid
	}{
		{"a dataset and a TikTok destination of the file", "", []string{"Main", "TikTok"}, nil},
		{"names of the account, another case", "", []string{"from ui", "TIKTOK"}, nil},
		{"one destination of another kind", "", []string{"TikTok"}, nil},
		{"a dataset alone, as before", "main", nil, nil},
		{"as many as may be", "", eleven[:10], nil},
		{"both keys", "Main", []string{"TikTok"}, []string{`.destinations: give dataset or destinations, not both`}},
		{"neither key", "", nil, []string{`.dataset: required: the name of one of the datasets, or destinations: a list of destination names`}},
		{"an empty list", "", []string{}, []string{`.destinations: must name at least one destination`}},
		{"an empty name", "", []string{"Main", ""}, []string{`.destinations[1]: required: the name of a destination`}},
		{"an unknown name", "", []string{"Main", "Snapchat"},
			[]string{`.destinations[1]: no destination is named "Snapchat" in the file or the account; there are "Main", "Demo", "TikTok", "From UI", "d0"`}},
		{"a name twice, ignoring case", "", []string{"Main", "TikTok", "MAIN"},
			[]string{`.destinations[2]: "MAIN" is also destinations[0]; name each destination once (ignoring case)`}},
		{"too many", "", eleven, []string{`.destinations: use at most 10 destinations, not 11`}},
		{"a name of 40,000 characters", "", []string{"Main", strings.Repeat("n", 40_000)}, []string{`.destinations[1]: use at most 100 characters`}},
		{"every problem at once", "", []string{"Nope", "nope", ""},
			[]string{`.destinations[0]: no destination is named "Nope"`, `.destinations[1]: "nope" is also destinations[0]`, `.destinations[2]: required`}},
	}
	k := &known{datasets: map[string]models.Dataset{"from ui": {Name: "From UI"}, "main": {Name: "Main"}}}
	for _, n := range eleven {
		k.datasets[n] = models.Dataset{Name: n, Kind: models.KindPinterest}
	}
	for _, tt := range tests {
		for _, section := range []string{"send_rules", "stage_mappings"} {
			t.Run(tt.name+" in "+section, func(t *testing.T) {
				f := acmeFile()
				f.Destinations = []DatasetSpec{{Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", Mode: models.ModeDryRun}}
				if section == "send_rules" {
					f.SendRules = []RuleSpec{{Name: "R", Dataset: tt.dataset, Destinations: tt.dests, EventName: "Lead", Enabled: true}}
				} else {
					f.StageMappings = []MappingSpec{{Stage: "won", Dataset: tt.dataset, Destinations: tt.dests, EventName: "Lead", Enabled: true}}
				}
				got := f.validate(env(acmeEnv()), k)
				if len(got) != len(tt.want) {
					t.Fatalf("validate = %q; want %d problems: %q", got, len(tt.want), tt.want)
				}
				for i, p := range got {
					if want := section + "[0]" + tt.want[i]; !strings.HasPrefix(p.String(), want) {
						t.Errorf("problem %d = %q; want it to start with %q", i, p, want)
					}
				}
			})
		}
	}
	// Without the database, a name that is not in the file may be the
	// account's: only the list itself is checked.
	f := acmeFile()
	f.SendRules = []RuleSpec{{Name: "R", Destinations: []string{"Elsewhere", "elsewhere"}, EventName: "Lead", Enabled: true}}
	if got := f.Validate(env(acmeEnv())); len(got) != 1 || !strings.HasPrefix(got[0].String(), `send_rules[0].destinations[1]: "elsewhere" is also destinations[0]`) {
		t.Errorf("Validate = %q; want only the name given twice", got)
	}
}

// TestRuleDestinationWarnings: two automatic rules, or two mappings, that
// make one event on a destination are warned of, whichever key names it.
func TestRuleDestinationWarnings(t *testing.T) {
	t.Parallel()
	r := func(name, dataset string, dests ...string) RuleSpec {
		return RuleSpec{Name: name, Dataset: dataset, Destinations: dests, Mode: rule.AutomaticCompleted, EventName: "Lead", Combinator: rule.And, Enabled: true}
	}
	m := func(name, dataset string, dests ...string) MappingSpec {
		return MappingSpec{Name: name, Stage: "won", Dataset: dataset, Destinations: dests, EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Enabled: true}
	}
	tests := []struct {
		name     string
		rules    []RuleSpec
		mappings []MappingSpec
		want     []string
	}{
		{"apart", []RuleSpec{r("A", "Main"), r("B", "", "Demo", "TikTok")}, []MappingSpec{m("A1", "", "Main"), m("B1", "", "TikTok", "Demo")}, nil},
		{"a dataset among destinations", []RuleSpec{r("A", "Main"), r("B", "", "TikTok", "main")}, nil,
			[]string{`send_rules[1]: shares destination "main" and event Lead with send_rules[0]; leads that match both get one event, owned by send_rules[0]`}},
		{"destinations in a dataset", []RuleSpec{r("A", "", "TikTok", "Main"), r("B", "MAIN")}, nil,
			[]string{`send_rules[1]: shares dataset "MAIN" and event Lead with send_rules[0]`}},
		{"several, of several owners", []RuleSpec{r("A", "Main"), r("B", "", "TikTok"), r("C", "", "Demo", "TikTok", "Main"), r("D", "", "main", "tiktok")}, nil,
			[]string{
				`send_rules[2]: shares destination "TikTok" and event Lead with send_rules[1]`,
				`send_rules[2]: shares destination "Main" and event Lead with send_rules[0]`,
				`send_rules[3]: shares destination "main" and event Lead with send_rules[0]`,
				`send_rules[3]: shares destination "tiktok" and event Lead with send_rules[1]`,
			}},
		{"all of one owner", []RuleSpec{r("A", "", "Main", "TikTok"), r("B", "", "TikTok", "Main")}, nil,
			[]string{`send_rules[1]: shares destinations "TikTok", "Main" and event Lead with send_rules[0]; leads that match both get one event, owned by send_rules[0]`}},
		{"mappings", nil, []MappingSpec{m("A1", "Main"), m("B1", "", "TikTok", "MAIN"), m("C1", "", "Demo", "TikTok")},
			[]string{
				`stage_mappings[1]: sends stage won as Purchase to destination "MAIN" like stage_mappings[0]; leads that match both get one event, owned by stage_mappings[0], the first in order`,
				`stage_mappings[2]: sends stage won as Purchase to destination "TikTok" like stage_mappings[1]`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := acmeFile()
			f.Destinations = []DatasetSpec{{Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", Mode: models.ModeDryRun}}
			f.SendRules, f.StageMappings = tt.rules, tt.mappings
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
