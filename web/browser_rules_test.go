//go:build browser

package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/web"
)

// fill sets an input's or a select's value as a person would, firing the
// input and change events htmx listens to.
func fill(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		js := fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
			el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return true })()`, sel, value)
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return err
	})
}

// pickCond chooses value in the select name (cond_field or cond_match_type)
// of the condition row rowSel, and waits for the row to come back fitted
// to it: the row is fetched again as its field or match type changes.
func (b *tab) pickCond(rowSel, name, value string) {
	b.t.Helper()
	evalJS[bool](b, fmt.Sprintf(`(document.querySelector(%q).dataset.old = "1", true)`, rowSel))
	sel := rowSel + ` select[name="` + name + `"]`
	// htmx listens to a row swapped in once it has settled.
	b.waitJS("htmx to listen to "+sel, fmt.Sprintf(`(() => { const s = document.querySelector(%q);
		return !!s && ((s["htmx-internal-data"] || {}).listenerInfos || []).length > 0 })()`, sel))
	b.do(fill(sel, value))
	b.waitJS("the condition row fitted to "+value, fmt.Sprintf(`(() => { const r = document.querySelector(%q);
		return !!r && !r.dataset.old && r.querySelector('select[name="%s"]').value === %q })()`, rowSel, name, value))
}

// previewSays waits until the live preview has counted want matches.
func (b *tab) previewSays(want string) {
	b.t.Helper()
	b.waitJS("the preview to count "+want, fmt.Sprintf(
		`(document.querySelector('[data-testid="preview-matched"]') || {}).textContent === %q`, want))
}

// TestBrowserRulesBuildPreviewSave builds a two-condition OR rule in the
// form, watches the live preview count as a condition is added in place,
// saves it, and checks that capture then queues its event for a lead that
// matches and not for one that does not.
func TestBrowserRulesBuildPreviewSave(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		// A week of leads: Berlin with a big budget, Berlin with a small
		// one, Paris with a big one, Paris with a small one.
		for i, l := range []struct{ city, budget string }{{"Berlin", "9000"}, {"Berlin", "100"}, {"Paris", "9000"}, {"Paris", "100"}} {
			r := a.postLead(key, ruleLead(i+1, fmt.Sprintf("lead%d@acme-roofing.com", i+1), l.city, l.budget,
				fmt.Sprintf("2026-11-%02dT10:00:00Z", 30-i), nil))
			if r.status != http.StatusCreated || r.Junk {
				t.Fatalf("lead %d: %d %s", i+1, r.status, r.raw)
			}
		}
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		// A rule with a bad regular expression: the preview shows the
		// problem instead of numbers, and saving keeps what was typed
		// with the error at the pattern.
		b.do(
			chromedp.Navigate(base+"/rules/new"),
			visible(`[data-testid="rule-form"]`),
			typeInto(`#f-name`, "Roofers"),
		)
		b.pickCond(`[data-testid="condition-row"]`, "cond_field", "message")
		b.pickCond(`[data-testid="condition-row"]`, "cond_match_type", "regex")
		b.do(
			fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "roof(ing"),
		)
		b.waitJS("the preview's problems", `!!document.querySelector('[data-testid="preview-problems"]')`)
		b.do(click(`[data-testid="save-rule"]`))
		b.waitJS("the inline error", `!!document.querySelector('[data-testid="error-cond-pattern"]')`)
		if v := b.value(`[data-testid="condition-row"] input[name="cond_pattern"]`); v != "roof(ing" {
			t.Errorf("pattern after a refused save = %q; want what was typed", v)
		}
		b.do(shot("rules-form-errors"))

		b.do(
			chromedp.Navigate(base+"/rules"),
			visible(`[data-testid="rules-table"]`),
			shot("rules-list"),
			click(`[data-testid="new-rule"]`),
			visible(`[data-testid="rule-form"]`),
			markNoReload(),
			typeInto(`#f-name`, "Berlin or big budget"),
			fill(`#f-event_name`, "QualifiedLead"),
			fill(`#f-combinator`, "or"),
		)
		b.pickCond(`[data-testid="condition-row"]:nth-child(1)`, "cond_field", "city")
		b.pickCond(`[data-testid="condition-row"]:nth-child(1)`, "cond_match_type", "equals")
		b.do(
			fill(`[data-testid="condition-row"]:nth-child(1) input[name="cond_pattern"]`, "berlin"),
		)
		b.previewSays("2")
		if got := b.text(`[data-testid="preview-total"]`); got != "4" {
			t.Errorf("preview total %q; want 4", got)
		}

		// A second condition, added in place: the count grows.
		b.do(click(`[data-testid="add-condition"]`))
		b.waitJS("a second condition row", `document.querySelectorAll('[data-testid="condition-row"]').length === 2`)
		b.pickCond(`[data-testid="condition-row"]:nth-child(2)`, "cond_field", "fields.budget")
		b.pickCond(`[data-testid="condition-row"]:nth-child(2)`, "cond_match_type", "gt")
		b.do(
			fill(`[data-testid="condition-row"]:nth-child(2) input[name="cond_pattern"]`, "5000"),
		)
		b.previewSays("3")
		if !b.pageKept() {
			t.Error("adding a condition reloaded the page")
		}
		if why := b.text(`[data-testid="preview-misses"] li`); !strings.Contains(why, "None of the conditions matched") {
			t.Errorf("unmatched example says %q", why)
		}
		b.do(shot("rules-form-preview"))

		// A third condition, removed again in place: back to 3.
		b.do(click(`[data-testid="add-condition"]`))
		b.waitJS("a third condition row", `document.querySelectorAll('[data-testid="condition-row"]').length === 3`)
		b.pickCond(`[data-testid="condition-row"]:nth-child(3)`, "cond_field", "email_domain")
		b.do(
			fill(`[data-testid="condition-row"]:nth-child(3) input[name="cond_pattern"]`, "acme-roofing.com"),
		)
		b.previewSays("4")
		b.do(click(`[data-testid="condition-row"]:nth-child(3) [data-testid="remove-condition"]`))
		b.waitJS("two condition rows again", `document.querySelectorAll('[data-testid="condition-row"]').length === 2`)
		b.previewSays("3")

		// Saved: the rule page, its history, and the same preview.
		b.do(click(`[data-testid="save-rule"]`))
		b.waitJS("the saved rule's page", `!!document.querySelector('[data-testid="rule-title"]')`)
		b.previewSays("3")
		if got := b.text(`[data-testid="flash"]`); !strings.HasPrefix(got, "Rule Berlin or big budget created. It checks the leads captured from now on") {
			t.Errorf("flash %q", got)
		}
		b.do(shot("rules-rule"))
		rules, err := s.SendRules(ctx, acc.ID)
		if err != nil || len(rules) != 2 {
			t.Fatalf("rules %+v, %v", rules, err)
		}
		saved := rules[1]
		if saved.Combinator != "or" || saved.EventName != "QualifiedLead" ||
			saved.Conditions != `[{"field":"city","match_type":"equals","pattern":"berlin"},{"field":"fields.budget","match_type":"gt","pattern":"5000"}]` {
			t.Errorf("saved rule %+v", saved)
		}

		// The list, reordered in place.
		b.do(
			chromedp.Navigate(base+"/rules"),
			visible(`[data-testid="rules-table"]`),
			markNoReload(),
			click(`[data-testid="rule-row"]:nth-child(2) [data-testid="move-up"]`),
		)
		b.waitJS("the new rule first", `document.querySelector('[data-testid="rule-name"]').textContent === "Berlin or big budget"`)
		if !b.pageKept() {
			t.Error("moving a rule reloaded the page")
		}
		if rs, _ := s.SendRules(ctx, acc.ID); rs[0].ID != saved.ID {
			t.Errorf("stored order %d, %d; want the new rule first", rs[0].ID, rs[1].ID)
		}
		b.do(shot("rules-list-moved"), chromedp.Navigate(fmt.Sprintf("%s/rules/%d", base, saved.ID)), visible(`[data-testid="rule-form"]`))

		// The same page on a phone.
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="rule-form"]`))
		b.previewSays("3")
		b.do(shot("rules-rule-phone"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the page is %d px wide; want no sideways scrolling", w)
		}
		b.do(chromedp.EmulateViewport(1280, 900))

		// A lead that matches is queued under the rule's event name and
		// shows in the send log; one that does not gets only the default
		// rule's Lead, and its page says why.
		match := a.postLead(key, ruleLead(10, "new@acme-roofing.com", "Paris", "12000", "2026-12-01T11:00:00Z", nil))
		miss := a.postLead(key, ruleLead(11, "other@acme-roofing.com", "Paris", "10", "2026-12-01T11:05:00Z", nil))
		if names := replyEventNames(t, match); names != "Lead QualifiedLead" {
			t.Errorf("matching lead queued %q; want Lead and QualifiedLead", names)
		}
		if names := replyEventNames(t, miss); names != "Lead" {
			t.Errorf("other lead queued %q; want only Lead", names)
		}
		b.do(
			chromedp.Navigate(base+"/events?event=QualifiedLead"),
			visible(`[data-testid="events-table"]`),
			shot("rules-sendlog"),
		)
		if rows := b.text(`[data-testid="events-table"] tbody`); !strings.Contains(rows, "QualifiedLead") {
			t.Errorf("send log rows %q; want the QualifiedLead event", rows)
		}
		b.do(
			chromedp.Navigate(fmt.Sprintf("%s/leads/%d", base, miss.LeadID)),
			visible(`[data-testid="lead-rules"]`),
		)
		if why := b.text(`[data-testid="lead-rules"]`); !strings.Contains(why, "none of the conditions matched") {
			t.Errorf("the unmatched lead's page says %q", why)
		}
	})
}

// replyEventNames are the event names an ingest reply queued, sorted, in
// one string.
func replyEventNames(t *testing.T, r apiReply) string {
	t.Helper()
	var names []string
	for _, raw := range r.Events {
		var e struct {
			EventName string `json:"event_name"`
			Status    string `json:"status"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.Status != "queued" {
			t.Errorf("event %s is %s", e.EventName, e.Status)
		}
		names = append(names, e.EventName)
	}
	if len(names) == 2 && names[0] > names[1] {
		names[0], names[1] = names[1], names[0]
	}
	return strings.Join(names, " ")
}

