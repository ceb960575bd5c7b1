package web_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/setup"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

const setupWebToken = "EAAwebtokenvalue4321"

// setupAccount is acme, owned by ada, with a live dataset whose token was
// saved in the web UI, a dry-run one, and three send rules.
func setupAccount(t *testing.T, a *app) models.Account {
	t.Helper()
	ctx := t.Context()
	ada := a.user("ada@example.com", false)
	acc := a.account("acme", ada)
	f, problems := setup.Decode(strings.NewReader(`{
  "account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "USD"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"},
               {"name": "Demo", "pixel_id": "987654321", "mode": "dry_run"}],
  "send_rules": [
    {"name": "Completed leads", "dataset": "Main", "event_name": "Lead"},
    {"name": "Big budgets", "dataset": "Main", "mode": "automatic_match", "event_name": "QualifiedLead",
     "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "5000"}], "value": {"field": "fields.budget"}},
    {"name": "Partial", "dataset": "Demo", "mode": "automatic_partial", "event_name": "PartialLead"}
  ]
}`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, err := setup.Apply(ctx, a.store, a.box, func(string) string { return "" }, f, setup.Options{}); err != nil {
		t.Fatal(err)
	}
	ds, err := a.store.Datasets(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Name == "Main" {
			d.Mode, d.TokenSealed, d.TokenLast4 = models.ModeLive, a.box.Seal(setupWebToken, dispatch.TokenLabel(d.ID)), "4321"
			if err := a.store.SaveDataset(ctx, &d); err != nil {
				t.Fatal(err)
			}
		}
	}
	return acc
}

// upload posts a multipart form: the fields, and a file unless name is "".
func (b *browser) upload(path string, fields map[string]string, name, content string) resp {
	b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if _, ok := fields["_csrf"]; !ok {
		_ = w.WriteField("_csrf", b.csrf)
	}
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if name != "" {
		fw, err := w.CreateFormFile("file", name)
		if err != nil {
			b.t.Fatal(err)
		}
		_, _ = fw.Write([]byte(content))
	}
	_ = w.Close()
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.app.srv.URL+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

// applyFields are the hidden fields of a preview's Apply form.
func applyFields(t *testing.T, r resp) map[string]string {
	t.Helper()
	form := r.doc.Find(`[data-testid="setup-apply-form"]`)
	if form.Length() == 0 {
		t.Fatalf("the preview has no Apply form:\n%s", r.body)
	}
	out := map[string]string{}
	for _, name := range []string{"setup", "expect", "file_name"} {
		v, _ := form.Find(`[name="` + name + `"]`).Attr("value")
		out[name] = v
	}
	return out
}

func texts(r resp, testid string) []string {
	var out []string
	r.doc.Find(`[data-testid="` + testid + `"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.Join(strings.Fields(s.Text()), " "))
	})
	return out
}

func TestSetupDownload(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")

		r := b.get(views.SettingsURL(acc.ID, views.SettingsSetup))
		wantStatus(t, "settings", r, http.StatusOK)
		if href, _ := r.doc.Find(`[data-testid="setup-download"]`).Attr("href"); href != views.AccountURL(acc.ID, "/settings/setup.json") {
			t.Errorf("Download setup links to %q", href)
		}
		if !r.has("setup-upload-form") {
			t.Error("the settings page has no upload form")
		}

		r = b.get(views.AccountURL(acc.ID, "/settings/setup.json"))
		wantStatus(t, "download", r, http.StatusOK)
		if got := r.header.Get("Content-Disposition"); got != `attachment; filename="leadsignal-setup-acme.json"` {
			t.Errorf("Content-Disposition = %q", got)
		}
		if got := r.header.Get("Content-Type"); !strings.HasPrefix(got, "application/json") {
			t.Errorf("Content-Type = %q", got)
		}
		for _, secret := range []string{setupWebToken, "v1:"} {
			if strings.Contains(r.body, secret) {
				t.Errorf("the download shows a secret (%q):\n%s", secret, r.body)
			}
		}
		f, problems := setup.Decode(strings.NewReader(r.body))
		if len(problems) > 0 {
			t.Fatalf("the download does not decode: %q\n%s", problems, r.body)
		}
		var names []string
		for _, rs := range f.SendRules {
			names = append(names, rs.Name)
		}
		if f.Account.Slug != "acme" || len(f.Datasets) != 2 || !slices.Equal(names, []string{"Completed leads", "Big budgets", "Partial"}) {
			t.Errorf("download = %+v; want acme's datasets and rules", f)
		}
		// The token saved in the web UI appears as a variable's name only.
		if f.Datasets[1].Name != "Main" || f.Datasets[1].AccessTokenEnv != "META_TOKEN_MAIN" {
			t.Errorf("Main's access_token_env = %q; want the suggested META_TOKEN_MAIN", f.Datasets[1].AccessTokenEnv)
		}

		// The same file uploaded back changes nothing.
		file := r2body(b, acc)
		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/preview"), nil, "leadsignal-setup-acme.json", file)
		wantStatus(t, "preview of the downloaded file", r, http.StatusOK)
		if !r.has("setup-nothing") || r.has("setup-apply-form") {
			t.Errorf("preview of an unchanged setup: want 'Nothing to change' and no Apply button\n%s", r.body)
		}
		if notes := r.text("setup-notes"); !strings.Contains(notes, "the stored token (…4321) is kept") {
			t.Errorf("notes = %q; want the stored token kept", notes)
		}
	})
}

// r2body downloads the account's setup file.
func r2body(b *browser, acc models.Account) string {
	b.t.Helper()
	r := b.get(views.AccountURL(acc.ID, "/settings/setup.json"))
	b.get(views.AccountURL(acc.ID, "/settings")) // a page with the CSRF token
	return r.body
}

const changedSetup = `{
  "account": {"slug": "acme", "name": "Acme Roofing", "timezone": "Europe/Berlin", "currency": "USD"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "live"},
               {"name": "New", "pixel_id": "555555", "mode": "dry_run"}],
  "junk": {"too_fast": {"enabled": true, "threshold": 4}},
  "send_rules": [
    {"name": "Big budgets", "dataset": "Main", "mode": "automatic_match", "event_name": "QualifiedLead", "combinator": "or",
     "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "10000"},
                    {"field": "email_is_work", "match_type": "equals", "pattern": "true"}],
     "value": {"field": "fields.budget"}, "currency": "EUR"},
    {"name": "Completed leads", "dataset": "Main", "event_name": "Lead"},
    {"name": "Booked", "dataset": "New", "mode": "booking", "event_name": "Schedule", "value": 150}
  ]
}`

func TestSetupUploadPreviewThenApply(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		before, err := s.SendRules(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}

		r := b.upload(views.AccountURL(acc.ID, "/settings/setup/preview"), nil, "acme.json", changedSetup)
		wantStatus(t, "preview", r, http.StatusOK)
		if got, want := texts(r, "setup-summary"), []string{"2 settings changed", "1 added", "1 signal changed", "1 added, 1 changed, 1 deleted, reordered",
			"not in the file: left as they are", "not in the file: left as they are", "not in the file: left as they are",
			"not in the file: left as they are", "not in the file: left as they are"}; !slices.Equal(got, want) {
			t.Errorf("section summaries = %q; want %q", got, want)
		}
		changes := strings.Join(texts(r, "setup-change"), "\n")
		for _, want := range []string{
			"name: Acme → Acme Roofing account.name",
			"timezone: UTC → Europe/Berlin account.timezone",
			`created "New" (dataset id 555555, dry_run) datasets[1]`,
			"too_fast: default → on, threshold 4 junk.too_fast",
			`deleted "Partial" (PartialLead to Demo, automatic_partial) send_rules`,
			`Big budgets combinator: and → or send_rules[0].combinator`,
			`Big budgets conditions: Form field budget is greater than 5000 → Form field budget is greater than 10000 OR Work email is true send_rules[0].conditions`,
			`Big budgets currency: the account's → EUR send_rules[0].currency`,
			`created "Booked" as a stage mapping (stage booked: Schedule to New, value 150) send_rules[2]`,
			`order "Completed leads", "Big budgets" → "Big budgets", "Completed leads" send_rules`,
		} {
			if !strings.Contains(changes, want) {
				t.Errorf("preview changes =\n%s\nwant a line with %q", changes, want)
			}
		}
		if r.text("setup-apply") != "Apply 10 changes" {
			t.Errorf("Apply button = %q; want Apply 10 changes", r.text("setup-apply"))
		}
		// The preview changed nothing.
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme" {
			t.Errorf("the preview renamed the account to %q", got.Name)
		}
		if after, _ := s.SendRules(ctx, acc.ID); len(after) != len(before) {
			t.Errorf("the preview changed the rules: %d; want %d", len(after), len(before))
		}

		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), applyFields(t, r), "", "")
		if r.status != http.StatusSeeOther || r.location() != views.SettingsURL(acc.ID, views.SettingsSetup) {
			t.Fatalf("apply = %d %q\n%s", r.status, r.location(), r.body)
		}
		if r := b.get(views.SettingsURL(acc.ID, views.SettingsSetup)); r.text("flash") != "Setup applied: 10 changes." {
			t.Errorf("flash = %q; want Setup applied: 10 changes.", r.text("flash"))
		}
		got, _ := s.AccountBySlug(ctx, "acme")
		if got.Name != "Acme Roofing" || got.Timezone != "Europe/Berlin" {
			t.Errorf("account = %+v; want the file's name and time zone", got)
		}
		rs, err := s.SendRules(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"Big budgets", "Completed leads", "Booked"}) {
			t.Errorf("rules = %q; want the file's, in its order", names)
		}
		vs, err := s.SendRuleVersions(ctx, acc.ID, rs[0].ID, 10)
		if err != nil || len(vs) != 2 || vs[0].Email != "ada@example.com" {
			t.Errorf("versions of Big budgets = %+v, %v; want the change by ada", vs, err)
		}
		ds, _ := s.Datasets(ctx, acc.ID)
		for _, d := range ds {
			if d.Name == "Main" && (d.TokenLast4 != "4321" || d.Mode != models.ModeLive) {
				t.Errorf("Main = %+v; want its stored token kept", d)
			}
		}

		// The same file again: nothing to apply.
		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/preview"), nil, "acme.json", changedSetup)
		wantStatus(t, "second preview", r, http.StatusOK)
		if !r.has("setup-nothing") || r.has("setup-apply-form") {
			t.Errorf("second preview: want 'Nothing to change'\n%s", r.body)
		}
	})
}

