package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

const (
	token1 = "EAAfirsttoken0001"
	token2 = "EAAsecondtoken0002"
	secret = "appsecret-9876"
)

func newBox(t testing.TB) *seal.Box {
	t.Helper()
	b, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func acmeFile() File {
	return File{
		Account: AccountSpec{Slug: "acme", Name: "Acme Inc", Timezone: "Europe/Berlin", DefaultCountry: "DE", Currency: "EUR", CRMName: "HubSpot"},
		Datasets: []DatasetSpec{
			{Name: "Main", PixelID: "123456789012345", AccessTokenEnv: "META_TOKEN_ACME", AppSecretEnv: "META_APP_SECRET_ACME",
				APIVersion: "v24.0", Mode: models.ModeLive, LDU: models.LDUCalifornia},
			{Name: "Demo", PixelID: "987654321", Mode: models.ModeDryRun},
		},
		Junk: junk.Settings{junk.TooFast: {Enabled: true, Threshold: 3}, junk.Duplicate: {Enabled: false}},
	}
}

func acmeEnv() map[string]string {
	return map[string]string{"META_TOKEN_ACME": token1, "META_APP_SECRET_ACME": secret}
}

// mustApply applies f and fails the test on an error.
func mustApply(t *testing.T, s *store.Store, box *seal.Box, vars map[string]string, f File) Report {
	t.Helper()
	r, err := Apply(t.Context(), s, box, env(vars), f, Options{})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return r
}

// state is everything apply may touch, for before/after comparisons.
type state struct {
	Account  models.Account
	Datasets []models.Dataset
}

func load(t *testing.T, s *store.Store, slug string) state {
	t.Helper()
	a, err := s.AccountBySlug(t.Context(), slug)
	if errors.Is(err, store.ErrNotFound) {
		return state{}
	}
	if err != nil {
		t.Fatalf("AccountBySlug(%s): %v", slug, err)
	}
	ds, err := s.Datasets(t.Context(), a.ID)
	if err != nil {
		t.Fatalf("Datasets: %v", err)
	}
	return state{Account: a, Datasets: ds}
}

func TestApplyCreatesThenChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r := mustApply(t, s, box, acmeEnv(), acmeFile())
		wantPaths := []string{"account", "datasets[0]", "datasets[0].access_token_env", "datasets[0].app_secret_env", "datasets[1]", "junk.duplicate", "junk.too_fast"}
		if got := paths(r.Changes); !reflect.DeepEqual(got, wantPaths) {
			t.Errorf("first Apply changes = %q; want paths %q", r.Changes, wantPaths)
		}
		if len(r.Notes) == 0 || !strings.Contains(r.Notes[0].Message, "no members") {
			t.Errorf("first Apply notes = %q; want a hint that the account has no owner", r.Notes)
		}
		for _, c := range r.Changes {
			if strings.Contains(c.What, token1) || strings.Contains(c.What, secret) {
				t.Errorf("change %q shows a secret", c)
			}
		}

		st := load(t, s, "acme")
		a := st.Account
		if a.Name != "Acme Inc" || a.Timezone != "Europe/Berlin" || a.DefaultCountry != "DE" || a.Currency != "EUR" || a.CRMName != "HubSpot" {
			t.Errorf("account = %+v; want the file's settings", a)
		}
		settings, ok := storedJunk(a.JunkSettings)
		if !ok || !equalJunk(settings, acmeFile().Junk) {
			t.Errorf("junk settings = %s; want the file's", a.JunkSettings)
		}
		if len(st.Datasets) != 2 {
			t.Fatalf("datasets = %+v; want 2", st.Datasets)
		}
		main := datasetNamed(t, st.Datasets, "Main")
		if main.PixelID != "123456789012345" || main.Mode != models.ModeLive || main.LDU != models.LDUCalifornia || main.APIVersion != "v24.0" {
			t.Errorf("Main = %+v; want the file's settings", main)
		}
		if got, err := box.Open(main.TokenSealed, dispatch.TokenLabel(main.ID)); err != nil || got != token1 {
			t.Errorf("Main token opens to %q, %v; want the env value", got, err)
		}
		if main.TokenLast4 != "0001" || main.TokenEnv != "META_TOKEN_ACME" {
			t.Errorf("Main TokenLast4, TokenEnv = %q, %q; want 0001, META_TOKEN_ACME", main.TokenLast4, main.TokenEnv)
		}
		if got, err := box.Open(main.AppSecretSealed, dispatch.AppSecretLabel(main.ID)); err != nil || got != secret || main.AppSecretEnv != "META_APP_SECRET_ACME" {
			t.Errorf("Main app secret opens to %q, %v, env %q; want the env value from META_APP_SECRET_ACME", got, err, main.AppSecretEnv)
		}
		demo := datasetNamed(t, st.Datasets, "Demo")
		if demo.TokenSealed != "" || demo.Mode != models.ModeDryRun || demo.LDU != models.LDUOff {
			t.Errorf("Demo = %+v; want dry_run, ldu off, no token", demo)
		}

		r = mustApply(t, s, box, acmeEnv(), acmeFile())
		if len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}
		if after := load(t, s, "acme"); !reflect.DeepEqual(after, st) {
			t.Errorf("second Apply changed the database:\n%+v\nwant\n%+v", after, st)
		}
	})
}

func TestApplyNewToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), acmeFile())
		main := datasetNamed(t, load(t, s, "acme").Datasets, "Main")
		if err := s.PauseDataset(ctx, main.ID, "token expired", time.Now()); err != nil {
			t.Fatal(err)
		}

		vars := acmeEnv()
		vars["META_TOKEN_ACME"] = token2
		r := mustApply(t, s, box, vars, acmeFile())
		want := []Change{
			{Path: "datasets[0].access_token_env", What: "token replaced (from $META_TOKEN_ACME)"},
			{Path: "datasets[0]", What: "sending resumed (it was paused: token expired)"},
		}
		if !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply with a new token changes = %q; want %q", r.Changes, want)
		}
		main = datasetNamed(t, load(t, s, "acme").Datasets, "Main")
		if got, err := box.Open(main.TokenSealed, dispatch.TokenLabel(main.ID)); err != nil || got != token2 {
			t.Errorf("Main token opens to %q, %v; want the new env value", got, err)
		}
		if main.TokenLast4 != "0002" || main.PausedAt != nil {
			t.Errorf("Main TokenLast4 %q, PausedAt %v; want 0002 and not paused", main.TokenLast4, main.PausedAt)
		}

		// The same token under another variable's name: only the name.
		vars = map[string]string{"ACME_TOKEN": token2, "META_APP_SECRET_ACME": secret}
		f := acmeFile()
		f.Datasets[0].AccessTokenEnv = "ACME_TOKEN"
		r = mustApply(t, s, box, vars, f)
		want = []Change{{Path: "datasets[0].access_token_env", What: "META_TOKEN_ACME → ACME_TOKEN (same token)"}}
		if !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply with a renamed variable changes = %q; want %q", r.Changes, want)
		}
	})
}

