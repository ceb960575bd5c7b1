package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

const (
	hubspotSecret = "hs-client-secret-1111"
	hubspotToken  = "pat-na1-hubspot-2222"
	zapSecret     = "zap-signing-secret-3333"
)

// crmFile is acmeFile with a HubSpot connection that maps two stage ids
// and a generic one with a field mapping.
func crmFile() File {
	f := acmeFile()
	f.CRMConnections = []CRMSpec{
		{Kind: crm.HubSpot, Name: "Sales", SecretEnv: "HUBSPOT_SECRET_SALES", APITokenEnv: "HUBSPOT_API_TOKEN_SALES",
			LeadIDProperty: "meta_lead_id", StageIDs: map[string]string{"appointmentscheduled": "booked", "closedwon": "Won"}},
		{Kind: crm.Generic, Name: "Zapier", SecretEnv: "GENERIC_SECRET_ZAPIER",
			Fields: map[string]string{"email": "contact.email", "stage": "deal.stage"}},
	}
	return f
}

func crmEnv() map[string]string {
	vars := acmeEnv()
	vars["HUBSPOT_SECRET_SALES"] = hubspotSecret
	vars["HUBSPOT_API_TOKEN_SALES"] = hubspotToken
	vars["GENERIC_SECRET_ZAPIER"] = zapSecret
	return vars
}

// crmOf lists an account's connections by kind and name.
func crmOf(t *testing.T, s *store.Store, slug string) []models.CRMConnection {
	t.Helper()
	a, err := s.AccountBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.CRMConnections(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func connectionNamed(t *testing.T, cs []models.CRMConnection, name string) models.CRMConnection {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no CRM connection named %q in %+v", name, cs)
	return models.CRMConnection{}
}

// stageTable is a connection's stage table as CRM stage id → stage.
func stageTable(t *testing.T, s *store.Store, c models.CRMConnection) map[string]string {
	t.Helper()
	rows, err := s.CRMStages(t.Context(), c.AccountID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.CRMStageID] = r.Stage
	}
	return out
}

// noSecrets fails the test when text shows one of the CRM secrets.
func noSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, v := range []string{hubspotSecret, hubspotToken, zapSecret} {
		if strings.Contains(text, v) {
			t.Errorf("%s shows a secret (%q):\n%s", what, v, text)
		}
	}
}

func reportText(r Report) string {
	var b strings.Builder
	for _, c := range r.Changes {
		b.WriteString(c.String() + "\n")
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n.String() + "\n")
	}
	return b.String()
}