// TestSetupApplyAfterAccountChanged: the account changes between the
// preview and the click; the apply changes nothing and shows the new
// preview, which then applies.
func TestSetupApplyAfterAccountChanged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		r := b.upload(views.AccountURL(acc.ID, "/settings/setup/preview"), nil, "acme.json", changedSetup)
		wantStatus(t, "preview", r, http.StatusOK)
		fields := applyFields(t, r)

		// Meanwhile someone else renames a rule and the account.
		rs, _ := s.SendRules(ctx, acc.ID)
		rs[1].EventName = "Contact"
		if err := s.SaveSendRule(ctx, &rs[1], nil); err != nil {
			t.Fatal(err)
		}
		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), fields, "", "")
		wantStatus(t, "stale apply", r, http.StatusConflict)
		if !strings.Contains(r.text("setup-notice"), "The account changed since the preview") {
			t.Errorf("notice = %q; want the account changed", r.text("setup-notice"))
		}
		if changes := strings.Join(texts(r, "setup-change"), "\n"); !strings.Contains(changes, "event_name: Contact → QualifiedLead") {
			t.Errorf("new preview =\n%s\nwant the other person's change undone", changes)
		}
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme" {
			t.Errorf("a stale apply renamed the account to %q", got.Name)
		}
		// A form without the preview's fingerprint only previews.
		delete(fields, "expect")
		wantStatus(t, "apply without expect", b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), fields, "", ""), http.StatusConflict)

		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), applyFields(t, r), "", "")
		wantStatus(t, "apply of the new preview", r, http.StatusSeeOther)
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme Roofing" {
			t.Errorf("account name = %q after the apply", got.Name)
		}
	})
}

func TestSetupUploadProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		preview := views.AccountURL(acc.ID, "/settings/setup/preview")
		rulesBefore, _ := s.SendRules(ctx, acc.ID)

		invalid := strings.NewReplacer(`"pattern": "10000"`, `"pattern": "(["`, `"match_type": "gt"`, `"match_type": "regex"`,
			`"dataset": "New"`, `"dataset": "Elsewhere"`, `"name": "New", "pixel_id": "555555", "mode": "dry_run"`,
			`"name": "New", "pixel_id": "555555", "mode": "live", "access_token_env": "LEADSIGNAL_SECRET"`).Replace(changedSetup)
		tests := []struct {
			name, file, content string
			want                []string
		}{
			{"invalid values", "acme.json", invalid, []string{
				"datasets[1].access_token_env: live mode needs an access token, and an upload in the web UI reads no environment variables",
				"send_rules[0].conditions[0].pattern: this regular expression does not compile",
				`send_rules[2].dataset: no dataset is named "Elsewhere" in the file or the account; there are "Main", "New", "Demo"`,
			}},
			{"not JSON", "photo.png", "\x89PNG\r\n\x1a\n", []string{"invalid JSON at line 1, column 1"}},
			{"JSON of another shape", "list.json", `[{"name": "x"}]`, []string{"must be one JSON object"}},
			{"wrong types", "acme.json", strings.Replace(changedSetup, `"value": 150`, `"value": "150"`, 1), []string{
				`send_rules[2].value: must be a number like 250, or {"field": "fields.budget"} to read it from each lead, not a string`}},
			{"too large", "big.json", `{"account": {"name": "` + strings.Repeat("x", 1<<20) + `"}}`, []string{
				"The file is 1.0 MiB; a setup file is at most 1 MiB, and a real one a few KiB. Is it the right file?"}},
			{"no file", "", "", []string{"Choose a setup file to upload"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := b.upload(preview, nil, tt.file, tt.content)
				wantStatus(t, tt.name, r, http.StatusUnprocessableEntity)
				got := texts(r, "setup-problem")
				if len(got) != len(tt.want) {
					t.Fatalf("problems = %q; want %q", got, tt.want)
				}
				for i := range got {
					if !strings.HasPrefix(got[i], tt.want[i]) {
						t.Errorf("problem %d = %q; want it to start with %q", i, got[i], tt.want[i])
					}
				}
				if r.has("setup-apply-form") || !r.has("setup-upload-form") {
					t.Error("a refused upload must offer a new upload, not Apply")
				}
				for _, secret := range []string{setupWebToken} {
					if strings.Contains(r.body, secret) {
						t.Errorf("the page shows a secret")
					}
				}
			})
		}
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme" {
			t.Errorf("a refused upload renamed the account to %q", got.Name)
		}
		if rs, _ := s.SendRules(ctx, acc.ID); len(rs) != len(rulesBefore) {
			t.Errorf("a refused upload changed the rules")
		}

		// A tampered apply form is validated again.
		r := b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), map[string]string{"setup": invalid, "expect": "x"}, "", "")
		wantStatus(t, "apply of an invalid file", r, http.StatusUnprocessableEntity)
		if len(texts(r, "setup-problem")) != 3 {
			t.Errorf("problems = %q; want the 3 of the file", texts(r, "setup-problem"))
		}
		wantStatus(t, "apply without a file", b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), map[string]string{"expect": "x"}, "", ""),
			http.StatusBadRequest)
	})
}

