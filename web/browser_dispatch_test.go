//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserDatasetTestEventAndSendLog connects a dataset, sends a test
// event to the fake Meta and reads its answer, then watches a lead's event
// turn sent in the send log, refreshed in place by htmx.
func TestBrowserDatasetTestEventAndSendLog(t *testing.T) {
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
			visible(`[data-testid="dataset-form"]`),
			typeInto(`#f-name`, "Main pixel"),
			typeInto(`#f-pixel_id`, "123456789012345"),
			typeInto(`#f-access_token`, capitest.Token),
			setValue(`#f-mode`, "live"),
			typeInto(`#f-test_event_code`, "TEST42"),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="test-form"]`),
			screenshot("dataset"),
		)
		if strings.Contains(b.text(`main`), capitest.Token) {
			t.Error("the dataset page shows the token")
		}
		b.do(
			click(`[data-testid="test-form"] button`),
			visible(`[data-testid="test-result"]`),
			visible(`[data-testid="requests-table"]`),
			screenshot("dataset-test-event"),
		)
		if msg := b.text(`[data-testid="test-result"]`); !strings.Contains(msg, "Meta received 1 event") {
			t.Errorf("test event answer = %q", msg)
		}
		if reqs := a.meta.Requests(); len(reqs) != 1 || reqs[0].TestEventCode != "TEST42" {
			t.Fatalf("Meta got %d requests; want the test event", len(reqs))
		}

		// A lead arrives; its event waits in the send log, which refreshes
		// itself while something is on its way.
		if r := a.postLead(key, goodLead); r.status != 201 {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		b.do(
			chromedp.Navigate(base+"/events"),
			visible(`[data-testid="events-table"]`),
		)
		if st := b.text(`[data-testid="event-status"]`); st != "Waiting" {
			t.Errorf("status before dispatch = %q; want Waiting", st)
		}
		// Its page shows the JSON capture prepared, before it is sent.
		b.do(
			click(`[data-testid="event-row"] a`),
			visible(`[data-testid="payload-note"]`),
			screenshot("event-queued"),
		)
		if note, p := b.text(`[data-testid="payload-note"]`), b.text(`[data-testid="event-payload"]`); !strings.Contains(note, "Prepared when the event was queued") ||
			!strings.Contains(p, `"event_source_url"`) || strings.Contains(p, "jane.doe@example.com") {
			t.Errorf("queued event's page: note %q, payload %q; want the prepared JSON, hashes only", note, p)
		}
		b.do(
			chromedp.Navigate(base+"/events"),
			visible(`[data-testid="events-table"]`),
		)
		a.drain()
		b.waitJS("the event to turn sent", `document.querySelector('[data-testid="event-status"]').textContent === "Sent"`)
		b.do(screenshot("sendlog"))
		if n := b.text(`[data-testid="count-sent"]`); n != "1" {
			t.Errorf("sent count = %q; want 1", n)
		}
		b.do(
			click(`[data-testid="event-row"] a`),
			visible(`[data-testid="event-payload"]`),
			screenshot("event"),
		)
		if p := b.text(`[data-testid="event-payload"]`); !strings.Contains(p, `"action_source": "website"`) || strings.Contains(p, "jane.doe@example.com") {
			t.Errorf("payload shown = %q; want hashes only", p)
		}
		if r := b.text(`[data-testid="event-reply"]`); !strings.Contains(r, "events_received") {
			t.Errorf("Meta's reply shown = %q", r)
		}
	})
}
