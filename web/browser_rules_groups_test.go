//go:build browser

package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserRulesBuildGroup builds "(Paris OR gmail) AND not junk" in the
// form: a condition, then a group added in place with two conditions
// joined by OR. The live preview counts as it grows and shows the group's
// cut; saved, the rule keeps its group; the page fits a phone.
func TestBrowserRulesBuildGroup(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f) // ann Berlin, bob Berlin gmail, cy Paris, a junk, a partial, an old one
		b := chrome(t)
		b.login(f.a.srv.URL, "acme-owner@example.com")
		for _, width := range []int64{1280, 390} {
			b.do(
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(f.a.srv.URL+f.url("/new")),
				visible(`[data-testid="rule-form"]`),
				markNoReload(),
				typeInto(`#f-name`, "Paris or gmail, clean"),
				fill(`#f-event_name`, "QualifiedLead"),
			)
			if width == 1280 && evalJS[bool](b, `!!document.querySelector('[data-testid="rule-warning"]')`) {
				t.Error("a new rule warns before its event name is chosen")
			}
			first := `#conditions [data-testid="condition-row"]:nth-child(1)`
			b.pickCond(first, "cond_field", "junk")
			b.do(fill(first+` select[name="cond_pattern"]`, "false"))
			b.previewSays("3") // ann, bob, cy: every lead that is not junk

			b.do(click(`[data-testid="add-group"]`))
			b.waitJS("a group", `document.querySelectorAll('[data-testid="condition-group"]').length === 1`)
			row := func(n string) string { return `#condition-groups [data-testid="condition-row"]:nth-child(` + n + `)` }
			b.pickCond(row("1"), "cond_field", "city")
			b.do(fill(row("1")+` input[name="cond_pattern"]`, "paris"))
			b.previewSays("1")
			b.do(click(`[data-testid="add-group-condition"]`))
			b.waitJS("a second row in the group", `document.querySelectorAll('#condition-groups [data-testid="condition-row"]').length === 2`)
			b.pickCond(row("2"), "cond_field", "email_domain")
			b.do(fill(row("2")+` input[name="cond_pattern"]`, "gmail.com"))
			b.previewSays("2")
			if got := b.text(`[data-testid="preview-group-rules-out"]`); got != "1" {
				t.Errorf("at %d px the group rules out %q; want 1 (ann)", width, got)
			}
			if !b.pageKept() {
				t.Errorf("at %d px building the group reloaded the page", width)
			}
			if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > int(width) {
				t.Errorf("at %d px the page is %d px wide", width, w)
			}
			b.do(screenshot("rules-group-"+itoa(width)),
				elementShot(`[data-testid="conditions"]`, "rules-group-conditions-"+itoa(width)),
				elementShot(`[data-testid="preview-conditions"]`, "rules-group-preview-"+itoa(width)))
			if width == 390 {
				break // saved once, at 1280
			}
			b.do(click(`[data-testid="save-rule"]`))
			b.waitJS("the saved rule's page", `!!document.querySelector('[data-testid="rule-title"]')`)
			b.previewSays("2")
			rules, err := s.SendRules(t.Context(), f.acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := rule.SpecOf(rules[len(rules)-1])
			if got, want := spec.Text(), `Junk is false AND (City is "paris" OR Email domain is "gmail.com")`; got != want {
				t.Errorf("saved rule %q; want %q", got, want)
			}
			if n := evalJS[int](b, `document.querySelectorAll('[data-testid="condition-group"] [data-testid="condition-row"]').length`); n != 2 {
				t.Errorf("the saved rule's form shows %d rows in its group; want 2", n)
			}
		}
		b.do(chromedp.EmulateViewport(1280, 900))
	})
}

// elementShot saves a PNG of one element when LEADSIGNAL_SCREENSHOTS
// names a folder: a part of a long page, at its real size.
func elementShot(sel, name string) chromedp.Action[chromedp.Void] {
	dir := os.Getenv("LEADSIGNAL_SCREENSHOTS")
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if dir == "" {
			return nil
		}
		buf, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}