// TestSetupUploadOtherAccountsFile: a file exported from another account
// is applied to the account whose page it was uploaded on, and says so.
func TestSetupUploadOtherAccountsFile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		ada, _ := s.UserByEmail(t.Context(), "ada@example.com")
		bright := a.account("bright", ada)
		b := a.browser()
		b.login("ada@example.com")
		file := r2body(b, acc)
		// Main is live in acme with a token bright lacks: clone it as a
		// dry run.
		file = strings.Replace(file, `"mode": "live"`, `"mode": "dry_run"`, 1)

		b.get(views.AccountURL(bright.ID, "/settings"))
		r := b.upload(views.AccountURL(bright.ID, "/settings/setup/preview"), nil, "leadsignal-setup-acme.json", file)
		wantStatus(t, "preview in bright", r, http.StatusOK)
		if !strings.Contains(r.text("setup-other-account"), "exported from the account acme") {
			t.Errorf("no word that the file is acme's: %q", r.text("setup-other-account"))
		}
		wantStatus(t, "apply in bright", b.upload(views.AccountURL(bright.ID, "/settings/setup/apply"), applyFields(t, r), "", ""), http.StatusSeeOther)
		acme, _ := s.SendRules(t.Context(), acc.ID)
		cloned, _ := s.SendRules(t.Context(), bright.ID)
		if len(cloned) != len(acme) {
			t.Fatalf("bright has %d rules; want acme's %d", len(cloned), len(acme))
		}
		for i := range acme {
			if cloned[i].Name != acme[i].Name || cloned[i].EventName != acme[i].EventName || cloned[i].Conditions != acme[i].Conditions {
				t.Errorf("bright's rule %d = %+v; want acme's %+v", i, cloned[i], acme[i])
			}
		}
		if got, _ := s.AccountBySlug(t.Context(), "bright"); got.Name != "Acme" {
			t.Errorf("bright's name = %q; the file gave Acme", got.Name)
		}
		if _, err := s.AccountBySlug(t.Context(), "acme"); err != nil {
			t.Errorf("acme: %v", err)
		}
	})
}

func TestSetupFileEditorsAndOwnersOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		bob := a.user("bob@example.com", false)
		other := a.account("beta", bob)
		for email, role := range map[string]models.Role{"eddie@example.com": models.RoleSales, "vic@example.com": models.RoleViewer} {
			u := a.user(email, false)
			if err := s.SetMember(t.Context(), acc.ID, u.ID, role); err != nil {
				t.Fatal(err)
			}
		}
		paths := []string{"/settings/setup.json", "/settings/setup/preview", "/settings/setup/apply"}
		for _, email := range []string{"eddie@example.com", "vic@example.com"} {
			m := a.browser()
			m.login(email)
			wantStatus(t, email+" download", m.get(views.AccountURL(acc.ID, paths[0])), http.StatusForbidden)
			for _, p := range paths[1:] {
				wantStatus(t, email+" "+p, m.upload(views.AccountURL(acc.ID, p), map[string]string{"setup": changedSetup, "expect": "x"}, "acme.json", changedSetup),
					http.StatusForbidden)
			}
		}
		// Another account's URL is not found, whatever the form says.
		b := a.browser()
		b.login("ada@example.com")
		wantStatus(t, "other download", b.get(views.AccountURL(other.ID, paths[0])), http.StatusNotFound)
		for _, p := range paths[1:] {
			r := b.upload(views.AccountURL(other.ID, p), map[string]string{"setup": changedSetup, "expect": "x"}, "acme.json", changedSetup)
			wantStatus(t, "other "+p, r, http.StatusNotFound)
		}
		r := b.post(views.AccountURL(acc.ID, paths[1]), url.Values{"_csrf": {"wrong"}})
		wantStatus(t, "preview with a wrong CSRF token", r, http.StatusForbidden)
		if got, _ := s.AccountBySlug(t.Context(), "acme"); got.Name != "Acme" {
			t.Errorf("account renamed to %q", got.Name)
		}
		if got, _ := s.AccountBySlug(t.Context(), "beta"); got.Name != "Beta" {
			t.Errorf("beta renamed to %q", got.Name)
		}
	})
}