// TestBrowserRulesWarningDeadlineApply shows, on the new rule form, no
// event name chosen and no warning, then the warning that the rule shares
// its event with the dataset's default rule, live as the event name
// changes; the preview of a costly rule ending
// with the deadline's message, at 1280 and 390 px; and the apply
// confirmation's words, then what applying did.
func TestBrowserRulesWarningDeadlineApply(t *testing.T) {
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		costlyLeads(t, f, 40)
		web.SetPreviewDeadline(t, 150*time.Millisecond)
		base := f.a.srv.URL + "/accounts/" + itoa(f.acc.ID)
		b := chrome(t)
		b.login(f.a.srv.URL, "acme-owner@example.com")

		warning := `[data-testid="rule-warning"]`
		b.do(
			chromedp.Navigate(base+"/rules/new"),
			visible(`[data-testid="rule-form"]`),
			markNoReload(),
		)
		// A new rule has no event name yet, so it shares none: the form,
		// once its first preview has settled, warns of nothing.
		b.waitJS("the first preview", `!!document.querySelector('[data-testid="preview-summary"] a, [data-testid="preview-waiting"]')`)
		if n := b.count(warning); n != 0 || b.value(`#f-event_name`) != "" {
			t.Errorf("new rule form: %d warnings, event name %q; want none chosen and no warning", n, b.value(`#f-event_name`))
		}
		b.do(fill(`#f-event_name`, "Lead"))
		b.waitJS("the warning once Lead is chosen", `document.querySelectorAll('[data-testid="rule-warning"]').length === 1`)
		want := "Leads that match both this rule and Completed leads to Main get one Lead event, owned by Completed leads to Main"
		if got := b.text(warning); !strings.Contains(got, want) {
			t.Errorf("warning %q; want %q", got, want)
		}
		// Another event name: the preview takes the warning away; Lead
		// again brings it back.
		b.do(fill(`#f-event_name`, "QualifiedLead"))
		b.waitJS("the warning to go", `document.querySelectorAll('[data-testid="rule-warning"]').length === 0`)
		b.do(fill(`#f-event_name`, "Lead"))
		b.waitJS("the warning to come back", `document.querySelectorAll('[data-testid="rule-warning"]').length === 1`)

		b.do(
			typeInto(`#f-name`, "Costly"),
		)
		b.pickCond(`[data-testid="condition-row"]`, "cond_field", "message")
		b.pickCond(`[data-testid="condition-row"]`, "cond_match_type", "regex")
		b.do(
			fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "(.*a){150}x"),
		)
		b.waitJS("the deadline's message", `!!document.querySelector('[data-testid="preview-too-long"]')`)
		if got := b.text(`[data-testid="preview-too-long"]`); !strings.HasPrefix(got, "The preview took too long: narrow the rule.") {
			t.Errorf("preview says %q", got)
		}
		if !b.pageKept() || b.count(warning) != 1 {
			t.Errorf("after the preview: page kept %v, %d warnings; want the page and its one warning", b.pageKept(), b.count(warning))
		}
		b.do(shot("rules-form-warning-deadline"))

		// On a phone.
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="rule-form"]`),
			fill(`#f-event_name`, "Lead"), visible(warning))
		b.pickCond(`[data-testid="condition-row"]`, "cond_field", "message")
		b.pickCond(`[data-testid="condition-row"]`, "cond_match_type", "regex")
		b.do(
			fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "(.*a){150}x"),
		)
		b.waitJS("the deadline's message on a phone", `!!document.querySelector('[data-testid="preview-too-long"]')`)
		b.do(shot("rules-form-warning-deadline-phone"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the page is %d px wide; want no sideways scrolling", w)
		}
		b.do(chromedp.EmulateViewport(1280, 900))

		// A cheap rule, saved and applied: the confirmation says what it
		// does, and it does that.
		web.SetPreviewDeadline(t, time.Minute)
		f.a.advance(time.Minute) // the rule is made after the leads
		b.do(
			chromedp.Navigate(base+"/rules/new"),
			visible(`[data-testid="rule-form"]`),
			typeInto(`#f-name`, "Berlin"),
			fill(`#f-event_name`, "QualifiedLead"),
		)
		b.pickCond(`[data-testid="condition-row"]`, "cond_field", "city")
		b.do(
			fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "berlin"),
		)
		b.previewSays("40")
		b.do(click(`[data-testid="save-rule"]`))
		b.waitJS("the saved rule's page", `!!document.querySelector('[data-testid="apply-form"]')`)
		// A lead captured before the rule: its page says why it has no
		// QualifiedLead event, and links to applying the rule.
		b.do(
			chromedp.Navigate(base+"/leads"),
			click(`#lead-rows tr[data-testid="lead-row"]:first-child a`),
			visible(`[data-testid="rule-apply"]`),
			chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="lead-rules"]`)),
			shot("rules-lead-no-event"),
		)
		if got := b.text(`[data-testid="rule-event-note"]`); !strings.HasPrefix(got, "No QualifiedLead event: the rule was created after the lead last changed") {
			t.Errorf("the lead page says %q", got)
		}
		b.do(click(`[data-testid="rule-apply"]`), visible(`[data-testid="rule-confirm"]`), shot("rules-apply-confirm"))
		msg := b.text(`[data-testid="confirm-message"]`)
		if want := "40 leads of the last 7 days match this rule as they are now; 0 have the QualifiedLead event already, so applying queues 40 QualifiedLead events."; msg != want {
			t.Errorf("confirmation %q; want %q", msg, want)
		}
		if detail := b.text(`[data-testid="rule-confirm"] small`); !strings.Contains(detail, "held back") || !strings.Contains(detail, "Main is a dry run") {
			t.Errorf("confirmation detail %q; want what happens to the events", detail)
		}
		b.do(click(`[data-testid="confirm"]`), visible(`[data-testid="flash"]`))
		if got := b.text(`[data-testid="flash"]`); got != "40 QualifiedLead events queued." {
			t.Errorf("after applying: %q", got)
		}
		if n := eventCount(t, s, f.acc.ID, "QualifiedLead"); n != 40 {
			t.Errorf("%d QualifiedLead events; the confirmation said 40", n)
		}
	})
}

// TestBrowserRulesFitEveryScreen looks at the Rules list and the rule
// form at 1280 and 390 px: a 99-character rule name keeps its row on one
// line and the page within the screen; the new form opens without an
// error; a true/false field offers yes or no and no regex, a number field
// number comparisons and a number input; on a phone the preview's
// summary is in sight right after the conditions.
func TestBrowserRulesFitEveryScreen(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		long := strings.Repeat("Qualified roofing leads from Berlin ", 3)[:99]
		createRuleForm(t, f, ruleValues(long, f.d, "automatic_match", "QualifiedLead", "or",
			[3]string{"city", "in_list", "Berlin, Hamburg, München, Köln, Frankfurt am Main, Stuttgart, Düsseldorf"},
			[3]string{"fields.budget", "gt", "5000"}, [3]string{"email_is_free", "equals", "false"}))
		base := f.a.srv.URL + "/accounts/" + itoa(f.acc.ID)
		b := chrome(t)
		b.login(f.a.srv.URL, "acme-owner@example.com")

		b.eachWidth("rules-list", base+"/rules", `[data-testid="rules-table"]`, func(w int64) {
			b.oneLineRows("rules list", `[data-testid="rules-table"]`)
			cut := evalJS[bool](b, `(() => { const a = document.querySelectorAll('[data-testid="rule-name"]')[1];
				return a.scrollWidth > a.clientWidth && a.title.length === 99 })()`)
			if !cut {
				t.Errorf("at %d px the 99-character name is not cut with its whole on hover", w)
			}
			// On a laptop the whole list shows, without scrolling sideways.
			if wide := evalJS[[]int](b, `(() => { const l = document.getElementById("rules-list"); return [l.scrollWidth, l.clientWidth] })()`); w >= 1024 && wide[0] > wide[1] {
				t.Errorf("at %d px the rules list is %d px wide in %d px", w, wide[0], wide[1])
			}
		})

		// The rule's page, its name one long word.
		word := strings.Repeat("Qualified", 11)
		r := createRuleForm(t, f, ruleValues(word, f.d, "automatic_match", "Word", "and", [3]string{"city", "equals", "Berlin"}))
		b.eachWidth("rules-rule-long-name", base+"/rules/"+itoa(r.ID), `[data-testid="rule-title"]`, nil)

		noErrors := `document.querySelectorAll('.field-error, .flash.error, [aria-invalid="true"], [data-testid="preview-problems"]').length === 0 &&
			!document.body.innerText.includes("Fix these")`
		matchTypes := `[...document.querySelectorAll('[data-testid="condition-row"] [data-testid="cond-match"] option')].map(o => o.value).join(" ")`
		b.eachWidth("rules-new", base+"/rules/new", `[data-testid="rule-form"]`, func(w int64) {
			b.waitJS("the preview to ask for a condition", `!!document.querySelector('[data-testid="preview-waiting"]')`)
			if !evalJS[bool](b, noErrors) {
				t.Errorf("at %d px the new form opens with an error: %s", w, b.text(`#rule-editor, main`))
			}
			b.do(markNoReload())

			// A true/false field: yes or no, no regex, nothing to type.
			b.pickCond(`[data-testid="condition-row"]`, "cond_field", "email_is_free")
			b.waitJS("the yes/no picker", `!!document.querySelector('[data-testid="condition-row"] select[data-testid="cond-yesno"]')`)
			if got := evalJS[string](b, matchTypes); got != "equals not_equals is_empty not_empty" {
				t.Errorf("at %d px a true/false field offers %q", w, got)
			}
			if b.count(`[data-testid="condition-row"] input[name="cond_pattern"]`) != 0 {
				t.Errorf("at %d px a true/false field offers a box to type in", w)
			}
			b.previewSays("1")
			b.conditionsShot("rules-new-yesno-" + itoa(w))
			b.do(fill(`[data-testid="condition-row"] select[data-testid="cond-yesno"]`, "false"))
			b.previewSays("2")

			// A number field: comparisons of numbers, a number input.
			b.pickCond(`[data-testid="condition-row"]`, "cond_field", "fill_seconds")
			b.waitJS("the number input", `!!document.querySelector('[data-testid="condition-row"] input[type="number"][name="cond_pattern"]')`)
			if got := evalJS[string](b, matchTypes); got != "gt gte lt lte is_empty not_empty" {
				t.Errorf("at %d px a number field offers %q", w, got)
			}
			b.do(fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "10"))
			b.previewSays("3")
			if !b.pageKept() {
				t.Errorf("at %d px changing a condition's field reloaded the page", w)
			}
			if !evalJS[bool](b, noErrors) {
				t.Errorf("at %d px an error shows for a rule with none", w)
			}

			// The preview's summary: in sight after the conditions on a
			// phone, where the preview itself is below the whole form; on a
			// wide screen the preview is beside the form, and the summary
			// is not repeated.
			b.do(chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="add-condition"]`)))
			b.conditionsShot("rules-new-conditions-" + itoa(w))
			b.do(chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="add-condition"]`)))
			summary := evalJS[map[string]float64](b, `(() => { const s = document.querySelector('[data-testid="preview-summary"]');
				const r = s.getBoundingClientRect(); const add = document.querySelector('[data-testid="add-condition"]');
				return {shown: s.offsetParent ? 1 : 0, top: r.top, bottom: r.bottom, screen: innerHeight,
					after: add.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING ? 1 : 0} })()`)
			preview := evalJS[float64](b, `document.querySelector('[data-testid="rule-preview"]').getBoundingClientRect().top`)
			switch {
			case w < 1024 && (summary["shown"] != 1 || summary["after"] != 1 || summary["top"] < 0 || summary["bottom"] > summary["screen"]):
				t.Errorf("at %d px the preview's summary is not in sight after the conditions: %v", w, summary)
			case w < 1024 && !strings.Contains(b.text(`[data-testid="preview-summary"]`), "Matches 3 of 5 leads"):
				t.Errorf("at %d px the summary says %q", w, b.text(`[data-testid="preview-summary"]`))
			case w < 1024 && preview < summary["bottom"]+200:
				t.Errorf("at %d px the preview (at %.0f px) is not below the form; the summary (at %.0f px) repeats it", w, preview, summary["top"])
			case w >= 1024 && summary["shown"] != 0:
				t.Errorf("at %d px the summary repeats the preview beside the form", w)
			}
		})
	})
}

// conditionsShot saves, when screenshots are asked for, what a person
// editing the rule form's conditions sees: the screen, scrolled to them.
func (b *tab) conditionsShot(name string) {
	b.t.Helper()
	dir := os.Getenv("LEADSIGNAL_SCREENSHOTS")
	if dir == "" {
		return
	}
	evalJS[bool](b, `(document.querySelector('[data-testid="condition-row"]').scrollIntoView(), true)`)
	buf, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	}
	if err != nil {
		b.t.Error(err)
	}
}