func TestDecodeCRM(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(`{"account": {"slug": "acme"}, "crm_connections": [
		{"kind": "hubspot", "name": "Sales", "secret_env": "S", "api_token_env": "T", "lead_id_property": "meta_lead_id",
		 "stage_ids": {"closedwon": "won"}, "url": "https://leads.example.com/hooks/hubspot/abc"},
		{"kind": "generic", "name": "Zap", "secret_env": "Z", "fields": {"email": "contact.email"}, "stage_ids": {}}]}`))
	if len(problems) > 0 {
		t.Fatalf("Decode problems = %q", problems)
	}
	want := []CRMSpec{
		{Kind: crm.HubSpot, Name: "Sales", SecretEnv: "S", APITokenEnv: "T", LeadIDProperty: "meta_lead_id",
			StageIDs: map[string]string{"closedwon": "won"}, URL: "https://leads.example.com/hooks/hubspot/abc"},
		{Kind: crm.Generic, Name: "Zap", SecretEnv: "Z", Fields: map[string]string{"email": "contact.email"}, StageIDs: map[string]string{}},
	}
	if !reflect.DeepEqual(f.CRMConnections, want) {
		t.Errorf("Decode crm_connections = %#v; want %#v", f.CRMConnections, want)
	}
	if f, _ := Decode(strings.NewReader(`{"account": {"slug": "acme"}}`)); f.CRMConnections != nil {
		t.Errorf("absent crm_connections decode as %+v; want nil (left as they are)", f.CRMConnections)
	}
	if f, _ := Decode(strings.NewReader(`{"account": {"slug": "acme"}, "crm_connections": []}`)); f.CRMConnections == nil || len(f.CRMConnections) != 0 {
		t.Errorf("an empty list decodes as %#v; want an empty list (delete them all)", f.CRMConnections)
	}
	if f, _ := Decode(strings.NewReader(`{"account": {"slug": "acme"}, "crm_connections": [{"kind": "hubspot", "name": "A"}]}`)); f.CRMConnections[0].StageIDs != nil {
		t.Errorf("absent stage_ids decode as %#v; want nil (the table is kept)", f.CRMConnections[0].StageIDs)
	}

	tests := []struct {
		name, json string
		want       []string
	}{
		{"not a list", `{"crm_connections": {}}`, []string{"crm_connections: must be a list of CRM connections, not an object"}},
		{"unknown key", `{"crm_connections": [{"kind": "generic", "token": "x"}]}`, []string{"crm_connections[0].token: unknown field"}},
		{"stage_ids not an object", `{"crm_connections": [{"stage_ids": ["won"]}]}`, []string{"crm_connections[0].stage_ids: must be an object of CRM stage ids"}},
		{"stage not a string", `{"crm_connections": [{"stage_ids": {"12": 3}}]}`, []string{"crm_connections[0].stage_ids.12: must be a string, not a number"}},
		{"id twice", `{"crm_connections": [{"stage_ids": {"12": "won", "12": "lost"}}]}`, []string{"crm_connections[0].stage_ids.12: given twice"}},
		{"fields NUL", `{"crm_connections": [{"fields": {"email": "a\u0000b"}}]}`, []string{"crm_connections[0].fields.email: contains a NUL character"}},
		{"too many", `{"crm_connections": [` + strings.Repeat(`{},`, store.MaxCRMConnections) + `{}]}`, []string{"crm_connections: use at most 20 CRM connections, not 21"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Decode(strings.NewReader(tt.json))
			if len(problems) != len(tt.want) {
				t.Fatalf("Decode(%s) = %q; want %d problems", tt.json, problems, len(tt.want))
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("Decode problem %d = %q; want it to start with %q", i, p, tt.want[i])
				}
			}
		})
	}
}

// Every problem of the connections is listed with its JSON path, without
// a database (the command line checks the file before it opens one).
func TestValidateCRM(t *testing.T) {
	t.Parallel()
	const spaced = " z" // a CRM stage id with a space before it
	f := acmeFile()
	f.CRMConnections = []CRMSpec{
		{Kind: "salesforce", Name: "SF", SecretEnv: "S"},
		{Kind: crm.HubSpot, Name: "", SecretEnv: "HUBSPOT-SECRET", APITokenEnv: "UNSET_TOKEN"},
		{Kind: crm.HubSpot, Name: "Sales", SecretEnv: "S", LeadIDProperty: strings.Repeat("p", 101),
			Fields: map[string]string{"email": "contact.email"}},
		{Kind: crm.HubSpot, Name: "sales", SecretEnv: "S", StageIDs: map[string]string{"": "won", "x": "junk", "y": "", spaced: "won"}},
		{Kind: crm.Generic, Name: "Zap", SecretEnv: "S", APITokenEnv: "T", Fields: map[string]string{"colour": "deal.colour"}},
		{Kind: crm.Pipedrive, Name: "Sales", SecretEnv: "S", StageIDs: map[string]string{strings.Repeat("1", 201): "won"}},
		{Kind: crm.Generic, Name: "Short", SecretEnv: "SHORT"},
	}
	vars := acmeEnv()
	vars["S"], vars["T"], vars["SHORT"] = "secret-of-16-chr", "token", " short-secret "
	var got []string
	for _, p := range f.Validate(env(vars)) {
		got = append(got, p.String())
	}
	want := []string{
		`crm_connections[0].kind: "salesforce" is not a kind of CRM connection; use hubspot, pipedrive or generic`,
		"crm_connections[1].name: required",
		"crm_connections[1].secret_env: must be the name of an environment variable",
		"crm_connections[1].api_token_env: environment variable UNSET_TOKEN is not set",
		"crm_connections[2].lead_id_property: write the property's internal name or key, like meta_lead_id: at most 100 letters",
		"crm_connections[2].fields: only a generic connection maps fields: HubSpot deliveries have their own shape; remove fields",
		`crm_connections[3].name: "sales" is also the name of crm_connections[2] of kind hubspot`,
		"crm_connections[3].stage_ids: a CRM stage id must not be empty",
		"crm_connections[3].stage_ids. z: remove the spaces around the CRM stage id",
		"crm_connections[3].stage_ids.x: junk is a person's verdict",
		"crm_connections[3].stage_ids.y: required: the account's stage this CRM stage means",
		"crm_connections[4].api_token_env: a generic connection calls no CRM API",
		`crm_connections[4].fields: "colour" is not a field leadsignal reads`,
		"crm_connections[5].stage_ids: a CRM stage id has at most 200 characters",
		"crm_connections[6].secret_env: environment variable SHORT: a secret has at least 16 characters (this one has 12)",
	}
	if len(got) != len(want) {
		t.Fatalf("Validate = %d problems:\n%s\nwant %d starting with:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q; want it to start with %q", i, got[i], want[i])
		}
	}
}

func TestApplyCRMCreatesThenChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		// The web UI applies what its preview showed: a new connection's
		// token, made anew by each run, is in neither's report.
		plan, err := Plan(t.Context(), s, box, env(crmEnv()), crmFile(), Options{})
		if err != nil {
			t.Fatalf("Plan: %v", err)
		}
		r, err := Apply(t.Context(), s, box, env(crmEnv()), crmFile(), Options{Expect: plan.Fingerprint()})
		if err != nil {
			t.Fatalf("Apply(Expect: the plan's fingerprint): %v", err)
		}
		got := changesUnder(r.Changes, "crm_connections")
		want := []string{
			`crm_connections[0]: created "Sales" (HubSpot)`,
			"crm_connections[0].secret_env: secret set (from $HUBSPOT_SECRET_SALES)",
			"crm_connections[0].api_token_env: API token set (from $HUBSPOT_API_TOKEN_SALES)",
			"crm_connections[0].stage_ids.appointmentscheduled: unmapped → booked",
			"crm_connections[0].stage_ids.closedwon: unmapped → won",
			`crm_connections[1]: created "Zapier" (Generic webhook)`,
			"crm_connections[1].secret_env: secret set (from $GENERIC_SECRET_ZAPIER)",
		}
		if !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if r.Summary.CRMAdded != 2 {
			t.Errorf("Summary.CRMAdded = %d; want 2", r.Summary.CRMAdded)
		}
		noSecrets(t, "the report", reportText(r))

		cs := crmOf(t, s, "acme")
		sales, zap := connectionNamed(t, cs, "Sales"), connectionNamed(t, cs, "Zapier")
		if got, err := box.Open(sales.SecretSealed, crm.SecretLabel(sales.Token)); err != nil || got != hubspotSecret {
			t.Errorf("Sales secret opens to %q, %v; want the env value", got, err)
		}
		if got, err := box.Open(sales.APITokenSealed, crm.APITokenLabel(sales.Token)); err != nil || got != hubspotToken {
			t.Errorf("Sales API token opens to %q, %v; want the env value", got, err)
		}
		if _, err := box.Open(sales.SecretSealed, crm.SecretLabel(zap.Token)); err == nil {
			t.Error("Sales secret opens with another connection's label")
		}
		if got, err := box.Open(zap.SecretSealed, crm.SecretLabel(zap.Token)); err != nil || got != zapSecret {
			t.Errorf("Zapier secret opens to %q, %v; want the env value", got, err)
		}
		if sales.SecretEnv != "HUBSPOT_SECRET_SALES" || sales.APITokenEnv != "HUBSPOT_API_TOKEN_SALES" || sales.LeadIDProperty != "meta_lead_id" {
			t.Errorf("Sales = %+v; want the file's variables and lead id property", sales)
		}
		if len(sales.Token) < 50 || sales.Token == zap.Token {
			t.Errorf("tokens %q, %q; want two long distinct tokens", sales.Token, zap.Token)
		}
		if got := stageTable(t, s, sales); !maps.Equal(got, map[string]string{"appointmentscheduled": "booked", "closedwon": "won"}) {
			t.Errorf("Sales stage table = %v; want the file's ids, won as the account spells it", got)
		}
		if fields, _ := crm.StoredFields(zap.Fields); !maps.Equal(fields, map[string]string{"email": "contact.email", "stage": "deal.stage"}) {
			t.Errorf("Zapier fields = %s; want the file's", zap.Fields)
		}

		r = mustApply(t, s, box, crmEnv(), crmFile())
		if len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}
		if after := crmOf(t, s, "acme"); !reflect.DeepEqual(after, cs) {
			t.Errorf("second Apply rewrote the connections:\n%+v\nwant\n%+v", after, cs)
		}
	})
}