// TestSetupUploadBOMAndWarnings: a file saved with a UTF-8 byte-order
// mark previews and applies like one without; a rule that shares its
// dataset and event name with an earlier automatic rule is a warning
// shown with the preview, and the file applies all the same, as is a
// booking rule, applied as a stage mapping.
func TestSetupUploadBOMAndWarnings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		preview := views.AccountURL(acc.ID, "/settings/setup/preview")

		r := b.upload(preview, nil, "acme.json", "\ufeff"+changedSetup)
		wantStatus(t, "preview with a BOM", r, http.StatusOK)
		booking := func(i int) string {
			return fmt.Sprintf("send_rules[%d].mode: booking is no longer a send mode: this rule is applied as the stage mapping of the account's booking stage, "+
				"which sends the same events under the same ids; an export of the account lists it in stage_mappings", i)
		}
		if got := texts(r, "setup-warning"); r.text("setup-apply") != "Apply 10 changes" || !slices.Equal(got, []string{booking(2)}) {
			t.Errorf("preview with a BOM: Apply button %q, warnings %q; want Apply 10 changes and the booking rule's warning",
				r.text("setup-apply"), got)
		}

		clash := strings.Replace(changedSetup, `{"name": "Completed leads", "dataset": "Main", "event_name": "Lead"},`,
			`{"name": "Completed leads", "dataset": "Main", "event_name": "Lead"},
    {"name": "Work emails", "dataset": "main", "mode": "automatic_match", "event_name": "Lead",
     "conditions": [{"field": "email_is_work", "match_type": "equals", "pattern": "true"}]},`, 1)
		r = b.upload(preview, nil, "acme.json", "\ufeff"+clash)
		wantStatus(t, "preview of rules that share an event", r, http.StatusOK)
		want := []string{booking(3), `send_rules[2]: shares dataset "main" and event Lead with send_rules[1]; leads that match both get one event, owned by send_rules[1]`}
		if got := texts(r, "setup-warning"); !slices.Equal(got, want) {
			t.Errorf("warnings = %q; want %q", got, want)
		}
		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), applyFields(t, r), "", "")
		wantStatus(t, "apply of rules that share an event", r, http.StatusSeeOther)
		rs, err := s.SendRules(t.Context(), acc.ID)
		if err != nil || len(rs) != 4 || rs[2].Name != "Work emails" {
			t.Errorf("rules = %+v, %v; want the file's 4", rs, err)
		}
	})
}

// TestSetupUploadNamesAndLimits: text that is not UTF-8, invisible
// characters in names, more datasets than an account may have and rules
// over the account's cost budget are problems at their JSON paths.
func TestSetupUploadNamesAndLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		preview := views.AccountURL(acc.ID, "/settings/setup/preview")

		var datasets strings.Builder
		for i := range store.MaxDatasets - 1 {
			fmt.Fprintf(&datasets, `, {"name": "Extra %d", "pixel_id": "%d", "mode": "dry_run"}`, i, 700000+i)
		}
		var costly strings.Builder
		for i := range 30 {
			fmt.Fprintf(&costly, `, {"name": "Costly %d", "dataset": "Main", "mode": "automatic_match", "event_name": "Lead%d",
			  "conditions": [{"field": "message", "match_type": "regex", "pattern": "%s%d"}]}`, i, i, strings.Repeat("[a-z]x", 100), i)
		}
		tests := []struct {
			name, content string
			want          []string
		}{
			{"rule name not UTF-8", strings.Replace(changedSetup, `"name": "Booked"`, "\"name\": \"Book\xffed\"", 1),
				[]string{"send_rules[2].name: is not valid UTF-8 text; save the file as UTF-8"}},
			{"Latin-1 account name", strings.Replace(changedSetup, `"Acme Roofing"`, "\"Acme Caf\xe9\"", 1),
				[]string{"account.name: is not valid UTF-8 text"}},
			{"pattern not UTF-8", strings.Replace(changedSetup, `"pattern": "10000"`, "\"pattern\": \"10\xc0\"", 1),
				[]string{"send_rules[0].conditions[0].pattern: is not valid UTF-8 text"}},
			{"bidi override in the account name", strings.Replace(changedSetup, `"Acme Roofing"`, `"Acme \u202egnifooR"`, 1),
				[]string{"account.name: remove the invisible character U+202E"}},
			{"zero-width space in a rule name", strings.Replace(changedSetup, `"name": "Completed leads"`, `"name": "Completed\u200bleads"`, 1),
				[]string{"send_rules[1].name: remove the invisible character U+200B"}},
			{"too many datasets", strings.Replace(changedSetup, `"mode": "dry_run"}]`, `"mode": "dry_run"}`+datasets.String()+`]`, 1),
				[]string{"datasets: use at most 50 datasets, not 51"}},
			{"rules over the cost budget", strings.Replace(changedSetup, `"value": 150}`, `"value": 150}`+costly.String(), 1),
				[]string{"send_rules: the account's enabled rules together would cost"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := b.upload(preview, nil, "acme.json", tt.content)
				wantStatus(t, tt.name, r, http.StatusUnprocessableEntity)
				got := texts(r, "setup-problem")
				if len(got) != len(tt.want) {
					t.Fatalf("problems = %q; want %q", got, tt.want)
				}
				for i := range got {
					if !strings.HasPrefix(got[i], tt.want[i]) {
						t.Errorf("problem %d = %q; want it to start with %q", i, got[i], tt.want[i])
					}
				}
			})
		}
		if got, _ := s.AccountBySlug(t.Context(), "acme"); got.Name != "Acme" {
			t.Errorf("a refused upload renamed the account to %q", got.Name)
		}
	})
}

