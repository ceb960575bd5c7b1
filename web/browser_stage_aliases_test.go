//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestBrowserUnmappedLabelToAlias: a label the CRM sent that names no
// stage is saved, from "Not in the list", as an alias of won in place;
// the label leaves the section and its changes count as won. An alias
// another stage has is refused inline, keeping what was typed. The page
// is looked at on a 1280 px screen and a 390 px phone.
func TestBrowserUnmappedLabelToAlias(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		postStages(t, f, ids[0], "Closed Won", "won", "Closed Lost - no budget for this year's roofing work")
		postStages(t, f, ids[1], "closed won")
		won := stageID(t, s, f.acc, "won")
		url := f.a.srv.URL + views.AccountURL(f.acc.ID, "/stages")
		b := chrome(t)
		b.login(f.a.srv.URL, "acme-owner@example.com")

		b.eachWidth("stage-aliases-unmapped", url, `[data-testid="unmapped"]`, func(w int64) {
			// "It is <stage>" comes first, the new stage after it.
			if !evalJS[bool](b, `(() => { const r = document.querySelector('[data-testid="unmapped-stage"][data-stage="Closed Won"]');
				const save = r.querySelector('[data-testid="save-alias"]').getBoundingClientRect(), add = r.querySelector('[data-testid="map-unmapped"]').getBoundingClientRect();
				return add.top > save.top + 1 || (Math.abs(add.top - save.top) <= 1 && add.left > save.right) })()`) {
				t.Errorf("at %d px the new stage is not offered after Save as alias", w)
			}
		})
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), visible(`[data-testid="unmapped"]`), markNoReload())
		b.oneLine("labels not in the list", `[data-testid="unmapped-stage"]`)
		b.do(
			fill(`[data-stage="Closed Won"] select[name="stage"]`, itoa(won)),
			click(`[data-stage="Closed Won"] [data-testid="save-alias"]`),
		)
		b.waitJS("Closed Won leaves the section", `!document.querySelector('[data-testid="unmapped-stage"][data-stage="Closed Won"]')`)
		if !b.pageKept() {
			t.Error("saving the alias reloaded the page")
		}
		if got := b.text(`[data-stage="won"] [data-testid="stage-alias"]`); !strings.Contains(got, "Closed Won") {
			t.Errorf("won's aliases read %q; want Closed Won", got)
		}
		if got := b.text(`[data-stage="won"] [data-testid="stage-changes"]`); got != "3 changes" {
			t.Errorf("won counts %q; want 3 changes (won and both spellings of Closed Won)", got)
		}
		if n := b.count(`[data-testid="unmapped-stage"]`); n != 1 {
			t.Errorf("%d labels left not in the list; want Closed Lost only", n)
		}

		// An alias of another stage, typed inline: the reason, and the text kept.
		booked := `[data-stage="booked"] `
		b.do(typeInto(booked+`[data-testid="alias-input"]`, "closed-won"), click(booked+`[data-testid="alias-add"]`))
		b.waitJS("the refusal", `!!document.querySelector('[data-testid="error-alias"]')`)
		if got := b.text(`[data-testid="error-alias"]`); got != "'closed-won' already names the stage won." {
			t.Errorf("the refusal reads %q", got)
		}
		b.do(shot("stage-aliases-refused-1280"))
		if v := b.value(booked + `[data-testid="alias-input"]`); v != "closed-won" {
			t.Errorf("the alias field holds %q; want what was typed", v)
		}
		b.do(typeInto(`[data-stage="qualified"] [data-testid="alias-input"]`, "SQL"), click(`[data-stage="qualified"] [data-testid="alias-add"]`))
		b.waitJS("SQL added", `!!document.querySelector('[data-stage="qualified"] [data-alias="SQL"]')`)

		b.eachWidth("stage-aliases-saved", url, `[data-testid="stage-list"]`, func(w int64) {
			if w == 1280 {
				b.oneLine("stage lines", `.stage-line`)
				b.oneLine("alias lines", `[data-testid="stage-aliases"]`)
			}
		})
	})
}
