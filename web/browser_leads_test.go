//go:build browser

package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// htmxSettled holds once htmx has swapped and settled what it fetched:
// the elements it added then answer to their own hx- attributes. Until
// then (htmx processes new elements after its 20 ms settle delay) a click
// on a new form's button submits it as a plain form, a page load.
const htmxSettled = `!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`

// waitJS polls a JavaScript condition until it is true, on a loaded page
// that htmx has settled, so the next step may click what cond found. It
// survives page loads in between (an evaluation during a navigation just
// fails and is retried), so it can wait for the page a form submit leads
// to.
func (b *tab) waitJS(what, cond string) {
	b.t.Helper()
	poll.Until(b.t, 15*time.Second, func() error {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && `+htmxSettled+` && !!(`+cond+`)`))
		if err == nil && !ok {
			err = errors.New("false")
		}
		if err != nil {
			return fmt.Errorf("browser: %s (%s): %w", what, cond, err)
		}
		return nil
	})
}

// evalJS runs JavaScript and returns its value; it fails the test on error.
func evalJS[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// count is the number of elements matching a CSS selector now.
func (b *tab) count(sel string) int {
	b.t.Helper()
	return evalJS[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// tableCells returns the trimmed text of every cell of a table's body.
func (b *tab) tableCells(sel string) [][]string {
	b.t.Helper()
	return evalJS[[][]string](b, fmt.Sprintf(
		`[...document.querySelectorAll(%q)].map(tr => [...tr.cells].map(c => c.textContent.replace(/\s+/g, " ").trim()))`,
		sel+" tbody tr"))
}

// markNoReload sets a window marker that a page load would wipe.
func markNoReload() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload = true`))
		return err
	})
}

// pageKept says whether the markNoReload marker survived.
func (b *tab) pageKept() bool {
	b.t.Helper()
	return evalJS[bool](b, `window.__noReload === true`)
}

// pick chooses a value of a select as a person would: the change event
// fires, so a filter bar applies it.
func (b *tab) pick(sel, value string) {
	b.t.Helper()
	evalJS[bool](b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
		el.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, sel, value))
}

