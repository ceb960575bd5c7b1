package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/config"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
)

const setupToken = "EAAsetuptokenvalue4242"

const setupJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "Europe/Berlin",
              "default_country": "DE", "currency": "EUR", "crm_name": "HubSpot"},
  "datasets": [
    {"name": "Main", "pixel_id": "123456789012345", "access_token_env": "META_TOKEN_ACME",
     "mode": "live", "ldu": "off"}
  ],
  "junk": {"too_fast": {"enabled": true, "threshold": 3}},
  "send_rules": [
    {"name": "Big budgets", "dataset": "Main", "mode": "automatic_match", "event_name": "QualifiedLead",
     "combinator": "or", "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "5000"},
                                        {"field": "email_is_work", "match_type": "equals", "pattern": "true"}],
     "value": {"field": "fields.budget"}, "currency": "EUR", "enabled": true},
    {"name": "Completed leads", "dataset": "Main", "mode": "automatic_completed", "event_name": "Lead",
     "combinator": "and", "conditions": [], "enabled": false}
  ],
  "stage_mappings": [
    {"stage": "qualified", "dataset": "Main", "event_name": "QualifiedLead", "order": 1,
     "combinator": "and", "conditions": [], "repeatable": false, "enabled": true},
    {"name": "Deals won", "stage": "won", "dataset": "Main", "event_name": "Purchase", "order": 2,
     "combinator": "and", "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "500"}],
     "value": "from_change", "currency": "from_change", "repeatable": true, "enabled": true},
    {"stage": "proposal", "dataset": "Main", "event_name": "SubmitApplication", "order": 3,
     "combinator": "and", "conditions": [], "value": 100, "repeatable": false, "enabled": false}
  ],
  "sequences": [{"dataset": "Main", "initial_event": "QualifiedLead", "final_event": "Purchase"}],
  "crm_connections": [],
  "site_keys": [{"name": "Website", "origins": ["https://acme.example", "https://www.acme.example"]}]
}`

func writeSetup(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSetupApplyAndExport(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		file := writeSetup(t, setupJSON)
		tokenEnv := map[string]string{"META_TOKEN_ACME": setupToken}

		dry := d.runEnv(t, tokenEnv, "", "setup", "apply", "-f", file, "--dry-run")
		if dry.err != nil {
			t.Fatalf("setup apply --dry-run: %v\nstderr: %s", dry.err, dry.stderr)
		}
		if !strings.Contains(dry.stdout, "account: created acme") || !strings.Contains(dry.stdout, "dry run, nothing was changed") {
			t.Errorf("dry run stdout = %q; want the changes it would make", dry.stdout)
		}
		if _, err := d.open(t).AccountBySlug(t.Context(), "acme"); err == nil {
			t.Errorf("setup apply --dry-run created the account")
		}

		if r := d.runEnv(t, tokenEnv, "", "setup", "apply", "-f", file, "--owner", "nobody@example.com"); r.err == nil ||
			!strings.Contains(r.err.Error(), "no user has email nobody@example.com") {
			t.Errorf("setup apply --owner of no user: %v; want it named", r.err)
		}
		d.mustRun(t, testPassword+"\n", "user", "create", "--email", "ada@example.com")
		r := d.runEnv(t, tokenEnv, "", "setup", "apply", "-f", file, "--owner", "ada@example.com")
		if r.err != nil {
			t.Fatalf("setup apply: %v\nstderr: %s", r.err, r.stderr)
		}
		if strings.Contains(r.stdout, "no members") {
			t.Errorf("setup apply --owner says the account has no members:\n%s", r.stdout)
		}
		for _, want := range []string{"account: created acme", `datasets[0]: created "Main"`,
			"datasets[0].access_token_env: token set (from $META_TOKEN_ACME)", "junk.too_fast: default → on, threshold 3",
			`send_rules[0]: created "Big budgets" (QualifiedLead to Main, automatic_match, 2 conditions)`,
			`send_rules[1]: created "Completed leads" (Lead to Main, automatic_completed, disabled)`,
			`stage_mappings[0]: created "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main)`,
			`stage_mappings[1]: created "Deals won" (stage won: Purchase to Main, value from the stage change, 1 condition, repeatable)`,
			`stage_mappings[2].stage: added the stage "proposal" to the account's stages, after "won"`,
			`stage_mappings[2]: created "proposal to SubmitApplication" (stage proposal: SubmitApplication to Main, value 100, disabled)`,
			`sequences[0]: created "QualifiedLead → Purchase" on Main`,
			"12 changes"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("setup apply stdout = %q; want it to contain %q", r.stdout, want)
			}
		}
		if strings.Contains(r.stdout+r.stderr, setupToken) {
			t.Errorf("setup apply printed the token")
		}

		// The token opens with the key serve derives from the same config.
		cfg, err := config.Load(lookup(d.vars))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.EnsureSecret(); err != nil {
			t.Fatal(err)
		}
		box, err := seal.New(cfg.Key("token-aead"))
		if err != nil {
			t.Fatal(err)
		}
		s := d.open(t)
		a, err := s.AccountBySlug(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if ms, err := s.Members(t.Context(), a.ID); err != nil || len(ms) != 1 || ms[0].Email != "ada@example.com" || ms[0].Role != models.RoleOwner {
			t.Errorf("members = %+v, %v; want ada as owner", ms, err)
		}
		ds, err := s.Datasets(t.Context(), a.ID)
		if err != nil || len(ds) != 1 {
			t.Fatalf("datasets = %+v, %v; want Main", ds, err)
		}
		if tok, err := box.Open(ds[0].TokenSealed, dispatch.TokenLabel(ds[0].ID)); err != nil || tok != setupToken {
			t.Errorf("stored token opens to %q, %v; want the env value", tok, err)
		}

		r = d.runEnv(t, tokenEnv, "", "setup", "apply", "-f", file)
		if r.err != nil {
			t.Fatalf("second setup apply: %v", r.err)
		}
		if want := "no changes: the database already matches " + file; !strings.Contains(r.stdout, want) {
			t.Errorf("second setup apply stdout = %q; want %q", r.stdout, want)
		}

		ex := d.run(t, "", "setup", "export", "--account", "acme")
		if ex.err != nil {
			t.Fatalf("setup export: %v\nstderr: %s", ex.err, ex.stderr)
		}
		if strings.Contains(ex.stdout, "pk_") {
			t.Errorf("setup export shows a site key:\n%s", ex.stdout)
		}
		if strings.Contains(ex.stdout, setupToken) || strings.Contains(ex.stdout, "v1:") {
			t.Errorf("setup export shows the token:\n%s", ex.stdout)
		}
		var got, want map[string]any
		if err := json.Unmarshal([]byte(ex.stdout), &got); err != nil {
			t.Fatalf("setup export printed invalid JSON: %v\n%s", err, ex.stdout)
		}
		if err := json.Unmarshal([]byte(setupJSON), &want); err != nil {
			t.Fatal(err)
		}
		// The file has no stages section; the export lists the stages the
		// template and the mappings left.
		if st, _ := json.Marshal(got["stages"]); !strings.Contains(string(st), `{"aliases":[],"booking":false,"name":"proposal"}`) {
			t.Errorf("setup export's stages = %s; want proposal among them", st)
		}
		delete(got, "stages")
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("setup export = %s; want the applied file %s", gb, wb)
		}
		if !strings.Contains(ex.stdout, "\n  \"account\"") {
			t.Errorf("setup export is not indented:\n%s", ex.stdout)
		}
	})
}

