package setup

import (
	"bytes"
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

// rulesFile is acmeFile with four send rules, one of each shape of value
// and currency, on both datasets.
func rulesFile() File {
	f := acmeFile()
	f.SendRules = []RuleSpec{
		{Name: "Completed leads", Dataset: "Main", Mode: rule.AutomaticCompleted, EventName: "Lead", Enabled: true},
		{Name: "Big budgets", Dataset: "main", Mode: rule.AutomaticMatch, EventName: "QualifiedLead", ActionSource: "system_generated",
			Combinator: rule.Or, Conditions: []rule.Condition{
				{Field: "fields.budget", MatchType: rule.GT, Pattern: "5000"},
				{Field: "email_domain", MatchType: rule.InList, Pattern: "acme.com, example.org"},
			},
			Value: &ValueSpec{Field: "fields.budget"}, Currency: &CurrencySpec{Code: "EUR"}, TestEventCode: "TEST1", Enabled: true},
		{Name: "Partial", Dataset: "Demo", Mode: rule.AutomaticPartial, EventName: "PartialLead", Enabled: false},
		{Name: "Booked", Dataset: "Demo", Mode: rule.Manual, EventName: "Schedule",
			Value: &ValueSpec{Fixed: 150}, Currency: &CurrencySpec{Field: "fields.currency"}, Enabled: true},
	}
	return f
}

// rulesOf lists an account's send rules in order.
func rulesOf(t *testing.T, s *store.Store, slug string) []models.SendRule {
	t.Helper()
	a, err := s.AccountBySlug(t.Context(), slug)
	if err != nil {
		t.Fatalf("AccountBySlug(%s): %v", slug, err)
	}
	rs, err := s.SendRules(t.Context(), a.ID)
	if err != nil {
		t.Fatalf("SendRules: %v", err)
	}
	return rs
}

func ruleNamesOf(rs []models.SendRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// versions counts the versions kept of the rules with these ids.
func versions(t *testing.T, s *store.Store, accountID int64, ids []int64) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		vs, err := s.SendRuleVersions(t.Context(), accountID, id, 1000)
		if err != nil {
			t.Fatalf("SendRuleVersions: %v", err)
		}
		n += len(vs)
	}
	return n
}

func ruleIDs(rs []models.SendRule) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestApplyRulesCreatesThenChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r := mustApply(t, s, box, acmeEnv(), rulesFile())
		var ruleChanges []string
		for _, c := range r.Changes {
			if strings.HasPrefix(c.Path, "send_rules") {
				ruleChanges = append(ruleChanges, c.String())
			}
		}
		// The new datasets' default rules are replaced by the file's,
		// silently: they were never the account's.
		want := []string{
			`send_rules[0]: created "Completed leads" (Lead to Main, automatic_completed)`,
			`send_rules[1]: created "Big budgets" (QualifiedLead to Main, automatic_match, 2 conditions)`,
			`send_rules[2]: created "Partial" (PartialLead to Demo, automatic_partial, disabled)`,
			`send_rules[3]: created "Booked" (Schedule to Demo, manual)`,
		}
		if !reflect.DeepEqual(ruleChanges, want) {
			t.Errorf("send rule changes =\n%s\nwant\n%s", strings.Join(ruleChanges, "\n"), strings.Join(want, "\n"))
		}
		if want := (Summary{AccountCreated: true, DatasetsAdded: 2, JunkChanges: 2, RulesAdded: 4}); r.Summary != want {
			t.Errorf("summary = %+v; want %+v", r.Summary, want)
		}
		if hasNote(r.Notes, "default send rule") {
			t.Errorf("notes = %q; a file with send_rules chooses the new datasets' rules, no note needed", r.Notes)
		}

		st := load(t, s, "acme")
		main, demo := datasetNamed(t, st.Datasets, "Main"), datasetNamed(t, st.Datasets, "Demo")
		rs := rulesOf(t, s, "acme")
		if got := ruleNamesOf(rs); !slices.Equal(got, []string{"Completed leads", "Big budgets", "Partial", "Booked"}) {
			t.Fatalf("rules = %q; want the file's, in its order", got)
		}
		big, booked := rs[1], rs[3]
		if big.DatasetID != main.ID || big.Mode != "automatic_match" || big.EventName != "QualifiedLead" || big.ActionSource != "system_generated" ||
			big.Combinator != "or" || big.ValueField != "fields.budget" || big.Value != nil || big.Currency != "EUR" || big.CurrencyField != "" ||
			big.TestEventCode != "TEST1" || !big.Enabled {
			t.Errorf("Big budgets = %+v; want the file's settings", big)
		}
		if m, problems := rule.CompileRule(big, ruleSchema); len(problems) > 0 || len(m.Spec().Conditions) != 2 {
			t.Errorf("Big budgets compiles to %v, %q; want its two conditions", m, problems)
		}
		if booked.DatasetID != demo.ID || booked.Value == nil || *booked.Value != 150 || booked.CurrencyField != "fields.currency" || booked.Currency != "" {
			t.Errorf("Booked = %+v; want value 150 and the currency from fields.currency", booked)
		}
		if rs[2].Enabled {
			t.Errorf("Partial is enabled; the file says false")
		}
		nVersions := versions(t, s, st.Account.ID, ruleIDs(rs))

		// The same file again: nothing changes, no version is kept.
		r = mustApply(t, s, box, acmeEnv(), rulesFile())
		if len(r.Changes) != 0 || r.Summary != (Summary{}) {
			t.Errorf("second Apply changes = %q, summary %+v; want none", r.Changes, r.Summary)
		}
		if again := rulesOf(t, s, "acme"); !reflect.DeepEqual(again, rs) {
			t.Errorf("second Apply changed the rules:\n%+v\nwant\n%+v", again, rs)
		}
		if n := versions(t, s, st.Account.ID, ruleIDs(rs)); n != nVersions {
			t.Errorf("versions after a second apply = %d; want %d, as before", n, nVersions)
		}
	})
}