// TestDatasetFormCap: the Datasets page's form refuses the dataset after
// store.MaxDatasets with an inline error, as the setup file does.
func TestDatasetFormCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a) // Main and Demo
		for i := range store.MaxDatasets - 3 {
			d := models.Dataset{AccountID: acc.ID, Name: fmt.Sprintf("Extra %d", i), PixelID: "123456", Mode: models.ModeDryRun, LDU: models.LDUOff}
			if err := s.CreateDataset(t.Context(), &d); err != nil {
				t.Fatal(err)
			}
		}
		b := a.browser()
		b.login("ada@example.com")
		base := views.AccountURL(acc.ID, "/datasets")
		b.get(base + "/new")
		form := func(name string) url.Values {
			return url.Values{"name": {name}, "pixel_id": {"123456789"}, "mode": {"dry_run"}, "ldu": {"off"}}
		}
		wantStatus(t, "the 50th dataset", b.post(base, form("Fiftieth")), http.StatusSeeOther)
		b.get(base + "/new")
		r := b.post(base, form("Fifty-first"))
		wantStatus(t, "the 51st dataset", r, http.StatusUnprocessableEntity)
		if got := r.text("form-error"); !strings.HasPrefix(got, "An account has at most 50 destinations") {
			t.Errorf("form error = %q; want the limit", got)
		}
		if r.inputValue("name") != "Fifty-first" {
			t.Error("the refused form lost its name")
		}
		if ds, _ := s.Datasets(t.Context(), acc.ID); len(ds) != store.MaxDatasets {
			t.Errorf("the account has %d datasets; want %d", len(ds), store.MaxDatasets)
		}
	})
}

const mappingsSetup = `{
  "account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "USD"},
  "stage_mappings": [
    {"stage": "qualified", "dataset": "Main", "event_name": "QualifiedLead"},
    {"name": "Deals won", "stage": "won", "dataset": "main", "event_name": "Purchase", "value": "from_change", "repeatable": true},
    {"stage": "proposal", "dataset": "Demo", "event_name": "SubmitApplication", "value": 100}
  ]
}`