func TestApplyCRMUpdatesRenamesAndDeletes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, crmEnv(), crmFile())
		before := crmOf(t, s, "acme")
		sales := connectionNamed(t, before, "Sales")

		// Edited by kind and name, whatever the name's case: the token (its
		// URL) stays; a renamed generic connection is a new one, and the
		// old is deleted.
		f := crmFile()
		f.CRMConnections[0].Name = "SALES"
		f.CRMConnections[0].LeadIDProperty = ""
		f.CRMConnections[0].StageIDs = map[string]string{"closedwon": "qualified", "closedlost": "booked"}
		f.CRMConnections[1].Name = "Zapier EU"
		f.CRMConnections[1].Fields = nil
		vars := crmEnv()
		vars["HUBSPOT_API_TOKEN_SALES"] = "pat-na1-new-4444"
		r := mustApply(t, s, box, vars, f)
		got := changesUnder(r.Changes, "crm_connections")
		want := []string{
			`crm_connections: deleted "Zapier" (Generic webhook): its hook URL answers 404 from now on`,
			"crm_connections[0].name: Sales → SALES",
			`crm_connections[0].lead_id_property: meta_lead_id → ""`,
			"crm_connections[0].api_token_env: API token replaced (from $HUBSPOT_API_TOKEN_SALES)",
			"crm_connections[0].stage_ids.appointmentscheduled: booked → unmapped",
			"crm_connections[0].stage_ids.closedlost: unmapped → booked",
			"crm_connections[0].stage_ids.closedwon: won → qualified",
			`crm_connections[1]: created "Zapier EU" (Generic webhook)`,
			"crm_connections[1].secret_env: secret set (from $GENERIC_SECRET_ZAPIER)",
		}
		if !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !hasNote(r.Notes, `crm_connections[1]: a new connection with a new hook URL: a connection is known by its kind and name, so this is not "Zapier" (Generic webhook) renamed`) {
			t.Errorf("notes = %q; want the rename explained", r.Notes)
		}
		if s := r.Summary; s.CRMAdded != 1 || s.CRMChanged != 1 || s.CRMDeleted != 1 {
			t.Errorf("Summary = %+v; want 1 CRM connection added, changed and deleted", s)
		}
		noSecrets(t, "the report", reportText(r))
		after := crmOf(t, s, "acme")
		if len(after) != 2 {
			t.Fatalf("connections = %+v; want SALES and Zapier EU", after)
		}
		edited := connectionNamed(t, after, "SALES")
		if edited.ID != sales.ID || edited.Token != sales.Token {
			t.Errorf("SALES = %+v; want the same connection and token as before (%d, %s)", edited, sales.ID, sales.Token)
		}
		if got, err := box.Open(edited.APITokenSealed, crm.APITokenLabel(edited.Token)); err != nil || got != "pat-na1-new-4444" {
			t.Errorf("new API token opens to %q, %v", got, err)
		}
		if got := stageTable(t, s, edited); !maps.Equal(got, map[string]string{"appointmentscheduled": "", "closedwon": "qualified", "closedlost": "booked"}) {
			t.Errorf("stage table = %v; want the file's mapping, the left-out id unmapped", got)
		}
		if eu := connectionNamed(t, after, "Zapier EU"); eu.Fields != "{}" {
			t.Errorf("Zapier EU fields = %s; want none (the file gives none)", eu.Fields)
		}
		if _, err := s.CRMConnectionByToken(t.Context(), "generic", connectionNamed(t, before, "Zapier").Token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("old Zapier token = %v; want ErrNotFound (its hook answers 404)", err)
		}

		// Absent stage_ids keeps the table; a file without the section keeps
		// the connections; an empty list deletes them all.
		f.CRMConnections[0].StageIDs = nil
		if r := mustApply(t, s, box, vars, f); len(r.Changes) != 0 {
			t.Errorf("Apply without stage_ids changes = %q; want none", r.Changes)
		}
		f.CRMConnections = nil
		if r := mustApply(t, s, box, vars, f); len(r.Changes) != 0 || len(crmOf(t, s, "acme")) != 2 {
			t.Errorf("Apply without crm_connections changes = %q; want none, the connections kept", r.Changes)
		}
		f.CRMConnections = []CRMSpec{}
		r = mustApply(t, s, box, vars, f)
		if got := changesUnder(r.Changes, "crm_connections"); len(got) != 2 || len(crmOf(t, s, "acme")) != 0 {
			t.Errorf("Apply with [] changes = %q; want both connections deleted", got)
		}
	})
}