func TestApplyRulesUpdatesDeletesAndReorders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), rulesFile())
		acc := load(t, s, "acme").Account
		before := rulesOf(t, s, "acme")
		partial := before[2]

		f := rulesFile()
		big := f.SendRules[1]
		big.Name = "BIG budgets" // the same rule, ignoring case
		big.Dataset = "Demo"
		big.EventName = "Lead"
		big.ActionSource = ""
		big.Combinator = rule.And
		big.Conditions = big.Conditions[:1]
		big.Value = &ValueSpec{Fixed: 99.5}
		big.Currency = nil
		big.TestEventCode = ""
		big.Enabled = false
		added := RuleSpec{Name: "Manual contact", Dataset: "Main", Mode: rule.Manual, EventName: "Contact", Enabled: true}
		// New order: the added rule first, Booked before Completed leads,
		// Partial left out.
		f.SendRules = []RuleSpec{added, f.SendRules[3], f.SendRules[0], big}
		r := mustApply(t, s, box, acmeEnv(), f)
		want := []Change{
			{Path: "send_rules", What: `deleted "Partial" (PartialLead to Demo, automatic_partial, disabled)`},
			{Path: "send_rules[0]", What: `created "Manual contact" (Contact to Main, manual)`},
			{Path: "send_rules[3].name", What: "Big budgets → BIG budgets"},
			{Path: "send_rules[3].dataset", What: "Main → Demo"},
			{Path: "send_rules[3].event_name", What: "QualifiedLead → Lead"},
			{Path: "send_rules[3].action_source", What: "system_generated → from the lead's source"},
			{Path: "send_rules[3].combinator", What: "or → and"},
			{Path: "send_rules[3].conditions", What: `Form field budget is greater than 5000 OR Email domain is one of "acme.com", "example.org" → Form field budget is greater than 5000`},
			{Path: "send_rules[3].value", What: "from fields.budget → 99.5"},
			{Path: "send_rules[3].currency", What: "EUR → the account's"},
			{Path: "send_rules[3].test_event_code", What: `TEST1 → ""`},
			{Path: "send_rules[3].enabled", What: "enabled → disabled"},
			{Path: "send_rules", What: `order "Completed leads", "Big budgets", "Booked" → "Booked", "Completed leads", "Big budgets"`},
		}
		if !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply changes =\n%s\nwant\n%s", lines(r.Changes), lines(want))
		}
		if want := (Summary{RulesAdded: 1, RulesChanged: 1, RulesDeleted: 1, RulesReordered: true}); r.Summary != want {
			t.Errorf("summary = %+v; want %+v", r.Summary, want)
		}
		after := rulesOf(t, s, "acme")
		if got := ruleNamesOf(after); !slices.Equal(got, []string{"Manual contact", "Booked", "Completed leads", "BIG budgets"}) {
			t.Fatalf("rules = %q; want the file's order", got)
		}
		if after[3].ID != before[1].ID {
			t.Errorf("BIG budgets has id %d; want Big budgets' %d, updated in place", after[3].ID, before[1].ID)
		}
		demo := datasetNamed(t, load(t, s, "acme").Datasets, "Demo")
		if b := after[3]; b.DatasetID != demo.ID || b.Value == nil || *b.Value != 99.5 || b.ValueField != "" || b.Currency != "" || b.Enabled {
			t.Errorf("BIG budgets = %+v; want the file's new settings", b)
		}

		// Each changed rule has one new version, made by nobody (the
		// command line); the deleted rule's last version says so.
		vs, err := s.SendRuleVersions(ctx, acc.ID, before[1].ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].UserID != nil || !strings.Contains(vs[0].After, `"BIG budgets"`) {
			t.Errorf("versions of BIG budgets = %+v; want its creation and one change by nobody", vs)
		}
		vs, err = s.SendRuleVersions(ctx, acc.ID, partial.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].After != "" {
			t.Errorf("versions of Partial = %+v; want its deletion last", vs)
		}
		for _, unchanged := range []models.SendRule{before[0], before[3]} {
			if n := versions(t, s, acc.ID, []int64{unchanged.ID}); n != 1 {
				t.Errorf("%s has %d versions; moving a rule keeps none", unchanged.Name, n)
			}
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}

		// A person applying in the web UI is kept with the version.
		owner, err := s.CreateUser(ctx, "ada@example.com", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		f.SendRules[0].EventName = "SubmitApplication"
		if _, err := Apply(ctx, s, box, env(acmeEnv()), f, Options{UserID: owner.ID}); err != nil {
			t.Fatal(err)
		}
		vs, err = s.SendRuleVersions(ctx, acc.ID, after[0].ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].UserID == nil || *vs[0].UserID != owner.ID || vs[0].Email != "ada@example.com" {
			t.Errorf("versions of Manual contact = %+v; want the last by ada", vs)
		}

		// An empty list deletes every rule.
		f.SendRules = []RuleSpec{}
		r = mustApply(t, s, box, acmeEnv(), f)
		if r.Summary.RulesDeleted != 4 || len(rulesOf(t, s, "acme")) != 0 {
			t.Errorf("Apply(send_rules: []) summary %+v, rules %q; want all 4 deleted", r.Summary, ruleNamesOf(rulesOf(t, s, "acme")))
		}
	})
}

