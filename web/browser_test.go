//go:build browser

package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// chromeSlots bounds how many tests drive Chromium at once. Browser tests
// run in parallel with the others, and a Chromium keeps most of a core
// busy: on the 2-core CI machine two at once finish the package soonest,
// and four made pages miss the 15 s their waits allow. go test -parallel
// above 2 still runs more of the other tests at once.
var (
	chromeSlots   = make(chan struct{}, 2)
	chromeHolders sync.Map // the *testing.T that hold a slot
)

// takeChromeSlot waits for a slot for t, which keeps it until it ends; a
// test that opens a second Chromium (two users) already has its slot.
func takeChromeSlot(t *testing.T) {
	if _, held := chromeHolders.LoadOrStore(t, true); held {
		return
	}
	chromeSlots <- struct{}{}
	t.Cleanup(func() {
		chromeHolders.Delete(t)
		<-chromeSlots
	})
}

// chrome starts headless Chromium for one test, once a slot is free (see
// chromeSlots). Without a Chromium the test is skipped, or fails under
// CI=true so CI cannot pass without it.
func chrome(t *testing.T) *tab {
	t.Helper()
	return chromeFor(t, 90*time.Second)
}

// chromeFor is chrome for a test that may drive it for up to d, such as
// one that walks every page.
func chromeFor(t *testing.T, d time.Duration) *tab {
	t.Helper()
	path := os.Getenv("LEADSIGNAL_CHROME")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found: CI must run the browser tests (use make test)")
		}
		t.Skip("no Chromium found; set LEADSIGNAL_CHROME or run make test")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
	}
	takeChromeSlot(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return &tab{t: t, ctx: ctx}
}

// tab drives one browser tab; each method fails the test on error.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *tab) value(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("browser: value of %s: %v", sel, err)
	}
	return s
}

func (b *tab) location() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("browser: location: %v", err)
	}
	return s
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
func typeInto(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}
func setValue(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.CSS(sel), v)
}

// login logs in through the form.
func (b *tab) login(base, email string) {
	b.t.Helper()
	b.do(
		chromedp.Navigate(base+"/login"),
		visible(`[data-testid="login-form"]`),
		typeInto(`#f-email`, email),
		typeInto(`#f-password`, "password123"),
		click(`[data-testid="login-form"] button[type="submit"]`),
		visible(`[data-testid="user-menu"]`),
	)
}

// screenshot saves a PNG of the page when LEADSIGNAL_SCREENSHOTS names a
// folder, for people to look at the pages.
func screenshot(name string) chromedp.Action[chromedp.Void] {
	dir := os.Getenv("LEADSIGNAL_SCREENSHOTS")
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if dir == "" {
			return nil
		}
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}