// shot is screenshot after the page has settled: scrolled to the top (so
// the sticky top bar is not painted mid-page) and painted, since a full-page
// capture right after a load can show parts below the fold unpainted.
func shot(name string) chromedp.Action[chromedp.Void] {
	if os.Getenv("LEADSIGNAL_SCREENSHOTS") == "" {
		return chromedp.Steps()
	}
	return chromedp.Steps(
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0), document.fonts.ready.then(() => new Promise(done =>
				requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done(true), 250)))))`, chromedp.EvalAwaitPromise))
			return err
		}),
		screenshot(name),
	)
}

var leadsHex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestBrowserLeadsKeyFilterAndMark goes from a new ingest key to a won
// lead: the owner creates a key in Settings, two leads arrive with it, and
// the owner filters the list, checks a lead's match keys, marks it junk and
// back, and records a won deal.
func TestBrowserLeadsKeyFilterAndMark(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		acc.DefaultCountry = "US"
		if _, err := s.UpdateAccountSettings(t.Context(), acc); err != nil {
			t.Fatal(err)
		}
		// Won sends a Purchase with the deal's value.
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		won := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "won to Purchase", Mode: "stage", Stage: models.StageWon,
			EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &won, nil); err != nil {
			t.Fatal(err)
		}
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "ada@example.com")

		// An ingest key, created through the Settings form; its secret
		// is shown once.
		b.do(
			chromedp.Navigate(base+"/settings/keys"),
			visible(`[data-testid="key-form"]`),
			typeInto(`#f-key_name`, "Website contact form"),
			click(`[data-testid="key-form"] button[type="submit"]`),
			visible(`[data-testid="new-key-secret"]`),
			shot("leads-settings-key"),
		)
		secret := b.text(`[data-testid="new-key-secret"]`)
		if secret == "" || strings.ContainsAny(secret, " \n") {
			t.Fatalf("new key secret = %q", secret)
		}
		if n := b.count(`[data-testid="keys-table"] tbody tr`); n != 1 {
			t.Errorf("keys table has %d rows after creating a key; want 1", n)
		}

		clean := a.postLead(secret, goodLead)
		bot := a.postLead(secret, `{"email":"bot@example.com","honeypot":"http://spam.example","created_at":"2026-11-30T09:00:00Z"}`)
		if clean.status != http.StatusCreated || clean.Junk {
			t.Fatalf("clean lead with the new key = %d %s", clean.status, clean.raw)
		}
		if bot.status != http.StatusCreated || !bot.Junk {
			t.Fatalf("honeypot lead with the new key = %d %s; want junk", bot.status, bot.raw)
		}

		// The list shows both; the filter form narrows to the junk one
		// and the URL says so, so it can be shared and reloaded.
		b.do(
			chromedp.Navigate(base+"/leads"),
			visible(`[data-testid="leads-table"]`),
			shot("leads-list"),
		)
		if n := b.count(`[data-testid="lead-row"]`); n != 2 {
			t.Fatalf("leads list shows %d rows; want 2", n)
		}
		if got := b.text(`[data-testid="leads-total"]`); got != "2 leads match" {
			t.Errorf("total = %q", got)
		}
		b.pick(`[data-testid="lead-filters"] select[name="junk"]`, "junk")
		b.waitJS("the junk filter", `location.search.includes("junk=junk") && document.querySelectorAll('[data-testid="lead-row"]').length === 1`)
		b.do(visible(`[data-testid="leads-table"]`))
		if n := b.count(`[data-testid="lead-row"]`); n != 1 {
			t.Errorf("junk filter shows %d rows; want 1", n)
		}
		if row := b.text(`[data-testid="lead-row"]`); !strings.Contains(row, "bot@example.com") || !strings.Contains(row, "junk") {
			t.Errorf("junk row = %q; want the honeypot lead with its badge", row)
		}
		if v := b.value(`[data-testid="lead-filters"] select[name="junk"]`); v != "junk" {
			t.Errorf("junk select after filtering = %q; want it kept", v)
		}
		if loc := b.location(); !strings.Contains(loc, "junk=junk") {
			t.Errorf("filtered URL = %q; want junk=junk", loc)
		}
		// Clear the filter again through the form.
		b.pick(`[data-testid="lead-filters"] select[name="junk"]`, "")
		b.waitJS("the cleared filter", `!location.search.includes("junk=junk") && document.querySelectorAll('[data-testid="lead-row"]').length === 2`)
		b.do(visible(`[data-testid="leads-table"]`))
		if n := b.count(`[data-testid="lead-row"]`); n != 2 {
			t.Errorf("after clearing the filter the list shows %d rows; want 2", n)
		}

		// The clean lead is the newest: open it from the list.
		b.do(
			click(`#lead-rows tr[data-testid="lead-row"]:first-child a`),
			visible(`[data-testid="keys"] summary`),
			click(`[data-testid="keys"] summary`),
			visible(`[data-testid="match-keys"]`),
			shot("leads-lead"),
		)
		if title := b.text(`[data-testid="lead-title"]`); title != "Jane Doe" {
			t.Fatalf("opened lead %q; want Jane Doe", title)
		}
		if loc := b.location(); !strings.HasSuffix(loc, "/leads/"+itoa(clean.LeadID)) {
			t.Errorf("lead page URL = %q; want lead %d", loc, clean.LeadID)
		}
		var phone []string
		for _, row := range b.tableCells(`[data-testid="match-keys"]`) {
			if len(row) == 3 && strings.HasPrefix(row[0], "ph ") {
				phone = row
			}
		}
		if phone == nil {
			t.Fatalf("no ph row in the match keys: %v", b.tableCells(`[data-testid="match-keys"]`))
		}
		if phone[1] != "14156924281" || !leadsHex64.MatchString(phone[2]) || phone[2] != normalize.Hash("14156924281") {
			t.Errorf("ph row = %q; want 14156924281 and its SHA-256", phone)
		}
		if missing := b.text(`[data-testid="missing-keys"]`); !strings.HasPrefix(missing, "Missing:") || !strings.Contains(missing, "fbp") {
			t.Errorf("missing keys line = %q; want fbp listed", missing)
		}
		if got := b.text(`[data-testid="lead-junk"]`); got != "not junk" {
			t.Errorf("junk badge before marking = %q", got)
		}

		// Junk, then not junk again: each says what it does.
		b.do(
			click(`[data-testid="mark-junk"]`),
			visible(`[data-testid="flash"]`),
			visible(`[data-testid="mark-not-junk"]`),
		)
		if msg := b.text(`[data-testid="flash"]`); !strings.Contains(msg, "Marked as junk") {
			t.Errorf("flash after Junk = %q", msg)
		}
		if got := b.text(`[data-testid="lead-junk"]`); got != "junk" {
			t.Errorf("junk badge after marking = %q; want junk", got)
		}
		if cls := evalJS[string](b, `document.querySelector('[data-testid="lead-junk"]').className`); !strings.Contains(cls, "bad") {
			t.Errorf("junk badge class = %q; want bad", cls)
		}
		b.do(
			click(`[data-testid="mark-not-junk"]`),
			visible(`[data-testid="mark-junk"]`),
		)
		if got := b.text(`[data-testid="lead-junk"]`); got != "not junk" {
			t.Errorf("junk badge after Not junk = %q", got)
		}
		if msg := b.text(`[data-testid="flash"]`); !strings.Contains(msg, "not junk") {
			t.Errorf("flash after Not junk = %q", msg)
		}

		// Won needs a value: the form comes back with the choice kept.
		b.do(
			setValue(`#f-stage`, "won"),
			click(`[data-testid="stage-form"] button[type="submit"]`),
			visible(`[data-testid="error-value"]`),
			shot("leads-lead-won-error"),
		)
		if msg := b.text(`[data-testid="error-value"]`); !strings.Contains(msg, "value") {
			t.Errorf("won without value error = %q", msg)
		}
		if v := b.value(`#f-stage`); v != "won" {
			t.Errorf("stage after the error = %q; want won kept", v)
		}
		b.do(
			typeInto(`#f-value`, "1200"),
			setValue(`#f-currency`, "EUR"),
			click(`[data-testid="stage-form"] button[type="submit"]`),
			visible(`[data-testid="flash"]`),
			visible(`[data-testid="timeline-stage"]`),
			shot("leads-lead-won"),
		)
		if got := b.text(`[data-testid="lead-stage"]`); got != "won" {
			t.Errorf("stage after won = %q", got)
		}
		if msg := b.text(`[data-testid="flash"]`); !strings.Contains(msg, "Queued Purchase.") {
			t.Errorf("flash after won = %q; want the Purchase it queued named", msg)
		}
		if v := b.value(`#f-stage`); v != "won" {
			t.Errorf("stage select after won = %q; want the lead's stage", v)
		}
		if got := b.text(`[data-testid="lead-rules"]`); strings.Contains(got, "won to Purchase") {
			t.Errorf("the lead's send rules list the stage mapping: %q", got)
		}
		stages := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="timeline-stage"] .what')].map(e => e.textContent.replace(/\s+/g, " ").trim())`)
		if want := []string{"Marked junk by ada@example.com", "Marked not junk by ada@example.com", "Stage: won 1200.00 EUR by ada@example.com"}; !slices.Equal(stages, want) {
			t.Errorf("stage changes in the timeline = %q; want %q", stages, want)
		}
	})
}