func lines(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// TestApplyWithoutRulesKeepsThem: a file without send_rules leaves the
// rules as they are, and a new dataset keeps its default rule.
func TestApplyWithoutRulesKeepsThem(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), rulesFile())
		before := rulesOf(t, s, "acme")

		f := rulesFile()
		f.SendRules = nil
		f.Datasets = append(f.Datasets, DatasetSpec{Name: "Third", PixelID: "33333", Mode: models.ModeDryRun})
		r := mustApply(t, s, box, acmeEnv(), f)
		if got := paths(r.Changes); !slices.Equal(got, []string{"datasets[2]"}) {
			t.Errorf("changes = %q; want only the new dataset", r.Changes)
		}
		if !hasNote(r.Notes, `datasets[2]: the new dataset sends every completed lead that is not junk as Lead (its default send rule)`) {
			t.Errorf("notes = %q; want one about the new dataset's default rule", r.Notes)
		}
		after := rulesOf(t, s, "acme")
		if len(after) != len(before)+1 || !reflect.DeepEqual(after[:len(before)], before) || after[len(before)].Name != "Completed leads to Third" {
			t.Errorf("rules = %q; want the old ones unchanged and Third's default rule", ruleNamesOf(after))
		}

		// With send_rules, a new dataset's default rule is the file's to
		// keep: named in the file, it is created as the file says.
		f = rulesFile()
		f.Datasets = append(f.Datasets, DatasetSpec{Name: "Fourth", PixelID: "44444", Mode: models.ModeDryRun})
		f.SendRules = append(f.SendRules, RuleSpec{Name: "completed leads to fourth", Dataset: "Fourth", Mode: rule.AutomaticCompleted, EventName: "Contact", Enabled: true})
		r = mustApply(t, s, box, acmeEnv(), f)
		want := []string{
			`datasets[2]: created "Fourth" (dataset id 44444, dry_run)`,
			`send_rules: deleted "Completed leads to Third" (Lead to Third, automatic_completed)`,
			`send_rules[4]: created "completed leads to fourth" (Contact to Fourth, automatic_completed)`,
		}
		if got := strings.Split(strings.TrimSpace(lines(r.Changes)), "\n"); !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", lines(r.Changes), strings.Join(want, "\n"))
		}
		after = rulesOf(t, s, "acme")
		if got := ruleNamesOf(after); !slices.Equal(got, []string{"Completed leads", "Big budgets", "Partial", "Booked", "completed leads to fourth"}) {
			t.Errorf("rules = %q; want the file's", got)
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}
	})
}

