//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserStageChangeConditions maps won deals over 499.99 EUR through
// the mapping form: the deal value's row, fetched again when its field is
// chosen, offers numbers' match types and a decimal input; a value that is
// no number comes back inline, as typed; the saved mapping reads in words
// on the Stages page. The form is looked at on a 1280 px screen and a 390
// px phone.
func TestBrowserStageChangeConditions(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		row := func(n int) string { return `[data-testid="condition-row"]:nth-child(` + itoa(int64(n)) + `)` }
		b.do(
			chromedp.Navigate(base+"/stages/mappings/new?stage="+itoa(stageID(t, s, acc, "won"))),
			visible(`[data-testid="mapping-form"]`),
			setValue(`#f-event_name`, "Purchase"),
			fill(`select[name="value_mode"]`, "change"),
			click(`[data-testid="add-condition"]`),
			visible(row(1)),
		)
		b.waitJS("htmx to settle", htmxSettled)
		b.do(fill(row(1)+` select[name="cond_field"]`, "change.value"))
		b.waitJS("the deal value's row", `document.querySelector('`+row(1)+` input[name="cond_pattern"]').inputMode === "decimal"`)
		if got := b.value(row(1) + ` select[name="cond_match_type"]`); got != "gt" {
			t.Errorf("the deal value's match type = %q; want gt", got)
		}
		b.do(
			setValue(row(1)+` input[name="cond_pattern"]`, "500 EUR"),
			click(`[data-testid="add-condition"]`),
			visible(row(2)),
		)
		b.waitJS("htmx to settle", htmxSettled)
		b.do(fill(row(2)+` select[name="cond_field"]`, "change.currency"))
		b.waitJS("the deal currency's row", `document.querySelector('`+row(2)+` input[name="cond_pattern"]').placeholder.includes("EUR")`)
		b.do(
			setValue(row(2)+` input[name="cond_pattern"]`, "EUR"),
			shot("stage-conditions-form"),
			click(`[data-testid="save-mapping"]`),
		)
		b.waitJS("the inline error", `!!document.querySelector('[data-testid="error-cond-pattern"]')`)
		if got := b.value(row(1) + ` input[name="cond_pattern"]`); got != "500 EUR" {
			t.Errorf("the refused deal value reads %q; want what was typed", got)
		}
		b.do(shot("stage-conditions-error"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 1280 {
			t.Errorf("at 1280 px the mapping form is %d px wide", w)
		}

		b.do(
			setValue(row(1)+` input[name="cond_pattern"]`, "499.99"),
			click(`[data-testid="save-mapping"]`),
		)
		b.waitJS("the Stages page with the mapping", `!!document.querySelector('[data-stage="won"] [data-testid="mapping-row"]')`)
		if got := b.text(`[data-stage="won"] [data-testid="mapping-conditions"]`); got != `leads where Deal value is greater than 499.99 AND Deal currency is "EUR"` {
			t.Errorf("won's mapping conditions %q", got)
		}

		// The saved mapping on a phone: no sideways scrolling.
		b.do(
			chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
			click(`[data-stage="won"] [data-testid="mapping-row"] a`),
			visible(`[data-testid="mapping-form"]`),
			shot("stage-conditions-form-390"),
		)
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the mapping form is %d px wide", w)
		}
		if n := b.count(`[data-testid="condition-row"]`); n != 2 || !strings.Contains(b.value(row(1)+` select[name="cond_field"]`), "change.value") {
			t.Errorf("the saved mapping's form shows %d rows; want the deal value's and currency's", n)
		}
	})
}