// The checks that need the account: a stage the account lacks (one the
// file's stage mappings add is fine), a secret variable unset, the API
// token of a new HubSpot connection. Nothing changes.
func TestApplyCRMInvalidChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, crmEnv(), crmFile())
		before := crmOf(t, s, "acme")

		f := crmFile()
		f.Account.Name = "Renamed"
		f.CRMConnections[0].StageIDs = map[string]string{"closedwon": "won", "closedlost": "lost", "resold": "Resold"}
		f.CRMConnections[1].SecretEnv = "ZAP_SECRET_UNSET"
		f.CRMConnections = append(f.CRMConnections, CRMSpec{Kind: crm.Pipedrive, Name: "Deals", SecretEnv: "HUBSPOT_SECRET_SALES"})
		f.StageMappings = []MappingSpec{{Stage: "resold", Dataset: "Main", EventName: "QualifiedLead"}}
		_, err := Apply(t.Context(), s, box, env(crmEnv()), f, Options{})
		var inv *Invalid
		if !errors.As(err, &inv) {
			t.Fatalf("Apply = %v; want *Invalid", err)
		}
		var got []string
		for _, p := range inv.Problems {
			got = append(got, p.String())
		}
		want := []string{
			`crm_connections[0].stage_ids.closedlost: "lost" is not a stage of the account; its stages are "qualified", "booked", "won", "resold"`,
			"crm_connections[1].secret_env: environment variable ZAP_SECRET_UNSET is not set",
			"crm_connections[2].api_token_env: required for a new Pipedrive connection: the name of the environment variable that holds the Pipedrive API token",
		}
		if len(got) != len(want) {
			t.Fatalf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range got {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("problem %d = %q; want it to start with %q", i, got[i], want[i])
			}
		}
		if after := crmOf(t, s, "acme"); !reflect.DeepEqual(after, before) {
			t.Errorf("Apply(invalid) changed the connections")
		}
		if a := load(t, s, "acme").Account; a.Name != "Acme Inc" {
			t.Errorf("Apply(invalid) renamed the account to %q", a.Name)
		}

		// Without the problems, the stage the file's mapping adds maps, as
		// the account spells it.
		f.CRMConnections = crmFile().CRMConnections
		f.CRMConnections[0].StageIDs = map[string]string{"closedwon": "won", "resold": "Resold"}
		r := mustApply(t, s, box, crmEnv(), f)
		if got := changesUnder(r.Changes, "crm_connections"); !slices.Equal(got, []string{
			"crm_connections[0].stage_ids.appointmentscheduled: booked → unmapped",
			"crm_connections[0].stage_ids.resold: unmapped → resold",
		}) {
			t.Errorf("changes = %q; want the added stage mapped", got)
		}

		// A new connection needs its secret's variable.
		f = crmFile()
		f.CRMConnections = append(f.CRMConnections, CRMSpec{Kind: crm.Generic, Name: "Make"})
		_, err = Apply(t.Context(), s, box, env(crmEnv()), f, Options{})
		if !errors.As(err, &inv) || len(inv.Problems) != 1 ||
			!strings.HasPrefix(inv.Problems[0].String(), "crm_connections[2].secret_env: required for a new connection: the name of the environment variable that holds the secret the sender signs with (or sends as a bearer token), like GENERIC_SECRET_MAKE") {
			t.Errorf("Apply(new connection, no secret_env) = %v; want the secret_env problem", err)
		}
		// A stored one keeps its secrets when the file names none.
		f = crmFile()
		f.CRMConnections[0].SecretEnv, f.CRMConnections[0].APITokenEnv = "", ""
		f.CRMConnections[0].StageIDs = nil
		r = mustApply(t, s, box, crmEnv(), f)
		if len(changesUnder(r.Changes, "crm_connections")) != 0 || !hasNote(r.Notes, "crm_connections[0].secret_env: not given; the stored secret is kept") ||
			!hasNote(r.Notes, "crm_connections[0].api_token_env: not given; the stored API token is kept") {
			t.Errorf("Apply without secret variables = %q, notes %q; want no change and two notes", r.Changes, r.Notes)
		}
	})
}