// TestExportApplyRulesToAnotherAccount clones one account's setup into
// another of the same installation, whose own rules it replaces.
func TestExportApplyRulesToAnotherAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), rulesFile())
		// bright exists already, with its own dataset, default rule and an
		// extra rule made in the web UI.
		bright := File{
			Account:  AccountSpec{Slug: "bright", Name: "Bright", Timezone: "UTC", Currency: "USD"},
			Datasets: []DatasetSpec{{Name: "MAIN", PixelID: "777777", Mode: models.ModeDryRun}},
		}
		mustApply(t, s, box, nil, bright)
		ba := load(t, s, "bright")
		if err := s.CreateSendRule(ctx, &models.SendRule{AccountID: ba.Account.ID, DatasetID: ba.Datasets[0].ID, Name: "From the UI",
			Mode: "manual", EventName: "Contact", Combinator: "and", Conditions: "[]", Enabled: true}, nil); err != nil {
			t.Fatal(err)
		}

		exported, _, err := Export(ctx, s, "acme", "")
		if err != nil {
			t.Fatalf("Export: %v", err)
		}
		b, err := json.MarshalIndent(exported, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, shape := range []string{`"value": {`, `"field": "fields.budget"`, `"value": 150,`, `"currency": "EUR"`, `"currency": {`,
			`"field": "fields.currency"`, `"enabled": false`, `"conditions": []`, `"combinator": "or"`, `"dataset": "Main"`} {
			if !bytes.Contains(b, []byte(shape)) {
				t.Errorf("export lacks %s:\n%s", shape, b)
			}
		}
		back, problems := Decode(bytes.NewReader(b))
		if len(problems) > 0 {
			t.Fatalf("Decode(export) problems = %q\n%s", problems, b)
		}
		back.Account.Slug, back.Account.Name = "bright", "Bright"
		back.Datasets[0].PixelID, back.Datasets[1].PixelID = "777777", "888888"
		r := mustApply(t, s, box, acmeEnv(), back)
		if r.Summary.RulesAdded != 4 || r.Summary.RulesDeleted != 2 {
			t.Errorf("Apply(export) to bright: %+v\n%s; want 4 rules added, its 2 deleted", r.Summary, lines(r.Changes))
		}

		// bright now has acme's rules, as acme's export shows them.
		again, _, err := Export(ctx, s, "bright", "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.SendRules, exported.SendRules) {
			t.Errorf("bright's rules =\n%+v\nwant acme's\n%+v", again.SendRules, exported.SendRules)
		}
		if r := mustApply(t, s, box, acmeEnv(), back); len(r.Changes) != 0 {
			t.Errorf("second Apply(export) to bright changes = %q; want none", r.Changes)
		}
		// And acme's own export applied to acme changes nothing.
		back.Account.Slug, back.Account.Name = "acme", "Acme Inc"
		back.Datasets[0].PixelID, back.Datasets[1].PixelID = exported.Datasets[0].PixelID, exported.Datasets[1].PixelID
		if r := mustApply(t, s, box, acmeEnv(), back); len(r.Changes) != 0 {
			t.Errorf("Apply(export) to acme changes = %q; want none", r.Changes)
		}
	})
}

func TestApplyRulesInvalidChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), rulesFile())
		st, rs := load(t, s, "acme"), rulesOf(t, s, "acme")

		f := rulesFile()
		f.Account.Name = "Renamed"           // valid
		f.SendRules = f.SendRules[1:]        // would delete a rule
		f.SendRules[0].Dataset = "Elsewhere" // in neither the file nor the account
		f.SendRules[1].Conditions = []rule.Condition{{Field: "email", MatchType: rule.Regex, Pattern: "(["}}
		_, err := Apply(t.Context(), s, box, env(acmeEnv()), f, Options{})
		var inv *Invalid
		if !errors.As(err, &inv) {
			t.Fatalf("Apply error = %v; want *Invalid", err)
		}
		want := []string{
			`send_rules[0].dataset: no dataset is named "Elsewhere" in the file or the account; there are "Main", "Demo"`,
			"send_rules[1].conditions[0].pattern: this regular expression does not compile",
		}
		if len(inv.Problems) != len(want) {
			t.Fatalf("problems = %q; want %q", inv.Problems, want)
		}
		for i, p := range inv.Problems {
			if !strings.HasPrefix(p.String(), want[i]) {
				t.Errorf("problem %d = %q; want it to start with %q", i, p, want[i])
			}
		}
		if after := load(t, s, "acme"); !reflect.DeepEqual(after, st) {
			t.Errorf("an invalid apply changed the account or datasets")
		}
		if after := rulesOf(t, s, "acme"); !reflect.DeepEqual(after, rs) {
			t.Errorf("an invalid apply changed the rules: %q", ruleNamesOf(after))
		}
	})
}

