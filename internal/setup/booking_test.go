package setup

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// oldFile is a setup file as leadsignal exported it before booking rules
// became stage mappings: a booking rule among the send rules, no
// stage_mappings.
const oldFile = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "Europe/Berlin", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "send_rules": [
    {"name": "Completed leads", "dataset": "Main", "mode": "automatic_completed", "event_name": "Lead"},
    {"name": "Booked calls", "dataset": "Main", "mode": "booking", "event_name": "Schedule", "value": 150,
     "conditions": [{"field": "country", "match_type": "not_equals", "pattern": "FR"}], "combinator": "and",
     "test_event_code": "TEST1"}
  ]
}`

func decodeFile(t *testing.T, text string) File {
	t.Helper()
	f, ps := Decode(strings.NewReader(text))
	if len(ps) > 0 {
		t.Fatalf("Decode: %v", ps)
	}
	return f
}

// An old file's booking rule is applied as the stage mapping of the
// account's booking stage, with a warning at its mode; applying it again
// changes nothing, and the export lists the mapping in stage_mappings,
// never a booking rule, and applies with no change.
func TestApplyOldBookingRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		f := decodeFile(t, oldFile)
		r := mustApply(t, s, box, nil, f)
		if got, want := changesUnder(r.Changes, "send_rules"), []string{
			`send_rules[0]: created "Completed leads" (Lead to Main, automatic_completed)`,
			`send_rules[1]: created "Booked calls" as a stage mapping (stage booked: Schedule to Main, value 150, 1 condition)`,
		}; !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(r.Warnings) != 1 || r.Warnings[0].Path != "send_rules[1].mode" ||
			!strings.Contains(r.Warnings[0].Message, "applied as the stage mapping of the account's booking stage") {
			t.Errorf("warnings = %q; want one at send_rules[1].mode", r.Warnings)
		}
		if r.Summary.RulesAdded != 2 || r.Summary.MappingsAdded != 0 {
			t.Errorf("summary = %+v; want 2 added in send_rules, the section of the file the booking rule is in", r.Summary)
		}
		ms := mappingsOf(t, s, "acme")
		if len(ms) != 1 {
			t.Fatalf("mappings = %v; want the booking rule's", ms)
		}
		m := ms[0]
		if m.Name != "Booked calls" || m.Stage != "booked" || m.EventName != "Schedule" || m.Value == nil || *m.Value != 150 ||
			m.TestEventCode != "TEST1" || m.Repeatable || !m.Enabled || conditionsOf(m).Count() != 1 {
			t.Errorf("mapping = %+v; want the booking rule's settings at booked", m)
		}
		if r := mustApply(t, s, box, nil, f); len(r.Changes) != 0 || len(r.Warnings) != 1 {
			t.Errorf("second Apply changes = %q, warnings %d; want none, and the warning again", r.Changes, len(r.Warnings))
		}

		exp, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(exp)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"mode":"booking"`) {
			t.Errorf("the export writes mode booking:\n%s", b)
		}
		if len(exp.SendRules) != 1 || len(exp.StageMappings) != 1 || exp.StageMappings[0].Name != "Booked calls" || exp.StageMappings[0].Stage != "booked" {
			t.Errorf("export send_rules %+v, stage_mappings %+v; want the booking rule among the mappings", exp.SendRules, exp.StageMappings)
		}
		if r := mustApply(t, s, box, nil, decodeFile(t, string(b))); len(r.Changes) != 0 || len(r.Warnings) != 0 {
			t.Errorf("Apply(export) changes = %q, warnings %q; want none", r.Changes, r.Warnings)
		}
		if got := ruleIDs(mappingsOf(t, s, "acme")); !slices.Equal(got, []int64{m.ID}) {
			t.Errorf("mapping ids = %v; want %d kept", got, m.ID)
		}
	})
}