func TestSetupApplyProblems(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	file := writeSetup(t, `{
  "account": {"slug": "Acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789", "mode": "live", "access_token_env": "META_TOKEN_ACME"}]
}`)
	args := []string{"setup", "apply", "-f", file}
	r := d.run(t, "", args...)
	wantErr(t, r, args, "setup file has 2 problems")
	for _, want := range []string{"account.slug: use 2 to 40 lowercase", "datasets[0].access_token_env: environment variable META_TOKEN_ACME is not set"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr = %q; want a line starting %q", r.stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(d.vars["LEADSIGNAL_DATA"], "leadsignal.db")); err == nil {
		t.Errorf("an invalid setup file opened the database")
	}

	unknown := writeSetup(t, `{"account": {"slug": "acme"}, "sequences": {"dataset": "Main"}}`)
	args = []string{"setup", "apply", "-f", unknown}
	r = d.run(t, "", args...)
	wantErr(t, r, args, "setup file has 1 problem")
	if !strings.Contains(r.stderr, "sequences: must be a list of sequences, not an object") {
		t.Errorf("stderr = %q; want the sequences problem", r.stderr)
	}

	for _, args := range [][]string{
		{"setup", "apply"},
		{"setup", "apply", "-f", filepath.Join(t.TempDir(), "missing.json")},
		{"setup", "export"},
		{"setup", "export", "--account", "nobody"},
		{"setup", "import"},
	} {
		if r := d.run(t, "", args...); r.err == nil {
			t.Errorf("leadsignal %s = nil error; want one", strings.Join(args, " "))
		}
	}
}