// TestBrowserLeadsLoadMore appends the next page of leads in place.
func TestBrowserLeadsLoadMore(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		for i := range 60 {
			r := a.postLead(key, fmt.Sprintf(`{"email":"user%02d@example.com","created_at":"2026-11-30T%02d:%02d:00Z"}`, i, i/60, i%60))
			if r.status != http.StatusCreated {
				t.Fatalf("lead %d: %d %s", i, r.status, r.raw)
			}
		}
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")
		b.do(
			chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/leads"),
			visible(`[data-testid="load-more"]`),
			markNoReload(),
		)
		if n := b.count(`[data-testid="lead-row"]`); n != 50 {
			t.Fatalf("first page shows %d rows; want 50", n)
		}
		if got := b.text(`[data-testid="leads-total"]`); got != "60 leads match" {
			t.Errorf("total = %q", got)
		}
		b.do(click(`[data-testid="load-more"]`))
		b.waitJS("60 rows", `document.querySelectorAll('[data-testid="lead-row"]').length === 60`)
		if n := b.count(`[data-testid="load-more"]`); n != 0 {
			t.Errorf("%d load-more links after the last page; want none", n)
		}
		if !b.pageKept() {
			t.Error("Load more reloaded the page; want an htmx swap")
		}
		if loc := b.location(); strings.Contains(loc, "after=") {
			t.Errorf("URL after Load more = %q; want the list's own", loc)
		}
		// Rows stay in one table, oldest last, none twice.
		emails := evalJS[[]string](b, `[...document.querySelectorAll('#lead-rows [data-testid="lead-row"] [data-testid="lead-email"]')].map(td => td.textContent.trim())`)
		seen := map[string]bool{}
		for _, e := range emails {
			seen[e] = true
		}
		if len(emails) != 60 || len(seen) != 60 || emails[0] != "user59@example.com" || emails[59] != "user00@example.com" {
			t.Errorf("rows after Load more: %d in the table, %d distinct: %q", len(emails), len(seen), emails)
		}
		b.do(shot("leads-list-more"))
	})
}

