package web_test

import (
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestLeadsStageFilterOffersTheLeadsStages: the Stage filter offers the
// stages the account's leads are at, as their CRM wrote them, not a fixed
// list, and choosing one lists exactly its leads.
func TestLeadsStageFilterOffersTheLeadsStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		var ids []int64
		for _, email := range []string{"ann@example.com", "bo@example.com", "cy@example.com"} {
			r := a.postLead(key, `{"email":"`+email+`","first_name":"`+strings.Split(email, "@")[0]+`"}`)
			if r.status != http.StatusCreated {
				t.Fatalf("post %s = %d", email, r.status)
			}
			ids = append(ids, r.LeadID)
		}
		if _, err := decidetest.Mark(t.Context(), s, models.StageChange{AccountID: acc.ID, LeadID: ids[0], Stage: "Proposal sent", OccurredAt: a.clock()}); err != nil {
			t.Fatal(err)
		}
		if err := s.CompactCounts(t.Context()); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		r := b.get(views.AccountURL(acc.ID, "/leads"))
		wantStatus(t, "leads", r, http.StatusOK)
		var options []string
		r.doc.Find(`[data-testid="lead-filters"] select[name="stage"] option`).Each(func(_ int, o *goquery.Selection) {
			options = append(options, o.AttrOr("value", ""))
		})
		if !slices.Equal(options, []string{"", "none", "Proposal sent"}) {
			t.Errorf("stage options = %q; want any, none and the one stage a lead is at", options)
		}
		r = b.get(views.AccountURL(acc.ID, "/leads?stage=Proposal+sent"))
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 1 || !strings.Contains(r.doc.Find(`[data-testid="lead-row"]`).Text(), "ann") {
			t.Errorf("leads at Proposal sent: %d rows %q; want ann's", n, r.doc.Find(`[data-testid="lead-row"]`).Text())
		}
		// A stage no lead is at any more stays chosen in the bar.
		r = b.get(views.AccountURL(acc.ID, "/leads?stage=won"))
		if v := r.doc.Find(`select[name="stage"] option[selected]`).AttrOr("value", ""); v != "won" {
			t.Errorf("chosen stage shows %q; want won", v)
		}
	})
}
