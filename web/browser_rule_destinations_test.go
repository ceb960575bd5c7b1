//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserRuleSeveralDestinations ticks a second destination in the
// rule form: the live preview then counts what could be sent to each, the
// rule saves with both, and the form, the preview and the rules list are
// looked at on a laptop and a phone.
func TestBrowserRuleSeveralDestinations(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		meta := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		tiktok := models.Dataset{AccountID: acc.ID, Kind: models.KindTikTok, Name: "TikTok Ads", PixelID: "C4TIKTOK1234", EventSource: "web",
			Mode: models.ModeDryRun, LDU: models.LDUOff}
		for _, d := range []*models.Dataset{&meta, &tiktok} {
			if err := s.CreateDataset(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for i, city := range []string{"Berlin", "Berlin", "Paris"} {
			r := a.postLead(key, ruleLead(i+1, fmt.Sprintf("lead%d@acme-roofing.com", i+1), city, "100",
				a.clock().Add(-time.Duration(i+1)*time.Hour).Format(time.RFC3339), nil))
			if r.status != http.StatusCreated {
				t.Fatalf("lead %d: %d %s", i+1, r.status, r.raw)
			}
		}
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		b.do(
			chromedp.Navigate(base+"/rules/new"),
			visible(`[data-testid="rule-form"]`),
			typeInto(`#f-name`, "Berlin everywhere"),
			fill(`#f-event_name`, "QualifiedLead"),
		)
		b.pickCond(`[data-testid="condition-row"]`, "cond_field", "city")
		b.pickCond(`[data-testid="condition-row"]`, "cond_match_type", "equals")
		b.do(fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "berlin"))
		b.previewSays("2")
		if n := evalJS[int](b, `document.querySelectorAll('[data-testid="preview-sendable"]').length`); n != 1 {
			t.Errorf("the preview counts for %d destinations before TikTok is ticked; want 1", n)
		}
		b.do(click(fmt.Sprintf(`#f-dataset_id input[value="%d"]`, tiktok.ID)))
		b.waitJS("the preview to count for both destinations",
			`document.querySelectorAll('[data-testid="preview-sendable"]').length === 2`)
		if got := b.text(`#rule-preview`); !strings.Contains(got, "TikTok Ads (TikTok)") {
			t.Errorf("the preview says %q; want a line for TikTok Ads", got)
		}
		b.do(shot("rule-destinations-form"))
		b.do(click(`[data-testid="save-rule"]`))
		b.waitJS("the saved rule's page", `location.pathname.match(/\/rules\/\d+$/) !== null`)
		rules, err := s.SendRules(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rules, func(r models.SendRule) bool { return r.Name == "Berlin everywhere" })
		if i < 0 || !slices.Equal(rules[i].Destinations(), []int64{meta.ID, tiktok.ID}) {
			t.Fatalf("saved rules %+v; want Berlin everywhere to Main and TikTok Ads", rules)
		}
		rulePage := b.location()
		b.eachWidth("rule-destinations", rulePage, `[data-testid="rule-form"]`, func(int64) {
			if n := evalJS[int](b, `document.querySelectorAll('#f-dataset_id input:checked').length`); n != 2 {
				t.Errorf("the saved rule's page ticks %d destinations; want 2", n)
			}
		})
		b.eachWidth("rules-destinations-list", base+"/rules", `[data-testid="rules-table"]`, nil)

		// A won mapping to both destinations: its form, and the Overview
		// following won to each destination.
		won := models.SendRule{AccountID: acc.ID, Name: "won to Purchase everywhere", Mode: "stage", Stage: models.StageWon,
			EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
		won.SetDestinations([]int64{meta.ID, tiktok.ID})
		if err := s.CreateSendRule(ctx, &won, nil); err != nil {
			t.Fatal(err)
		}
		st := a.postStage(key, fmt.Sprintf(`{"lead":{"external_id":"rule-lead-1"},"stage":"won","occurred_at":%q,"value":900,"currency":"USD"}`,
			a.clock().Format(time.RFC3339)))
		if st.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", st.status, st.raw)
		}
		b.eachWidth("mapping-destinations", fmt.Sprintf("%s/stages/mappings/%d", base, won.ID), `[data-testid="mapping-form"]`, func(int64) {
			if n := evalJS[int](b, `document.querySelectorAll('#f-dataset_id input:checked').length`); n != 2 {
				t.Errorf("the mapping's page ticks %d destinations; want 2", n)
			}
		})
		b.eachWidth("overview-destinations", base, `[data-testid="reconcile"]`, func(int64) {
			if n := evalJS[int](b, `[...document.querySelectorAll('[data-testid="reconcile-line"]')].filter(l => l.textContent.replace(/\s+/g, " ").includes("Purchase to")).length`); n != 2 {
				t.Errorf("the Overview has %d Purchase lines; want one for each of the 2 destinations", n)
			}
			if got := b.text(`[data-testid="reconcile"]`); !strings.Contains(strings.Join(strings.Fields(got), " "), "1 lead reached it") {
				t.Errorf("the Overview's lines read %q; want 1 lead reached it", got)
			}
		})
	})
}