// An upload in the web UI reads no environment variable: a new connection
// records its secret's variable, with no secret (its hook answers 503
// naming it), and a stored secret is kept; notes say so.
func TestApplyCRMWithoutEnvironment(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, crmEnv(), acmeFile())
		f := crmFile()
		f.Datasets[0].AccessTokenEnv = ""
		r, err := Apply(t.Context(), s, box, nil, f, Options{})
		if err != nil {
			t.Fatalf("Apply without environment: %v", err)
		}
		for _, want := range []string{
			"crm_connections[0].secret_env: not read: an upload in the web UI reads no environment variables; save the secret on the connection's page, or apply the file with leadsignal setup apply; until then its hook answers 503 naming HUBSPOT_SECRET_SALES",
			"crm_connections[0].api_token_env: not read: an upload in the web UI reads no environment variables; save the API token on the connection's page",
		} {
			if !hasNote(r.Notes, want) {
				t.Errorf("notes = %q; want %q", r.Notes, want)
			}
		}
		sales := connectionNamed(t, crmOf(t, s, "acme"), "Sales")
		if sales.SecretSealed != "" || sales.APITokenSealed != "" || sales.SecretEnv != "HUBSPOT_SECRET_SALES" || sales.APITokenEnv != "HUBSPOT_API_TOKEN_SALES" {
			t.Errorf("Sales = %+v; want the variables' names and no secrets", sales)
		}
		if r, err := Apply(t.Context(), s, box, nil, f, Options{}); err != nil || len(r.Changes) != 0 {
			t.Errorf("second upload = %q, %v; want no changes", r.Changes, err)
		}

		// The command line then seals them; a later upload keeps them.
		r = mustApply(t, s, box, crmEnv(), crmFile())
		if got := changesUnder(r.Changes, "crm_connections[0]."); !slices.Contains(got, "crm_connections[0].secret_env: secret set (from $HUBSPOT_SECRET_SALES)") {
			t.Errorf("apply after the upload = %q; want the secret set", got)
		}
		f.CRMConnections[0].SecretEnv = "OTHER_NAME"
		r, err = Apply(t.Context(), s, box, nil, f, Options{})
		if err != nil || len(r.Changes) != 0 || !hasNote(r.Notes, "crm_connections[0].secret_env: not read: an upload in the web UI reads no environment variables; the stored secret is kept") {
			t.Errorf("upload over a stored secret = %q, %q, %v; want no change and a note", r.Changes, r.Notes, err)
		}
		if got := connectionNamed(t, crmOf(t, s, "acme"), "Sales"); got.SecretEnv != "HUBSPOT_SECRET_SALES" {
			t.Errorf("SecretEnv = %q; want the stored secret's variable", got.SecretEnv)
		}
	})
}