func TestApplyUpdates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), acmeFile())
		// A dataset made in the web UI, not in the file.
		a := load(t, s, "acme").Account
		if err := s.CreateDataset(ctx, &models.Dataset{AccountID: a.ID, Name: "From UI", PixelID: "55555", Mode: models.ModeDryRun, LDU: models.LDUOff}); err != nil {
			t.Fatal(err)
		}

		f := acmeFile()
		f.Account.Timezone = "UTC"
		f.Account.CRMName = ""
		f.Datasets[1].Name = "DEMO" // the same dataset, ignoring case
		f.Datasets[1].Mode = models.ModeTest
		f.Datasets[1].TestEventCode = "TEST42"
		f.Datasets[1].AccessTokenEnv = "META_TOKEN_ACME"
		f.Junk = junk.Settings{junk.TooFast: {Enabled: true, Threshold: 5}}
		r := mustApply(t, s, box, acmeEnv(), f)
		want := []Change{
			{Path: "account.timezone", What: "Europe/Berlin → UTC"},
			{Path: "account.crm_name", What: `HubSpot → ""`},
			{Path: "datasets[1].name", What: "Demo → DEMO"},
			{Path: "datasets[1].test_event_code", What: `"" → TEST42`},
			{Path: "datasets[1].mode", What: "dry_run → test"},
			{Path: "datasets[1].access_token_env", What: "token set (from $META_TOKEN_ACME)"},
			{Path: "junk.duplicate", What: "off → default"},
			{Path: "junk.too_fast", What: "on, threshold 3 → on, threshold 5"},
		}
		if !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply changes =\n%q\nwant\n%q", r.Changes, want)
		}
		if !hasNote(r.Notes, `"From UI" is in the database but not in the file`) {
			t.Errorf("notes = %q; want one about the dataset not in the file", r.Notes)
		}
		st := load(t, s, "acme")
		if len(st.Datasets) != 3 {
			t.Errorf("datasets = %d; want 3 (none created, none deleted)", len(st.Datasets))
		}
		demo := datasetNamed(t, st.Datasets, "DEMO")
		if demo.Mode != models.ModeTest || demo.TestEventCode != "TEST42" {
			t.Errorf("DEMO = %+v; want test mode with TEST42", demo)
		}
		if st.Account.Timezone != "UTC" || st.Account.CRMName != "" {
			t.Errorf("account = %+v; want timezone UTC, no CRM name", st.Account)
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}

		// Without a junk section the stored settings stay.
		f.Junk = nil
		if r := mustApply(t, s, box, acmeEnv(), f); len(r.Changes) != 0 {
			t.Errorf("Apply without junk changes = %q; want none", r.Changes)
		}
		if got := load(t, s, "acme").Account.JunkSettings; got != `{"too_fast":{"enabled":true,"threshold":5}}` {
			t.Errorf("junk settings = %s; want the last applied ones", got)
		}
	})
}

func TestApplyInvalidChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), acmeFile())
		before := load(t, s, "acme")

		f := acmeFile()
		f.Account.Name = "Renamed"   // valid on its own
		f.Datasets[0].Mode = "turbo" // invalid
		f.Datasets = append(f.Datasets, DatasetSpec{Name: "New", PixelID: "111111", Mode: models.ModeLive, AccessTokenEnv: "MISSING"})
		_, err := Apply(t.Context(), s, box, env(acmeEnv()), f, Options{})
		var inv *Invalid
		if !errors.As(err, &inv) {
			t.Fatalf("Apply(invalid) error = %v; want *Invalid", err)
		}
		if len(inv.Problems) != 2 || !strings.Contains(err.Error(), "setup file has 2 problems") ||
			!strings.Contains(err.Error(), "datasets[2].access_token_env: environment variable MISSING is not set") {
			t.Errorf("Apply(invalid) error = %q; want both problems", err)
		}
		if after := load(t, s, "acme"); !reflect.DeepEqual(after, before) {
			t.Errorf("Apply(invalid) changed the database:\n%+v\nwant\n%+v", after, before)
		}

		// A new account is not created either.
		f.Account.Slug = "other"
		if _, err := Apply(t.Context(), s, box, env(acmeEnv()), f, Options{}); err == nil {
			t.Fatal("Apply(invalid, new slug) = nil error")
		}
		if _, err := s.AccountBySlug(t.Context(), "other"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountBySlug(other) after an invalid apply = %v; want ErrNotFound", err)
		}
	})
}

func TestPlanChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r, err := Plan(t.Context(), s, box, env(acmeEnv()), acmeFile(), Options{})
		if err != nil {
			t.Fatalf("Plan: %v", err)
		}
		if len(r.Changes) != 7 {
			t.Errorf("Plan changes = %q; want the 7 of a first apply", r.Changes)
		}
		if _, err := s.AccountBySlug(t.Context(), "acme"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountBySlug after Plan = %v; want ErrNotFound", err)
		}
		mustApply(t, s, box, acmeEnv(), acmeFile())
		if r, err := Plan(t.Context(), s, box, env(acmeEnv()), acmeFile(), Options{}); err != nil || len(r.Changes) != 0 {
			t.Errorf("Plan after Apply = %q, %v; want no changes", r.Changes, err)
		}
	})
}