// TestBrowserLeadsJunkSettings edits the junk signals: a bad threshold
// comes back inline with what was typed, a good one is saved.
func TestBrowserLeadsJunkSettings(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		b := chrome(t)
		b.login(a.srv.URL, "ada@example.com")
		const (
			honeypot  = `[data-testid="junk-form"] input[name="enabled_honeypot"]`
			threshold = `#f-threshold_too_fast`
			save      = `[data-testid="junk-form"] button[type="submit"]`
		)
		b.do(
			chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/settings/junk"),
			visible(`[data-testid="junk-form"]`),
		)
		if !evalJS[bool](b, `document.querySelector('`+honeypot+`').checked`) {
			t.Fatal("honeypot starts unchecked; want on by default")
		}
		// The threshold is a text input, so what was typed survives an error.
		b.do(
			click(honeypot),
			chromedp.Clear(chromedp.CSS(threshold)),
			typeInto(threshold, "abc"),
			click(save),
			visible(`[data-testid="error-threshold_too_fast"]`),
			shot("leads-junk-error"),
		)
		if msg := b.text(`[data-testid="error-threshold_too_fast"]`); msg != "Enter a number." {
			t.Errorf("threshold error = %q", msg)
		}
		if v := b.value(threshold); v != "abc" {
			t.Errorf("threshold after the error = %q; want abc kept", v)
		}
		if evalJS[bool](b, `document.querySelector('`+honeypot+`').checked`) {
			t.Error("honeypot switched back on after the error; want the unchecked box kept")
		}

		// Out of range: what was typed stays in the field.
		b.do(
			chromedp.Clear(chromedp.CSS(threshold)),
			typeInto(threshold, "75"),
			click(save),
		)
		b.waitJS("the range error", `(document.querySelector('[data-testid="error-threshold_too_fast"]')?.textContent || "") !== "Enter a number."`)
		if msg := b.text(`[data-testid="error-threshold_too_fast"]`); msg == "" {
			t.Error("no error for a 75 s threshold")
		}
		if v := b.value(threshold); v != "75" {
			t.Errorf("threshold after the range error = %q; want 75 kept", v)
		}

		b.do(
			chromedp.Clear(chromedp.CSS(threshold)),
			typeInto(threshold, "5"),
			click(save),
			visible(`[data-testid="junk-saved"]`),
			shot("leads-junk-saved"),
		)
		if msg := b.text(`[data-testid="junk-saved"]`); !strings.Contains(msg, "Junk signals saved") {
			t.Errorf("flash after saving = %q", msg)
		}
		if v := b.value(threshold); v != "5" {
			t.Errorf("threshold shown after saving = %q; want 5", v)
		}
		if evalJS[bool](b, `document.querySelector('`+honeypot+`').checked`) {
			t.Error("honeypot shown on after saving it off")
		}

		got, err := a.store.AccountBySlug(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		var saved junk.Settings
		if err := json.Unmarshal([]byte(got.JunkSettings), &saved); err != nil {
			t.Fatalf("junk settings %q: %v", got.JunkSettings, err)
		}
		if saved[junk.Honeypot].Enabled || !saved[junk.TooFast].Enabled || saved[junk.TooFast].Threshold != 5 {
			t.Errorf("saved junk settings = %s; want honeypot off and too_fast at 5", got.JunkSettings)
		}
	})
}