func TestBrowserSetupLoginAccountsSwitchLogout(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		b := chrome(t)
		base := a.srv.URL

		// A bad first try keeps the email and explains the problem.
		b.do(
			chromedp.Navigate(base+"/"),
			visible(`[data-testid="setup-form"]`),
			screenshot("setup"),
			typeInto(`#f-email`, "ada@example.com"),
			typeInto(`#f-password`, "short"),
			typeInto(`#f-confirm`, "short"),
			click(`[data-testid="setup-form"] button[type="submit"]`),
			visible(`[data-testid="error-password"]`),
			screenshot("setup-error"),
		)
		if msg := b.text(`[data-testid="error-password"]`); !strings.Contains(msg, "10 characters") {
			t.Errorf("password error = %q", msg)
		}
		if v := b.value(`#f-email`); v != "ada@example.com" {
			t.Errorf("email after a failed setup = %q; want what was typed", v)
		}
		// Passwords that differ are said on the repeat, the email kept.
		b.do(
			typeInto(`#f-password`, "password123"),
			typeInto(`#f-confirm`, "password124"),
			click(`[data-testid="setup-form"] button[type="submit"]`),
			visible(`[data-testid="error-confirm"]`),
			screenshot("setup-mismatch"),
		)
		if msg := b.text(`[data-testid="error-confirm"]`); msg != "The passwords do not match." {
			t.Errorf("confirmation error = %q", msg)
		}
		if e, pw, c := b.value(`#f-email`), b.value(`#f-password`), b.value(`#f-confirm`); e != "ada@example.com" || pw != "" || c != "" {
			t.Errorf("after passwords that differ: email %q, passwords %q %q; want the email kept, the passwords empty", e, pw, c)
		}
		b.do(
			typeInto(`#f-password`, "password123"),
			typeInto(`#f-confirm`, "password123"),
			click(`[data-testid="setup-form"] button[type="submit"]`),
			visible(`[data-testid="accounts-empty"]`),
			// Log out, and back in through the login form.
			click(`[data-testid="user-menu"]`),
			click(`[data-testid="logout"]`),
			visible(`[data-testid="login-form"]`),
			screenshot("login"),
		)
		b.login(base, "ada@example.com")
		b.do(visible(`[data-testid="accounts-empty"]`))

		// Two accounts, created through the form.
		for _, name := range []string{"Acme Dental", "Bright Roofing"} {
			b.do(
				chromedp.Navigate(base+"/accounts/new"),
				visible(`[data-testid="account-form"]`),
				typeInto(`#f-name`, name),
				setValue(`#f-default_country`, "US"),
				click(`[data-testid="account-form"] button[type="submit"]`),
				visible(`[data-testid="getting-started"]`),
			)
			if h := b.text(`[data-testid="account-switcher"]`); h != name {
				t.Errorf("after creating %s the switcher shows %q", name, h)
			}
		}
		acme, err := s.AccountBySlug(t.Context(), "acme-dental")
		if err != nil {
			t.Fatal(err)
		}

		// Switch from Bright Roofing to Acme Dental through the top bar.
		b.do(
			screenshot("overview"),
			click(`[data-testid="account-switcher"]`),
			// The list loads as the switcher opens.
			visible(`.account-switcher [data-testid="switch-account"][aria-current="true"]`),
			screenshot("switcher-open"),
			chromedp.EmulateViewport(390, 844),
			visible(`.account-switcher [data-testid="switch-account"][aria-current="true"]`),
			screenshot("switcher-open-390"),
			chromedp.EmulateViewport(1280, 900),
			click(`.account-switcher a[href="/accounts/`+itoa(acme.ID)+`"]`),
			visible(`[data-testid="getting-started"]`),
		)
		if h, cur := b.text(`h1`), b.text(`[data-testid="account-switcher"]`); h != "Overview" || cur != "Acme Dental" {
			t.Errorf("after switching: heading %q, switcher %q; want Overview of Acme Dental", h, cur)
		}
		b.do(
			chromedp.Navigate(base+"/accounts"),
			visible(`[data-testid="accounts-table"]`),
			screenshot("accounts"),
		)

		// Log out: the account pages are closed again.
		b.do(
			click(`[data-testid="user-menu"]`),
			click(`[data-testid="logout"]`),
			visible(`[data-testid="login-form"]`),
			chromedp.Navigate(base+"/accounts/"+itoa(acme.ID)),
			visible(`[data-testid="login-form"]`),
		)
		if loc := b.location(); !strings.Contains(loc, "/login") {
			t.Errorf("after logout the account page ends at %q; want the login page", loc)
		}
	})
}

// TestBrowserSettingsHTMX saves settings through htmx: errors swap in
// inline and keep what was typed; a good save says so without a reload.
func TestBrowserSettingsHTMX(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	owner := a.user("ada@example.com", false)
	acc := a.account("acme", owner)
	b := chrome(t)
	b.login(a.srv.URL, "ada@example.com")
	b.do(
		chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/settings"),
		visible(`[data-testid="settings-form"]`),
		// A marker on the page proves the save did not reload it.
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload = true`))
			return err
		}),
		setValue(`#f-timezone`, "Mars/Olympus"),
		setValue(`#f-crm_name`, "HubSpot"),
		click(`[data-testid="settings-form"] button[type="submit"]`),
		visible(`[data-testid="error-timezone"]`),
		screenshot("settings-error"),
	)
	if msg := b.text(`[data-testid="error-timezone"]`); !strings.Contains(msg, "IANA") {
		t.Errorf("timezone error = %q", msg)
	}
	if v := b.value(`#f-timezone`); v != "Mars/Olympus" {
		t.Errorf("timezone after the error = %q; want what was typed", v)
	}
	b.do(
		setValue(`#f-timezone`, "Europe/Berlin"),
		click(`[data-testid="settings-form"] button[type="submit"]`),
		visible(`[data-testid="settings-flash"]`),
		screenshot("settings"),
	)
	if msg := b.text(`[data-testid="settings-flash"]`); msg != "Settings saved." {
		t.Errorf("save said %q", msg)
	}
	kept, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`window.__noReload === true`))
	if err != nil || !kept {
		t.Errorf("the page reloaded on save (marker %v, %v); want an htmx swap", kept, err)
	}
	got, _ := a.store.AccountBySlug(t.Context(), "acme")
	if got.Timezone != "Europe/Berlin" || got.CRMName != "HubSpot" {
		t.Errorf("saved account = %+v", got)
	}
}