func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), acmeFile())
		// A token saved in the web UI: sealed, with no variable's name.
		a := load(t, s, "acme").Account
		ui := models.Dataset{AccountID: a.ID, Name: "Web UI", PixelID: "22222", Mode: models.ModeLive, LDU: models.LDUAlways}
		if err := s.CreateDataset(ctx, &ui); err != nil {
			t.Fatal(err)
		}
		const uiToken = "EAAuitoken7777"
		ui.TokenSealed, ui.TokenLast4 = box.Seal(uiToken, dispatch.TokenLabel(ui.ID)), "7777"
		if err := s.SaveDataset(ctx, &ui); err != nil {
			t.Fatal(err)
		}

		f, notes, err := Export(ctx, s, "acme", "")
		if err != nil {
			t.Fatalf("Export: %v", err)
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{token1, secret, uiToken, "v1:"} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("export contains a secret (%q):\n%s", v, b)
			}
		}
		if !hasNote(notes, "META_TOKEN_WEB_UI is a suggested name") {
			t.Errorf("Export notes = %q; want the suggested name of the UI token", notes)
		}

		// The file, read back, recreates the same setup elsewhere.
		back, problems := Decode(bytes.NewReader(b))
		if len(problems) > 0 {
			t.Fatalf("Decode(export) problems = %q\n%s", problems, b)
		}
		vars := acmeEnv()
		vars["META_TOKEN_WEB_UI"] = uiToken
		fresh := storetest.New(t)
		mustApply(t, fresh, box, vars, back)
		again, _, err := Export(ctx, fresh, "acme", "")
		if err != nil {
			t.Fatalf("Export(fresh): %v", err)
		}
		back.Account.present = nil // decoded from the export; again was not
		if !reflect.DeepEqual(again, back) {
			t.Errorf("export after apply on a fresh database =\n%+v\nwant\n%+v", again, back)
		}
		want, got := load(t, s, "acme"), load(t, fresh, "acme")
		if want.Account.Name != got.Account.Name || want.Account.Timezone != got.Account.Timezone ||
			want.Account.Currency != got.Account.Currency || want.Account.JunkSettings != got.Account.JunkSettings {
			t.Errorf("fresh account = %+v; want the settings of %+v", got.Account, want.Account)
		}
		uiFresh := datasetNamed(t, got.Datasets, "Web UI")
		if tok, err := box.Open(uiFresh.TokenSealed, dispatch.TokenLabel(uiFresh.ID)); err != nil || tok != uiToken {
			t.Errorf("fresh Web UI token opens to %q, %v; want the UI token", tok, err)
		}
		// And applying the export to its own database changes nothing.
		if r := mustApply(t, s, box, vars, back); len(r.Changes) != 1 || r.Changes[0].Path != "datasets[2].access_token_env" {
			t.Errorf("Apply(export) on the source changes = %q; want only the UI token's variable name recorded", r.Changes)
		}
		if r := mustApply(t, s, box, vars, back); len(r.Changes) != 0 {
			t.Errorf("second Apply(export) changes = %q; want none", r.Changes)
		}
	})
}

func TestExportUnknownAccount(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if _, _, err := Export(t.Context(), s, "nobody", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Export(nobody) = %v; want ErrNotFound", err)
	}
}

func TestExportDefaultJunkOmitted(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := acmeFile()
	f.Junk = nil
	f.Datasets = nil
	mustApply(t, s, newBox(t), nil, f)
	got, _, err := Export(t.Context(), s, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), `"junk"`) || !strings.Contains(string(b), `"datasets":[]`) {
		t.Errorf("export = %s; want no junk section and an empty datasets list", b)
	}
}

