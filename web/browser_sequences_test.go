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

// TestBrowserSequencesAdd adds a sequence on the Stages page: a refused
// one (the same event twice) shows its problem in place with what was
// typed, the corrected one is listed in place, learning limited, without
// a page load.
func TestBrowserSequencesAdd(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")
		b.do(
			chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/stages"),
			visible(`[data-testid="sequences-empty"]`),
			markNoReload(),
			typeInto(`#sequence-initial`, "Lead"),
			typeInto(`#sequence-final`, "Lead"),
			click(`[data-testid="add-sequence"]`),
		)
		b.waitJS("the problem in place", `document.querySelector('[data-testid="error-final_event"]') !== null`)
		if got := b.value(`#sequence-final`); got != "Lead" {
			t.Errorf("final event after the problem = %q; want what was typed", got)
		}
		b.do(
			setValue(`#sequence-final`, "Purchase"),
			click(`[data-testid="add-sequence"]`),
		)
		b.waitJS("the sequence listed", `document.querySelectorAll('[data-testid="sequence"]').length === 1`)
		if got := strings.Join(strings.Fields(b.text(`[data-testid="sequence"]`)), " "); !strings.Contains(got, "Main Lead → Purchase 0 complete learning limited") {
			t.Errorf("sequence line = %q", got)
		}
		b.do(shot("stages-sequences"))
		if !b.pageKept() {
			t.Error("adding a sequence reloaded the page")
		}
	})
}