// Export lists the connections with their hook URLs, mapped stage ids and
// fields, never a secret; a secret saved in the web UI gets a suggested
// variable. Applying the export to the same account changes nothing.
func TestExportCRMRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, crmEnv(), crmFile())
		a := load(t, s, "acme").Account
		// A connection made in the web UI: secrets sealed, no variables,
		// and a stage listed by the CRM but not mapped.
		ui := models.CRMConnection{AccountID: a.ID, Kind: "pipedrive", Name: "Deals", Token: store.NewCRMToken()}
		ui.SecretSealed = box.Seal("pd-password-5555", crm.SecretLabel(ui.Token))
		ui.APITokenSealed = box.Seal("pd-api-6666", crm.APITokenLabel(ui.Token))
		if err := s.CreateCRMConnection(ctx, &ui); err != nil {
			t.Fatal(err)
		}
		if err := s.ListCRMStages(ctx, a.ID, ui.ID, []models.CRMStage{{CRMStageID: "7", Label: "Won"}, {CRMStageID: "8", Label: "Lost"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.MapCRMStages(ctx, a.ID, ui.ID, map[string]string{"7": "won"}, time.Now()); err != nil {
			t.Fatal(err)
		}

		f, notes, err := Export(ctx, s, "acme", "https://leads.example.com")
		if err != nil {
			t.Fatalf("Export: %v", err)
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		noSecrets(t, "the export", string(b))
		for _, v := range []string{"pd-password-5555", "pd-api-6666", "v1:"} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("export contains a secret (%q):\n%s", v, b)
			}
		}
		cs := crmOf(t, s, "acme")
		sales := connectionNamed(t, cs, "Sales")
		want := []CRMSpec{
			{Kind: crm.Generic, Name: "Zapier", SecretEnv: "GENERIC_SECRET_ZAPIER", StageIDs: map[string]string{},
				Fields: map[string]string{"email": "contact.email", "stage": "deal.stage"},
				URL:    "https://leads.example.com/hooks/generic/" + connectionNamed(t, cs, "Zapier").Token},
			{Kind: crm.HubSpot, Name: "Sales", SecretEnv: "HUBSPOT_SECRET_SALES", APITokenEnv: "HUBSPOT_API_TOKEN_SALES", LeadIDProperty: "meta_lead_id",
				StageIDs: map[string]string{"appointmentscheduled": "booked", "closedwon": "won"},
				URL:      "https://leads.example.com/hooks/hubspot/" + sales.Token},
			{Kind: crm.Pipedrive, Name: "Deals", SecretEnv: "PIPEDRIVE_SECRET_DEALS", APITokenEnv: "PIPEDRIVE_API_TOKEN_DEALS",
				// won: Pipedrive's won status, mapped to the won stage by default.
				StageIDs: map[string]string{"7": "won", "won": "won"}, URL: "https://leads.example.com/hooks/pipedrive/" + ui.Token},
		}
		if !reflect.DeepEqual(f.CRMConnections, want) {
			t.Errorf("exported crm_connections =\n%+v\nwant\n%+v", f.CRMConnections, want)
		}
		for _, want := range []string{
			"crm_connections[2].secret_env: the secret was saved in the web UI; PIPEDRIVE_SECRET_DEALS is a suggested name",
			"crm_connections[2].api_token_env: the API token was saved in the web UI; PIPEDRIVE_API_TOKEN_DEALS is a suggested name",
		} {
			if !hasNote(notes, want) {
				t.Errorf("Export notes = %q; want %q", notes, want)
			}
		}
		if f, _, err := Export(ctx, s, "acme", ""); err != nil || f.CRMConnections[1].URL != "/hooks/hubspot/"+sales.Token {
			t.Errorf("Export without a public URL: %v; url = %q, want the path", err, f.CRMConnections[1].URL)
		}

		back, problems := Decode(bytes.NewReader(b))
		if len(problems) > 0 {
			t.Fatalf("Decode(export) problems = %q\n%s", problems, b)
		}
		vars := crmEnv()
		vars["PIPEDRIVE_SECRET_DEALS"], vars["PIPEDRIVE_API_TOKEN_DEALS"] = "pd-password-5555", "pd-api-6666"
		r := mustApply(t, s, box, vars, back)
		if got := changesUnder(r.Changes, ""); !slices.Equal(got, []string{
			"crm_connections[2].secret_env: \"\" → PIPEDRIVE_SECRET_DEALS (same secret)",
			"crm_connections[2].api_token_env: \"\" → PIPEDRIVE_API_TOKEN_DEALS (same API token)",
		}) {
			t.Errorf("Apply(export) changes = %q; want only the UI secrets' variables recorded", got)
		}
		if r := mustApply(t, s, box, vars, back); len(r.Changes) != 0 {
			t.Errorf("second Apply(export) changes = %q; want none", r.Changes)
		}
		if got := stageTable(t, s, ui); !maps.Equal(got, map[string]string{"7": "won", "8": ""}) {
			t.Errorf("Deals stage table = %v; want it as it was", got)
		}
		if after := connectionNamed(t, crmOf(t, s, "acme"), "Deals"); after.Token != ui.Token {
			t.Errorf("Deals token changed")
		}
	})
}