func paths(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

func hasNote(ns []Note, part string) bool {
	for _, n := range ns {
		if strings.Contains(n.String(), part) {
			return true
		}
	}
	return false
}

func datasetNamed(t *testing.T, ds []models.Dataset, name string) models.Dataset {
	t.Helper()
	for _, d := range ds {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no dataset named %q in %+v", name, ds)
	return models.Dataset{}
}

// The account's Website URL goes through export and apply like the other
// account settings: shown in the export, applied and reported when it
// changes, and a bad one refused with its JSON path, changing nothing.
func TestWebsiteURLExportAndApply(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		box := newBox(t)
		f := acmeFile()
		f.Account.WebsiteURL = " https://acme.example/contact "
		mustApply(t, s, box, acmeEnv(), f)
		if got := load(t, s, "acme").Account.WebsiteURL; got != "https://acme.example/contact" {
			t.Errorf("website_url applied = %q; want the file's, trimmed", got)
		}

		exported, _, err := Export(ctx, s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(exported)
		if !strings.Contains(string(b), `"website_url":"https://acme.example/contact"`) {
			t.Errorf("export = %s; want the account's website_url", b)
		}
		back, problems := Decode(bytes.NewReader(b))
		if len(problems) > 0 {
			t.Fatalf("Decode(export) problems = %q", problems)
		}
		fresh := storetest.New(t)
		mustApply(t, fresh, box, acmeEnv(), back)
		if got := load(t, fresh, "acme").Account.WebsiteURL; got != "https://acme.example/contact" {
			t.Errorf("website_url on a fresh database = %q; want the exported one", got)
		}
		if r := mustApply(t, s, box, acmeEnv(), back); len(r.Changes) != 0 {
			t.Errorf("Apply(export) changes = %q; want none", r.Changes)
		}

		back.Account.WebsiteURL = "https://www.acme.example/"
		r := mustApply(t, s, box, acmeEnv(), back)
		if want := []Change{{Path: "account.website_url", What: "https://acme.example/contact → https://www.acme.example/"}}; !reflect.DeepEqual(r.Changes, want) {
			t.Errorf("Apply changes = %q; want %q", r.Changes, want)
		}

		before := load(t, s, "acme")
		for _, bad := range []string{"www.acme.example", "ftp://acme.example/", "https:///contact", "https://acme.example/" + strings.Repeat("x", 2000)} {
			back.Account.WebsiteURL = bad
			_, err := Apply(ctx, s, box, env(acmeEnv()), back, Options{})
			var inv *Invalid
			if !errors.As(err, &inv) || len(inv.Problems) != 1 || inv.Problems[0].Path != "account.website_url" {
				t.Errorf("Apply(website_url %.40q) = %v; want one problem at account.website_url", bad, err)
			}
		}
		if after := load(t, s, "acme"); !reflect.DeepEqual(after, before) {
			t.Errorf("an invalid apply changed the database:\n%+v\nwant\n%+v", after, before)
		}
	})
}

// TestApplyLeavesOutKeysUnchanged: an account setting the file leaves out
// stays as it is; one given empty is cleared.
func TestApplyLeavesOutKeysUnchanged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		f := acmeFile()
		f.Account.WebsiteURL = "https://acme.example/contact"
		mustApply(t, s, box, acmeEnv(), f)
		before := load(t, s, "acme").Account

		short, problems := Decode(strings.NewReader(`{"account": {"slug": "acme", "name": "Acme Inc", "timezone": "Europe/Berlin", "currency": "EUR"}}`))
		if len(problems) > 0 {
			t.Fatalf("Decode: %v", problems)
		}
		r := mustApply(t, s, box, acmeEnv(), short)
		after := load(t, s, "acme").Account
		if after.DefaultCountry != before.DefaultCountry || after.CRMName != before.CRMName || after.WebsiteURL != before.WebsiteURL {
			t.Errorf("after a file without them: country %q, CRM %q, website %q; want %q, %q, %q kept",
				after.DefaultCountry, after.CRMName, after.WebsiteURL, before.DefaultCountry, before.CRMName, before.WebsiteURL)
		}
		if len(r.Changes) != 0 {
			t.Errorf("changes %v; want none", r.Changes)
		}

		cleared, problems := Decode(strings.NewReader(`{"account": {"slug": "acme", "name": "Acme Inc", "timezone": "Europe/Berlin", "currency": "EUR", "crm_name": "", "website_url": ""}}`))
		if len(problems) > 0 {
			t.Fatalf("Decode: %v", problems)
		}
		mustApply(t, s, box, acmeEnv(), cleared)
		if after := load(t, s, "acme").Account; after.CRMName != "" || after.WebsiteURL != "" || after.DefaultCountry != before.DefaultCountry {
			t.Errorf("after a file giving them empty: CRM %q, website %q, country %q; want the two cleared, the country kept",
				after.CRMName, after.WebsiteURL, after.DefaultCountry)
		}
	})
}