// TestBrowserLeadsViewer lets a sales member see leads and mark a stage,
// without the owner's Settings. (Viewers marked stages until the sales
// role; a viewer now only reads: TestRolesAllowAndRefuse.)
func TestBrowserLeadsViewer(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, key := a.ingestAccount("acme", "US")
	viewer := a.user("vic@example.com", false)
	if err := a.store.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleSales); err != nil {
		t.Fatal(err)
	}
	// A manual rule the lead matches: its Send button is for editors.
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := a.store.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	manual := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Hand picked", Mode: "manual", EventName: "Contact",
		Combinator: "and", Conditions: `[]`, Enabled: true}
	if err := a.store.CreateSendRule(t.Context(), &manual, nil); err != nil {
		t.Fatal(err)
	}
	lead := a.postLead(key, goodLead)
	if lead.status != http.StatusCreated {
		t.Fatalf("post lead = %d %s", lead.status, lead.raw)
	}
	base := a.srv.URL + "/accounts/" + itoa(acc.ID)
	b := chrome(t)
	b.login(a.srv.URL, "vic@example.com")
	b.do(
		chromedp.Navigate(base),
		visible(`nav.account-nav`),
	)
	nav := evalJS[[]string](b, `[...document.querySelectorAll('nav.account-nav a')].map(a => a.textContent.trim())`)
	if !slices.Contains(nav, "Overview") || !slices.Contains(nav, "Leads") || slices.Contains(nav, "Settings") {
		t.Errorf("viewer's account nav = %q; want Overview and Leads, no Settings", nav)
	}
	if n := b.count(`a[href$="/settings"], a[href*="/settings#"]`); n != 0 {
		t.Errorf("viewer sees %d links to Settings; want none", n)
	}

	b.do(
		click(`nav.account-nav a[href$="/leads"]`),
		visible(`[data-testid="leads-table"]`),
		click(`#lead-rows tr[data-testid="lead-row"]:first-child a`),
		visible(`[data-testid="stage-form"]`),
	)
	if title := b.text(`[data-testid="lead-title"]`); title != "Jane Doe" {
		t.Fatalf("viewer opened %q; want Jane Doe", title)
	}
	if n, junk := b.count(`[data-testid="send-manual"]`), b.count(`[data-testid="mark-junk"]`); n != 0 || junk != 1 {
		t.Errorf("viewer sees %d Send buttons and %d junk buttons; want the stage buttons only", n, junk)
	}
	if rules := b.text(`[data-testid="lead-rules"]`); !strings.Contains(rules, "Hand picked") {
		t.Errorf("viewer's rules section %q; want the manual rule's verdict", rules)
	}
	b.do(
		setValue(`#f-stage`, "qualified"),
		click(`[data-testid="stage-form"] button[type="submit"]`),
		visible(`[data-testid="flash"]`),
		visible(`[data-testid="lead-stage"]`),
		shot("leads-viewer-lead"),
	)
	if got := b.text(`[data-testid="lead-stage"]`); got != "qualified" {
		t.Errorf("stage after the viewer marked it = %q; want qualified", got)
	}
	if stages := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="timeline-stage"] .what')].map(e => e.textContent.replace(/\s+/g, " ").trim())`); len(stages) != 1 || stages[0] != "Stage: qualified by vic@example.com" {
		t.Errorf("stage changes in the timeline = %q; want one qualified by vic@example.com", stages)
	}

	// The settings page stays closed even when typed in.
	b.do(chromedp.Navigate(base + "/settings"))
	b.waitJS("the settings answer", `location.pathname.endsWith("/settings")`)
	if n := b.count(`[data-testid="settings-form"], [data-testid="key-form"]`); n != 0 {
		t.Error("a viewer can open the settings page")
	}
}
