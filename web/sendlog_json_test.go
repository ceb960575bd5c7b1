package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// A dataset's dry-run test event shows its JSON as the send log does, as
// Meta reads it: the account's CRM name, sent as lead_event_source, keeps
// its & < > rather than \u0026 \u003c \u003e.
func TestDatasetTestEventJSONReadsAsTheSendLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		acc.CRMName = "Smith & Sons <CRM>"
		if _, err := s.UpdateAccountSettings(t.Context(), acc); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"dry_run"}, "test_event_code": {"TEST42"}, "ldu": {"off"}})
		r := b.post(fmt.Sprintf("%s/%d/test", views.AccountURL(acc.ID, "/datasets"), d.ID), nil)
		wantStatus(t, "dry-run test event", r, http.StatusOK)
		shown := r.text("test-payload")
		if !strings.Contains(shown, `"lead_event_source": "Smith & Sons <CRM>"`) || strings.Contains(shown, `\u00`) {
			t.Errorf("test event JSON shows the CRM name escaped; want & < > as Meta reads them:\n%s", shown)
		}
	})
}