// TestSetupApplyRuleProblems: a send rule's problems come with their JSON
// paths, the matcher's under the rule's, and a rule's dataset that neither
// the file nor the account has is found once the database is open.
func TestSetupApplyRuleProblems(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		file := writeSetup(t, `{
  "account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789", "mode": "dry_run"}],
  "send_rules": [
    {"name": "Partial", "dataset": "Main", "mode": "automatic_partial", "event_name": "Lead"},
    {"name": "partial", "dataset": "Main", "mode": "automatic_match", "event_name": "Lead",
     "conditions": [{"field": "email", "match_type": "gt", "pattern": "5"}], "currency": "euro", "value": "100"}
  ]
}`)
		args := []string{"setup", "apply", "-f", file}
		r := d.run(t, "", args...)
		wantErr(t, r, args, "setup file has 1 problem")
		if want := `send_rules[1].value: must be a number like 250, or {"field": "fields.budget"} to read it from each lead, not a string`; !strings.Contains(r.stderr, want) {
			t.Errorf("stderr = %q; want %q", r.stderr, want)
		}

		file = writeSetup(t, strings.Replace(readFile(t, file), `"value": "100"`, `"value": 100`, 1))
		args = []string{"setup", "apply", "-f", file}
		r = d.run(t, "", args...)
		wantErr(t, r, args, "setup file has 4 problems")
		for _, want := range []string{
			"send_rules[0].event_name: partial leads need a custom event name, like PartialLead",
			`send_rules[1].name: "partial" is also the name of send_rules[0]`,
			"send_rules[1].conditions[0].match_type: email is text: gt compares numbers",
			`send_rules[1].currency: "euro" is not an ISO 4217 code`,
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr = %q; want a line starting %q", r.stderr, want)
			}
		}

		file = writeSetup(t, `{
  "account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"},
  "send_rules": [{"name": "Leads", "dataset": "Elsewhere", "event_name": "Lead"}]
}`)
		args = []string{"setup", "apply", "-f", file}
		r = d.run(t, "", args...)
		wantErr(t, r, args, "setup file has 1 problem")
		if want := `send_rules[0].dataset: no dataset is named "Elsewhere": the account has no dataset yet; add it to datasets`; !strings.Contains(r.stderr, want) {
			t.Errorf("stderr = %q; want %q", r.stderr, want)
		}
		if _, err := d.open(t).AccountBySlug(t.Context(), "acme"); err == nil {
			t.Errorf("an invalid setup file created the account")
		}

		// Stage mappings' problems come with their paths too; a stage
		// mapping is no send rule.
		file = writeSetup(t, `{
  "account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789", "mode": "dry_run"}],
  "send_rules": [{"name": "Won", "dataset": "Main", "mode": "stage", "event_name": "Purchase", "value": 1}],
  "stage_mappings": [
    {"stage": "won", "dataset": "Main", "event_name": "Purchase"},
    {"stage": "not_junk", "dataset": "Main", "event_name": "QualifiedLead", "currency": "from_change"}
  ]
}`)
		args = []string{"setup", "apply", "-f", file}
		r = d.run(t, "", args...)
		wantErr(t, r, args, "setup file has 3 problems")
		for _, want := range []string{
			"send_rules[0].mode: a send rule of mode stage is a stage mapping: move it to stage_mappings",
			"stage_mappings[0].value: a Purchase needs a value",
			"stage_mappings[1].stage: not_junk is a person's verdict",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr = %q; want a line starting %q", r.stderr, want)
			}
		}
	})
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