// TestApplyExpect: an apply bound to a preview's fingerprint applies only
// while it would make exactly the previewed changes.
func TestApplyExpect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), acmeFile())
		f := rulesFile()
		preview, err := Plan(ctx, s, box, env(acmeEnv()), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rulesOf(t, s, "acme")) != 2 {
			t.Fatalf("Plan changed the rules: %q", ruleNamesOf(rulesOf(t, s, "acme")))
		}

		// Someone changes the account between the preview and the apply.
		acc := load(t, s, "acme").Account
		acc.Name = "Acme Renamed"
		if _, err := s.UpdateAccountSettings(ctx, acc); err != nil {
			t.Fatal(err)
		}
		_, err = Apply(ctx, s, box, env(acmeEnv()), f, Options{Expect: preview.Fingerprint()})
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("Apply with a stale preview = %v; want ErrChanged", err)
		}
		if got := ruleNamesOf(rulesOf(t, s, "acme")); len(got) != 2 || load(t, s, "acme").Account.Name != "Acme Renamed" {
			t.Errorf("a refused apply changed the account: rules %q", got)
		}

		preview, err = Plan(ctx, s, box, env(acmeEnv()), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Apply(ctx, s, box, env(acmeEnv()), f, Options{Expect: preview.Fingerprint()})
		if err != nil {
			t.Fatalf("Apply with a fresh preview: %v", err)
		}
		if !reflect.DeepEqual(r, preview) {
			t.Errorf("Apply report =\n%+v\nwant the preview's\n%+v", r, preview)
		}
	})
}

// TestApplyWithoutEnvironment is the web UI's apply: no environment
// variable is read, stored secrets are kept, and a live dataset without a
// stored token is refused.
func TestApplyWithoutEnvironment(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		_, err := Apply(t.Context(), s, box, nil, rulesFile(), Options{})
		var inv *Invalid
		if !errors.As(err, &inv) || len(inv.Problems) != 1 ||
			!strings.HasPrefix(inv.Problems[0].String(), "datasets[0].access_token_env: live mode needs an access token, and an upload in the web UI reads no environment variables") {
			t.Fatalf("Apply(live dataset, no environment) = %v; want the token problem", err)
		}

		mustApply(t, s, box, acmeEnv(), rulesFile())
		st := load(t, s, "acme")
		f := rulesFile()
		f.Datasets[0].AccessTokenEnv = "LEADSIGNAL_SECRET" // never read
		f.Datasets = append(f.Datasets, DatasetSpec{Name: "New", PixelID: "55555", Mode: models.ModeDryRun, AccessTokenEnv: "META_TOKEN_NEW"})
		r, err := Apply(t.Context(), s, box, nil, f, Options{})
		if err != nil {
			t.Fatalf("Apply without environment: %v", err)
		}
		if got := paths(r.Changes); !slices.Equal(got, []string{"datasets[2]"}) {
			t.Errorf("changes = %q; want only the new dataset", r.Changes)
		}
		for _, want := range []string{
			"datasets[0].access_token_env: not read: an upload in the web UI reads no environment variables; the stored token (…0001) is kept",
			"datasets[0].app_secret_env: not read: an upload in the web UI reads no environment variables; the stored app secret is kept",
			"datasets[2].access_token_env: not read: an upload in the web UI reads no environment variables; save the token on the dataset's page",
		} {
			if !hasNote(r.Notes, want) {
				t.Errorf("notes = %q; want %q", r.Notes, want)
			}
		}
		after := load(t, s, "acme")
		if main := datasetNamed(t, after.Datasets, "Main"); main != datasetNamed(t, st.Datasets, "Main") {
			t.Errorf("Main changed: %+v", main)
		}
		if d := datasetNamed(t, after.Datasets, "New"); d.TokenSealed != "" || d.TokenEnv != "" {
			t.Errorf("New = %+v; want no token", d)
		}
	})
}
