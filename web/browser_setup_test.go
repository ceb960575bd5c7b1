//go:build browser

package web_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestBrowserSetupFileUpload downloads an account's setup, uploads a
// changed one, reads the preview and applies it; an invalid file shows
// its problems with their JSON paths.
func TestBrowserSetupFileUpload(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc := setupAccount(t, a)
		dir := t.TempDir()
		changed, invalid := filepath.Join(dir, "acme.json"), filepath.Join(dir, "broken.json")
		if err := os.WriteFile(changed, []byte(changedSetup), 0o600); err != nil {
			t.Fatal(err)
		}
		broken := strings.NewReplacer(`"pattern": "10000"`, `"pattern": "(["`, `"match_type": "gt"`, `"match_type": "regex"`,
			`"dataset": "New"`, `"dataset": "Elsewhere"`).Replace(changedSetup)
		if err := os.WriteFile(invalid, []byte(broken), 0o600); err != nil {
			t.Fatal(err)
		}
		settings := a.srv.URL + views.SettingsURL(acc.ID, views.SettingsSetup)
		b := chrome(t)
		b.login(a.srv.URL, "ada@example.com")

		b.do(
			chromedp.Navigate(settings),
			visible(`[data-testid="setup-upload-form"]`),
		)
		// The download link answers the file as an attachment.
		disposition, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](
			`fetch(document.querySelector('[data-testid="setup-download"]').href).then(r => r.headers.get("content-disposition"))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetch the download: %v", err)
		}
		if disposition != `attachment; filename="leadsignal-setup-acme.json"` {
			t.Errorf("download Content-Disposition = %q", disposition)
		}

		// A broken file: its problems, at their paths; nothing changes.
		b.do(
			chromedp.SetUploadFiles(chromedp.CSS(`#f-setup-file`), []string{invalid}),
			click(`[data-testid="setup-upload-form"] button[type="submit"]`),
		)
		b.waitJS("the problems", `document.querySelector('[data-testid="setup-problems"]')`)
		b.do(shot("setup-upload-problems"))
		problems := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="setup-problem"]')].map(li => li.textContent.replace(/\s+/g, " ").trim())`)
		if len(problems) != 2 || !strings.HasPrefix(problems[0], "send_rules[0].conditions[0].pattern:") || !strings.HasPrefix(problems[1], "send_rules[2].dataset:") {
			t.Errorf("problems = %q; want the regex and the dataset, with their paths", problems)
		}

		// The good file, uploaded from the problems page: its preview.
		b.do(
			chromedp.SetUploadFiles(chromedp.CSS(`#f-setup-file`), []string{changed}),
			click(`[data-testid="setup-upload-form"] button[type="submit"]`),
		)
		b.waitJS("the preview", `document.querySelector('[data-testid="setup-apply-form"]')`)
		b.do(shot("setup-upload-preview"))
		summaries := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="setup-summary"]')].map(e => e.textContent.trim())`)
		if want := []string{"2 settings changed", "1 added", "1 signal changed", "1 added, 1 changed, 1 deleted, reordered",
			"not in the file: left as they are", "not in the file: left as they are", "not in the file: left as they are",
			"not in the file: left as they are", "not in the file: left as they are"}; !slices.Equal(summaries, want) {
			t.Errorf("summaries = %q; want %q", summaries, want)
		}
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme" {
			t.Errorf("the preview renamed the account to %q", got.Name)
		}

		b.do(click(`[data-testid="setup-apply"]`))
		b.waitJS("the settings page", `document.querySelector('[data-testid="flash"]') && document.querySelector('[data-testid="setup-upload-form"]')`)
		b.do(shot("setup-upload-applied"))
		if msg := b.text(`[data-testid="flash"]`); msg != "Setup applied: 10 changes." {
			t.Errorf("flash = %q", msg)
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
			t.Errorf("rules after apply = %q", names)
		}
		if got, _ := s.AccountBySlug(ctx, "acme"); got.Name != "Acme Roofing" {
			t.Errorf("account name after apply = %q", got.Name)
		}
	})
}