// The booking stage is the account's, whatever its name; the mapping a
// booking rule became is found by name (as migration 0019 left it) and
// kept when the file also has stage_mappings, before them; a rule of that
// name that is no mapping gives way to it.
func TestApplyBookingRuleToAnAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		f := decodeFile(t, oldFile)
		f.SendRules = f.SendRules[:1]
		mustApply(t, s, box, nil, f)
		acc, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		ss, err := s.Stages(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetBookingStage(ctx, acc.ID, ss[2].ID, true); err != nil { // won
			t.Fatal(err)
		}
		ds, err := s.Datasets(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		// As migration 0019 left a booking rule, and a manual rule named
		// like another booking rule of the file.
		old := models.SendRule{AccountID: acc.ID, DatasetID: ds[0].ID, Name: "Booked calls", Mode: string(rule.Stage), Stage: "won", EventName: "Schedule",
			Combinator: "and", Conditions: `[{"field":"country","match_type":"not_equals","pattern":"FR"}]`, Value: ptr(150.0), TestEventCode: "TEST1", Enabled: true}
		manual := models.SendRule{AccountID: acc.ID, DatasetID: ds[0].ID, Name: "Deals", Mode: string(rule.Manual), EventName: "Contact",
			Combinator: "and", Conditions: "[]", Enabled: true}
		for _, r := range []*models.SendRule{&old, &manual} {
			if err := s.CreateSendRule(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}

		f = decodeFile(t, oldFile)
		f.SendRules = append(f.SendRules, RuleSpec{Name: "deals", Dataset: "Main", Mode: rule.Booking, EventName: "Purchase",
			Value: &ValueSpec{Fixed: 900}, Enabled: true})
		f.StageMappings = []MappingSpec{{Stage: "qualified", Dataset: "Main", EventName: "QualifiedLead", Enabled: true}}
		r := mustApply(t, s, box, nil, f)
		if got, want := changesUnder(r.Changes, ""), []string{
			`send_rules: deleted "Deals" (Contact to Main, manual)`,
			`send_rules[2]: created "deals" as a stage mapping (stage won: Purchase to Main, value 900)`,
			`stage_mappings[0]: created "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`,
		}; !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		var got []string
		for _, m := range mappingsOf(t, s, "acme") {
			got = append(got, m.Name+" at "+m.Stage)
		}
		if want := []string{"Booked calls at won", "deals at won", "qualified to QualifiedLead at qualified"}; !slices.Equal(got, want) {
			t.Errorf("mappings = %q; want %q", got, want)
		}
		if vs, _ := s.SendRuleVersions(ctx, acc.ID, old.ID, 10); len(vs) != 1 {
			t.Errorf("the kept mapping has %d versions; want its first only", len(vs))
		}
		if r := mustApply(t, s, box, nil, f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}

	})
}

// An account without a booking stage refuses a booking rule, at its mode,
// and nothing changes; a new account has the template's.
func TestApplyBookingRuleWithoutBookingStage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		f := decodeFile(t, oldFile)
		f.SendRules = f.SendRules[:1]
		mustApply(t, s, box, nil, f)
		acc, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		ss, err := s.Stages(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetBookingStage(ctx, acc.ID, ss[1].ID, false); err != nil {
			t.Fatal(err)
		}
		before := rulesOf(t, s, "acme")
		_, err = Apply(ctx, s, box, env(nil), decodeFile(t, oldFile), Options{})
		inv, ok := errors.AsType[*Invalid](err)
		if !ok || len(inv.Problems) != 1 || inv.Problems[0].Path != "send_rules[1].mode" ||
			!strings.Contains(inv.Problems[0].Message, "the account has none; mark its booking stage on the Stages page, or move this rule to stage_mappings") {
			t.Fatalf("Apply = %v; want the booking rule refused at send_rules[1].mode", err)
		}
		if after := rulesOf(t, s, "acme"); !slices.Equal(ruleIDs(after), ruleIDs(before)) {
			t.Errorf("rules after a refused apply = %v; want %v", ruleNamesOf(after), ruleNamesOf(before))
		}
	})
}

// A booking rule is checked as the stage mapping it becomes, at its own
// paths; "stage" stays refused among the send rules.
func TestValidateBookingRule(t *testing.T) {
	t.Parallel()
	f := decodeFile(t, oldFile)
	f.SendRules[1].EventName = "Purchase"
	f.SendRules[1].Value = nil
	f.SendRules[1].Conditions[0].Field = "nope"
	f.SendRules = append(f.SendRules, RuleSpec{Name: "Staged", Dataset: "Main", Mode: rule.Stage, EventName: "Lead", Enabled: true})
	got := join2(f.Validate(env(nil)))
	for _, want := range []string{"send_rules[1].conditions[0].field", "send_rules[1].value: ", "send_rules[2].mode: a send rule of mode stage is a stage mapping"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems =\n%s\nwant one with %q", got, want)
		}
	}
	if strings.Contains(got, "send_rules[1].mode") {
		t.Errorf("problems =\n%s\nwant none at the booking rule's mode", got)
	}
}

func ptr[T any](v T) *T { return &v }

// A stage mapping may carry an action source and a test event code, as a
// send rule does, checked as a send rule's are.
func TestValidateMappingActionSource(t *testing.T) {
	t.Parallel()
	f := acmeFile()
	f.StageMappings = []MappingSpec{{Stage: "booked", Dataset: "Main", EventName: "Schedule", ActionSource: "crm", TestEventCode: "TEST 1", Enabled: true},
		{Stage: "won", Dataset: "Main", EventName: "Contact", ActionSource: "system_generated", TestEventCode: "TEST1", Enabled: true}}
	got := join2(f.Validate(env(acmeEnv())))
	for _, want := range []string{`stage_mappings[0].action_source: "crm" is not an action source`, "stage_mappings[0].test_event_code: a test event code has no spaces"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems =\n%s\nwant one with %q", got, want)
		}
	}
	if strings.Contains(got, "stage_mappings[1]") {
		t.Errorf("problems =\n%s\nwant none of stage_mappings[1]", got)
	}
}