// TestSetupUploadStageMappings: the preview lists the stage mappings'
// changes in their own section, as it lists the send rules', with the
// stage a mapping adds; the apply makes them, apart from the send rules,
// and the download carries them.
func TestSetupUploadStageMappings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		preview := views.AccountURL(acc.ID, "/settings/setup/preview")

		r := b.upload(preview, nil, "acme.json", mappingsSetup)
		wantStatus(t, "preview", r, http.StatusOK)
		const absent = "not in the file: left as they are"
		if got, want := texts(r, "setup-summary"), []string{"no change", absent, absent, absent, absent, "3 added, 1 stage added", absent, absent, absent}; !slices.Equal(got, want) {
			t.Errorf("section summaries = %q; want %q", got, want)
		}
		changes := texts(r, "setup-change")
		want := []string{
			`created "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main) stage_mappings[0]`,
			`created "Deals won" (stage won: Purchase to Main, value from the stage change, repeatable) stage_mappings[1]`,
			`proposal to SubmitApplication stage: added the stage "proposal" to the account's stages, after "won" stage_mappings[2].stage`,
			`created "proposal to SubmitApplication" (stage proposal: SubmitApplication to Demo, value 100) stage_mappings[2]`,
		}
		if !slices.Equal(changes, want) {
			t.Errorf("preview changes =\n%s\nwant\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
		}
		if r.text("setup-apply") != "Apply 4 changes" {
			t.Errorf("Apply button = %q; want Apply 4 changes", r.text("setup-apply"))
		}
		if ss, _ := s.Stages(ctx, acc.ID); len(ss) != len(store.TemplateStages) {
			t.Errorf("the preview added a stage: %+v", ss)
		}

		r = b.upload(views.AccountURL(acc.ID, "/settings/setup/apply"), applyFields(t, r), "", "")
		wantStatus(t, "apply", r, http.StatusSeeOther)
		rs, err := s.SendRules(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.Name)
		}
		if want := []string{"Completed leads", "Big budgets", "Partial", "qualified to QualifiedLead", "Deals won", "proposal to SubmitApplication"}; !slices.Equal(names, want) {
			t.Errorf("rules = %q; want the send rules kept and the mappings after them", names)
		}
		if won := rs[4]; won.Mode != "stage" || won.Stage != "won" || won.ValueField != models.StageValueFromChange || !won.Repeatable {
			t.Errorf("Deals won = %+v; want the file's mapping", won)
		}

		// Changed, dropped and reordered mappings are listed like rules.
		changed := strings.NewReplacer(`{"stage": "qualified", "dataset": "Main", "event_name": "QualifiedLead"},`, "",
			`"repeatable": true`, `"repeatable": false, "order": 2`, `"value": 100}`, `"value": 100, "order": 1}`).Replace(mappingsSetup)
		r = b.upload(preview, nil, "acme.json", changed)
		wantStatus(t, "second preview", r, http.StatusOK)
		if got := texts(r, "setup-summary")[5]; got != "1 changed, 1 deleted, reordered" {
			t.Errorf("stage mappings summary = %q; want 1 changed, 1 deleted, reordered", got)
		}
		changes = texts(r, "setup-change")
		want = []string{
			`deleted "qualified to QualifiedLead" (stage qualified: QualifiedLead to Main) stage_mappings`,
			`Deals won repeatable: every change → once per lead stage_mappings[0].repeatable`,
			`order "Deals won", "proposal to SubmitApplication" → "proposal to SubmitApplication", "Deals won" stage_mappings`,
		}
		if !slices.Equal(changes, want) {
			t.Errorf("preview changes =\n%s\nwant\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
		}

		// The download carries the mappings, apart from the send rules.
		file := r2body(b, acc)
		f, problems := setup.Decode(strings.NewReader(file))
		if len(problems) > 0 {
			t.Fatalf("the download does not decode: %q", problems)
		}
		if len(f.SendRules) != 3 || len(f.StageMappings) != 3 || f.StageMappings[1].Name != "Deals won" || !f.StageMappings[1].Value.FromChange {
			t.Errorf("download send_rules %+v, stage_mappings %+v; want 3 and 3 apart", f.SendRules, f.StageMappings)
		}
	})
}

// TestSetupUploadCRMConnections: the preview lists the CRM connections'
// changes in their own section; an upload reads no environment variable,
// so a new connection waits for its secret (its hook answers 503 naming
// the variable).
func TestSetupUploadCRMConnections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc := setupAccount(t, a)
		b := a.browser()
		b.login("ada@example.com")
		b.get(views.AccountURL(acc.ID, "/settings"))
		file := `{"account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "USD"},
  "crm_connections": [{"kind": "generic", "name": "Zapier", "secret_env": "ZAPIER_HOOK_SECRET", "stage_ids": {"Won": "won"}}]}`
		r := b.upload(views.AccountURL(acc.ID, "/settings/setup/preview"), nil, "acme.json", file)
		wantStatus(t, "preview", r, http.StatusOK)
		summaries := texts(r, "setup-summary")
		if len(summaries) != 9 || summaries[7] != "1 added" {
			t.Fatalf("section summaries = %q; want the CRM connections': 1 added", summaries)
		}
		var crmChanges []string
		for _, ch := range texts(r, "setup-change") {
			if strings.Contains(ch, "crm_connections") {
				crmChanges = append(crmChanges, ch)
			}
		}
		if len(crmChanges) == 0 || !strings.Contains(strings.Join(crmChanges, "\n"), "Zapier") {
			t.Errorf("CRM changes = %q; want the Zapier connection's", crmChanges)
		}
	})
}
