//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserConnectDestinations connects a TikTok pixel and a Google Ads
// account through their forms, with a mistake first, sends TikTok's test
// event, sees a lead's events go to both, and looks at the forms, the
// list and a destination's page at 1280 and 390 px.
func TestBrowserConnectDestinations(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)

		b.do(
			chromedp.Navigate(base+"/datasets"),
			visible(`[data-testid="datasets-empty"]`),
			click(`[data-testid="datasets-empty"] a[role="button"]`),
			visible(`[data-testid="kind-choice"]`),
			click(`[data-testid="kind-tiktok"]`),
			visible(`#f-event_source`),
			typeInto(`#f-name`, "TikTok Ads"),
			typeInto(`#f-pixel_id`, "C4 TIKTOK"),
			typeInto(`#f-access_token`, tiktoktest.Token),
			setValue(`#f-mode`, "test"),
			typeInto(`#f-test_event_code`, "TEST88"),
			typeInto(`#f-event_names`, "QualifiedLead = ApplicationApproval"),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="error-pixel_id"]`),
		)
		if got := b.value(`#f-event_names`); got != "QualifiedLead = ApplicationApproval" {
			t.Errorf("own event names after the error = %q; want what was typed", got)
		}
		b.do(
			setValue(`#f-pixel_id`, "C4TIKTOK88"),
			typeInto(`#f-access_token`, tiktoktest.Token),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="test-form"]`),
		)
		page := b.location()
		b.do(
			click(`[data-testid="test-form"] button`),
			visible(`[data-testid="test-result"]`),
		)
		if msg := b.text(`[data-testid="test-result"]`); !strings.Contains(msg, "TikTok took the test event") {
			t.Errorf("test event answer = %q", msg)
		}
		if strings.Contains(b.text(`main`), tiktoktest.Token) {
			t.Error("the TikTok page shows the token")
		}
		if reqs := a.tiktok.Requests(); len(reqs) != 1 || reqs[0].TestEventCode != "TEST88" {
			t.Fatalf("TikTok got %d requests; want the test event", len(reqs))
		}
		b.eachWidth("destination-tiktok", page, `[data-testid="test-form"]`, nil)

		b.eachWidth("destination-new-google", base+"/datasets/new?kind=google", `#f-client_id`, nil)
		b.do(
			chromedp.Navigate(base+"/datasets/new?kind=google"),
			visible(`#f-client_id`),
			typeInto(`#f-name`, "Google Ads"),
			typeInto(`#f-pixel_id`, "123-456-7890"),
			typeInto(`#f-client_id`, googletest.ClientID),
			typeInto(`#f-app_secret`, googletest.ClientSecret),
			typeInto(`#f-access_token`, googletest.RefreshToken),
			setValue(`#f-mode`, "live"),
			typeInto(`#f-event_names`, "Lead = "+googletest.ConversionActions[0]),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="test-form"]`),
		)

		// A lead goes to both, as each platform takes it.
		if r := a.postLead(key, goodLead); r.status != 201 {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		a.drain()
		if a.google.EventsReceived() != 1 || len(a.tiktok.Requests()) != 2 {
			t.Errorf("Google received %d events, TikTok %d requests; want the lead's Lead on each", a.google.EventsReceived(), len(a.tiktok.Requests()))
		}
		b.eachWidth("destinations", base+"/datasets", `[data-testid="datasets-table"]`, func(int64) {
			if got := b.text(`[data-testid="datasets-table"] tbody`); !strings.Contains(got, "TikTok") || !strings.Contains(got, "Google Ads") {
				t.Errorf("the list = %q; want each destination with its platform", got)
			}
		})
		b.eachWidth("sendlog-destinations", base+"/events", `[data-testid="events-table"]`, func(int64) {
			if got := b.text(`[data-testid="events-table"] tbody`); !strings.Contains(got, "TikTok Ads (TikTok)") {
				t.Errorf("the send log = %q; want each event's destination", got)
			}
		})
	})
}
