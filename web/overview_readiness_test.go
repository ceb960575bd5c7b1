package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// "Stage updates arrive at least daily" counts the days on which a lead
// reached a stage, whichever way the change came in: a day with only a
// CRM's change counts, and so does a day with only an upload's.
func TestOverviewReadinessCountsEveryWayIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s) // a lead at Sunday Nov 29, 12:00 UTC; now is Dec 1, 12:00
		owner := a.browser()
		owner.login("crm-owner@example.com")
		figure := func() string {
			r := owner.get(views.AccountURL(st.acc.ID, ""))
			wantStatus(t, "overview", r, http.StatusOK)
			var out string
			r.doc.Find(`[data-testid="readiness-check"]`).Each(func(_ int, c *goquery.Selection) {
				if strings.Contains(c.Text(), "Stage updates arrive") {
					out = c.Text()
				}
			})
			return out
		}
		if got := figure(); !strings.Contains(got, "stage changes on 0 of the last 7 full days") {
			t.Errorf("before any change: %q", got)
		}
		record := func(stage string, at time.Time, origin decide.Origin, via string) {
			t.Helper()
			out, err := decide.New(s, nil, nil).RecordAll(t.Context(), st.acc.ID, []decide.Change{{Keys: decide.ByID(st.leadID),
				Stage: stage, OccurredAt: at, Origin: origin, Via: via}})
			if err != nil || out[0].Refused != nil {
				t.Fatalf("record %s: %v, %+v", stage, err, out[0].Refused)
			}
		}
		record(models.StageQualified, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), decide.FromCRM, models.ViaCRM)
		if got := figure(); !strings.Contains(got, "stage changes on 1 of the last 7 full days") {
			t.Errorf("after a CRM's change yesterday: %q", got)
		}
		record(models.StageBooked, time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC), decide.FromAPI, models.ViaUpload)
		if got := figure(); !strings.Contains(got, "stage changes on 2 of the last 7 full days") {
			t.Errorf("after an upload's change the day before: %q", got)
		}
	})
}

// An account whose qualified stage sends nothing yet still has its row
// under "Reached": the chart's legend names no figure the table lacks.
func TestOverviewShowsTheChartsStageUnmapped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		r := a.postLead(key, `{"email":"ann@example.com"}`)
		if r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		if _, err := decidetest.Mark(t.Context(), s, models.StageChange{AccountID: acc.ID, LeadID: r.LeadID,
			Stage: models.StageQualified, OccurredAt: a.clock()}); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		page := b.get(views.AccountURL(acc.ID, ""))
		wantStatus(t, "overview", page, http.StatusOK)
		if got := page.text("count-reached-qualified-0"); got != "1" {
			t.Errorf("reached qualified this week = %q; want 1", got)
		}
		if legend := page.doc.Find(`[data-testid="weekly-chart"]`).Text(); !strings.Contains(legend, "Reached qualified") {
			t.Errorf("chart legend = %q; want Reached qualified", legend)
		}
	})
}
