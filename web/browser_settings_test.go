//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestBrowserSettingsSections opens every settings section at 1280 and
// 390 px: none is wider than the screen, each shows its own form under the
// tabs, the junk signals' phrase boxes are a few lines high and their
// numbers a few characters wide, and a new key has a button that copies it.
func TestBrowserSettingsSections(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acc := a.account("acme", ada)
		for _, email := range []string{"a.very.long.address.of.an.editor@subsidiary.example.com", "vic@example.com"} {
			m := a.user(email, false)
			if err := s.SetMember(t.Context(), acc.ID, m.ID, models.RoleEditor); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.CreateIngestKey(t.Context(), acc.ID, "Website contact form on the main marketing site"); err != nil {
			t.Fatal(err)
		}
		b := chrome(t)
		b.login(a.srv.URL, "ada@example.com")

		for _, sec := range settingsSections {
			url := a.srv.URL + views.SettingsURL(acc.ID, sec.section)
			b.eachWidth("settings-"+sec.section, url, `[data-testid="`+sec.testid+`"]`, func(width int64) {
				if n := b.count(`[data-testid="settings-nav"] a`); n != len(settingsSections) {
					t.Errorf("%s at %d px: %d tabs; want %d", sec.section, width, n, len(settingsSections))
				}
				b.above(sec.section+" tabs before the form", `[data-testid="settings-nav"]`, `[data-testid="`+sec.testid+`"]`)
				if h := evalJS[float64](b, `document.documentElement.scrollHeight`); h > 2600 {
					t.Errorf("%s at %d px is %.0f px high; want a section, not every section", sec.section, width, h)
				}
				switch sec.section {
				case views.SettingsJunk:
					if h := evalJS[float64](b, `Math.max(...[...document.querySelectorAll("textarea.phrases")].map(e => e.getBoundingClientRect().height))`); h < 100 || h > 300 {
						t.Errorf("phrase box at %d px is %.0f px high; want about 8 lines", width, h)
					}
					if w := evalJS[float64](b, `document.querySelector("#f-threshold_too_fast").getBoundingClientRect().width`); w > 130 {
						t.Errorf("threshold input at %d px is %.0f px wide; want a few characters", width, w)
					}
				case views.SettingsKeys, views.SettingsMembers:
					b.oneLineRows(sec.section, `.settings table.list`)
				}
			})
		}

		// A new key's secret has a copy button naming its element.
		b.do(
			chromedp.Navigate(a.srv.URL+views.SettingsURL(acc.ID, views.SettingsKeys)),
			visible(`[data-testid="key-form"]`),
			typeInto(`#f-key_name`, "HubSpot"),
			click(`[data-testid="key-form"] button[type="submit"]`),
			visible(`[data-testid="new-key-secret"]`),
			chromedp.EmulateViewport(390, 900),
		)
		b.fits("a new key at 390 px")
		b.do(shot("settings-new-key-390"), chromedp.EmulateViewport(1280, 900))
		if got, want := evalJS[string](b, `document.getElementById(document.querySelector('[data-testid="new-key"] button.copy').dataset.copy).textContent`), b.text(`[data-testid="new-key-secret"]`); got != want || !strings.HasPrefix(want, "lsk_") {
			t.Errorf("the copy button copies %q; want the key %q", got, want)
		}
	})
}

// TestBrowserInvite: an owner invites a new email on Members, copies the
// link shown; in another browser the person opens it, chooses a password
// and lands in the account as an editor.
func TestBrowserInvite(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	ada := a.user("ada@example.com", false)
	acc := a.account("acme", ada)
	owner := chrome(t)
	owner.login(a.srv.URL, "ada@example.com")
	owner.do(
		chromedp.Navigate(a.srv.URL+views.SettingsURL(acc.ID, views.SettingsMembers)),
		visible(`[data-testid="member-form"]`),
		typeInto(`#f-email`, "new.editor@example.com"),
		setValue(`#f-role`, "editor"),
		click(`[data-testid="member-form"] button[type="submit"]`),
		visible(`[data-testid="new-password-link-url"]`),
		chromedp.EmulateViewport(390, 900),
	)
	owner.fits("members with a new link at 390 px")
	owner.do(shot("settings-invite-link-390"), chromedp.EmulateViewport(1280, 900), shot("settings-invite-link-1280"))
	link := owner.text(`[data-testid="new-password-link-url"]`)
	if !strings.HasPrefix(link, a.srv.URL+"/set-password?token=") {
		t.Fatalf("link = %q", link)
	}
	if got := evalJS[string](owner, `document.getElementById(document.querySelector('[data-testid="new-password-link"] button.copy').dataset.copy).textContent`); got != link {
		t.Errorf("the copy button copies %q; want the link", got)
	}
	if !strings.Contains(owner.text(`[data-testid="members-table"]`), "new.editor@example.com") {
		t.Error("the invited person is not in the members list")
	}

	// Another browser: the invited person has no session of the owner's.
	p := chrome(t)
	p.do(
		chromedp.EmulateViewport(390, 900),
		chromedp.Navigate(link),
		visible(`[data-testid="set-password-form"]`),
	)
	p.fits("set password at 390 px")
	p.do(
		shot("set-password-390"),
		typeInto(`#f-password`, "a-good-password"),
		typeInto(`#f-confirm`, "another-password"),
		click(`[data-testid="set-password-form"] button[type="submit"]`),
		visible(`[data-testid="error-confirm"]`),
		shot("set-password-error-390"),
		typeInto(`#f-password`, "a-good-password"),
		typeInto(`#f-confirm`, "a-good-password"),
		click(`[data-testid="set-password-form"] button[type="submit"]`),
		visible(`[data-testid="user-menu"]`),
	)
	p.waitJS("the account's overview", `location.pathname === "/accounts/`+itoa(acc.ID)+`"`)
	// An editor sets the account up: Rules and Settings, not the members.
	if p.count(`[data-testid="nav-rules"]`) != 1 || p.count(`nav.account-nav a[href$="/settings"]`) != 1 {
		t.Error("the invited person does not see the account as an editor (Rules and Settings)")
	}
	p.do(shot("invited-overview-390"))

	// The link worked once.
	p.do(chromedp.Navigate(link), visible(`[data-testid="link-gone"]`))
	if h := p.text(`[data-testid="link-gone"] h1`); h != "This link does not work" {
		t.Errorf("the used link says %q", h)
	}
	p.fits("a used link at 390 px")
	p.do(shot("link-gone-390"))
}
