package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/pinterest/pinteresttest"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestConnectTikTok: a TikTok destination is connected through its own
// form; bad input gets inline errors that keep what was typed; the token
// is sealed and never shown; its test event goes to TikTok's Test Events
// with the test code; its kind cannot be changed.
func TestConnectTikTok(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		base := views.AccountURL(acc.ID, "/datasets")

		r := b.get(base + "/new?kind=tiktok")
		wantStatus(t, "TikTok form", r, http.StatusOK)
		if !r.has("kind-tiktok") || !r.has("kind-pinterest") || !r.has("kind-google") {
			t.Error("the new destination page does not offer every platform")
		}
		if r.doc.Find(`select[name="event_source"]`).Length() != 1 || r.doc.Find(`input[name="api_version"]`).Length() != 0 ||
			r.doc.Find(`input[name="app_secret"]`).Length() != 0 {
			t.Error("the TikTok form does not show TikTok's fields alone")
		}
		wantStatus(t, "an unknown kind", b.get(base+"/new?kind=myspace"), http.StatusNotFound)

		bad := url.Values{"kind": {"tiktok"}, "name": {"TikTok"}, "pixel_id": {"C4 bad!"}, "event_source": {"app"}, "mode": {"live"},
			"ldu": {"off"}, "event_names": {"QualifiedLead ApplicationApproval"}}
		r = b.post(base, bad)
		wantStatus(t, "invalid TikTok destination", r, http.StatusUnprocessableEntity)
		for _, f := range []string{"pixel_id", "event_source", "access_token", "event_names"} {
			if r.text("error-"+f) == "" {
				t.Errorf("no inline error for %s", f)
			}
		}
		if r.inputValue("pixel_id") != "C4 bad!" || r.doc.Find(`textarea[name="event_names"]`).Text() != "QualifiedLead ApplicationApproval" {
			t.Error("what was typed is not kept")
		}

		// Codes and secrets that no request could carry are refused where
		// they were typed, never stored; a secret is never shown back.
		good := url.Values{"kind": {"tiktok"}, "name": {"TikTok"}, "pixel_id": {"C4TIKTOK1234"}, "event_source": {"web"}, "mode": {"test"},
			"ldu": {"off"}, "access_token": {"tok"}, "test_event_code": {"TEST1"}}
		for _, tc := range []struct {
			field, value string
		}{
			{"test_event_code", "TEST\xff"},
			{"test_event_code", strings.Repeat("T", 40_000)},
			{"test_event_code", "TEST 1"},
			{"access_token", "tok\x01en"},
			{"access_token", strings.Repeat("t", 40_000)},
		} {
			v := url.Values{}
			for k, vs := range good {
				v[k] = vs
			}
			v.Set(tc.field, tc.value)
			r := b.post(base, v)
			if r.status != http.StatusUnprocessableEntity || r.text("error-"+tc.field) == "" {
				t.Errorf("%s of %.20q: %d, error %q; want 422 with the field's error", tc.field, tc.value, r.status, r.text("error-"+tc.field))
			}
			if tc.field == "access_token" && strings.Contains(r.body, tc.value) {
				t.Errorf("a refused %s is shown back", tc.field)
			}
		}
		if ds, _ := s.Datasets(t.Context(), acc.ID); len(ds) != 0 {
			t.Errorf("refused forms stored %d destinations", len(ds))
		}

		const token = tiktoktest.Token
		d := connect(t, a, b, acc, url.Values{"kind": {"tiktok"}, "name": {"TikTok"}, "pixel_id": {"C4TIKTOK1234"}, "event_source": {"crm"},
			"access_token": {token}, "mode": {"test"}, "test_event_code": {"TEST77"}, "ldu": {"off"},
			"event_names": {"QualifiedLead = ApplicationApproval\n\n Purchase = CompletePayment "}})
		if d.Kind != models.KindTikTok || d.EventSource != "crm" || d.EventNames != `{"Purchase":"CompletePayment","QualifiedLead":"ApplicationApproval"}` {
			t.Errorf("stored %+v; want a crm TikTok destination with its own names", d)
		}
		if got, err := a.box.Open(d.TokenSealed, dispatch.TokenLabel(d.ID)); err != nil || got != token {
			t.Errorf("sealed token opens to %q, %v", got, err)
		}
		list := b.get(base)
		if !strings.Contains(list.text("dataset-platform"), "TikTok") {
			t.Errorf("the list's platform = %q; want TikTok", list.text("dataset-platform"))
		}
		page := b.get(fmt.Sprintf("%s/%d", base, d.ID))
		for _, r := range []resp{list, page} {
			if strings.Contains(r.body, token) {
				t.Error("a page shows the TikTok token")
			}
		}
		if got := page.doc.Find(`textarea[name="event_names"]`).Text(); got != "Purchase = CompletePayment\nQualifiedLead = ApplicationApproval\n" {
			t.Errorf("the form's own names = %q", got)
		}

		// Rules and stage mappings offer it by name and platform.
		for _, path := range []string{"/rules/new", "/stages/mappings/new"} {
			form := b.get(views.AccountURL(acc.ID, path))
			if got := form.doc.Find(`#f-dataset_id label`).Text(); !strings.Contains(got, "TikTok (TikTok)") {
				t.Errorf("%s offers %q; want the TikTok destination with its platform", path, got)
			}
		}

		r = b.post(fmt.Sprintf("%s/%d/test", base, d.ID), nil)
		wantStatus(t, "TikTok test event", r, http.StatusOK)
		if msg := r.text("test-result"); !strings.Contains(msg, "TikTok took the test event") {
			t.Errorf("test result = %q", msg)
		}
		reqs := a.tiktok.Requests()
		if len(reqs) != 1 || reqs[0].TestEventCode != "TEST77" || reqs[0].EventSource != "crm" || reqs[0].EventSourceID != "C4TIKTOK1234" {
			t.Fatalf("TikTok got %+v; want one crm test request to the pixel", reqs)
		}
		if user := fmt.Sprint(reqs[0].Data[0]["user"]); strings.Contains(user, "@") {
			t.Errorf("the test event sends raw contact data: %s", user)
		}

		// Its kind stays whatever the form posts.
		r = b.post(fmt.Sprintf("%s/%d", base, d.ID), url.Values{"kind": {"meta"}, "name": {"TikTok"}, "pixel_id": {"C4TIKTOK1234"},
			"event_source": {"web"}, "mode": {"live"}, "ldu": {"always"}})
		wantStatus(t, "save TikTok", r, http.StatusSeeOther)
		saved, _ := s.Dataset(t.Context(), acc.ID, d.ID)
		if saved.Kind != models.KindTikTok || saved.EventSource != "web" || saved.TokenSealed != d.TokenSealed || saved.EventNames != "" {
			t.Errorf("after saving: %+v; want TikTok still, web, the token kept, no own names", saved)
		}
	})
}

// TestConnectPinterestAndGoogle: Pinterest's and Google's forms, their
// checks, and their test events in each platform's test mode.
func TestConnectPinterestAndGoogle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		base := views.AccountURL(acc.ID, "/datasets")

		pin := connect(t, a, b, acc, url.Values{"kind": {"pinterest"}, "name": {"Pinterest"}, "pixel_id": {pinteresttest.AdAccount},
			"access_token": {pinteresttest.Token}, "mode": {"live"}, "ldu": {"off"}})
		r := b.post(fmt.Sprintf("%s/%d/test", base, pin.ID), nil)
		wantStatus(t, "Pinterest test event", r, http.StatusOK)
		if got := len(a.pinterest.TestRequests()); got != 1 || len(a.pinterest.Requests()) != 0 {
			t.Errorf("Pinterest got %d test requests and %d real; want 1 test request", got, len(a.pinterest.Requests()))
		}

		form := url.Values{"kind": {"google"}, "name": {"Google Ads"}, "pixel_id": {"123-45-67890"}, "mode": {"live"},
			"client_id": {""}, "login_account": {"98765"}, "event_names": {"Lead = 1111x"}}
		r = b.post(base, form)
		wantStatus(t, "invalid Google destination", r, http.StatusUnprocessableEntity)
		for _, f := range []string{"client_id", "login_account", "access_token", "app_secret"} {
			if r.text("error-"+f) == "" {
				t.Errorf("no inline error for %s", f)
			}
		}
		// A client secret with a space or a control character, and a
		// conversion action of 40,000 digits, are refused; the action is
		// quoted back cut short.
		form.Set("app_secret", "sec\x01ret")
		form.Set("event_names", "Lead = "+strings.Repeat("9", 40_000)+"x")
		r = b.post(base, form)
		if r.text("error-app_secret") == "" || strings.Contains(r.body, "sec\x01ret") {
			t.Errorf("a client secret with a control character: error %q; want it refused, not shown", r.text("error-app_secret"))
		}
		if msg := r.text("error-event_names"); msg == "" || len(msg) > 300 {
			t.Errorf("a 40,000-digit conversion action: error of %d characters; want a short one", len(msg))
		}
		g := connect(t, a, b, acc, url.Values{"kind": {"google"}, "name": {"Google Ads"}, "pixel_id": {"123-456-7890"}, "mode": {"test"},
			"client_id": {googletest.ClientID}, "app_secret": {googletest.ClientSecret}, "access_token": {googletest.RefreshToken},
			"login_account": {"987-654-3210"}, "consent": {"granted"}, "event_names": {"Lead = " + googletest.ConversionActions[0]}})
		if g.PixelID != googletest.OperatingAccount || g.LoginAccount != googletest.LoginAccount || g.Consent != models.ConsentGranted {
			t.Errorf("stored %+v; want the customer ids without hyphens, consent granted", g)
		}
		page := b.get(fmt.Sprintf("%s/%d", base, g.ID))
		for _, secret := range []string{googletest.ClientSecret, googletest.RefreshToken} {
			if strings.Contains(page.body, secret) {
				t.Error("the Google page shows a secret")
			}
		}
		r = b.post(fmt.Sprintf("%s/%d/test", base, g.ID), nil)
		wantStatus(t, "Google test event", r, http.StatusOK)
		if msg := r.text("test-result"); !strings.Contains(msg, "Google Ads took the test event") {
			t.Errorf("test result = %q", msg)
		}
		if got := len(a.google.ValidateOnlyRequests()); got != 1 || len(a.google.Requests()) != 0 {
			t.Errorf("Google got %d validateOnly requests and %d real; want 1 validateOnly", got, len(a.google.Requests()))
		}

		// Another account's destination answers 404.
		other, _ := a.ingestAccount("other", "US")
		wantStatus(t, "another account's destination", b.get(views.AccountURL(other.ID, fmt.Sprintf("/datasets/%d", g.ID))), http.StatusNotFound)
		wantStatus(t, "another account's destination", b.get(fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/datasets"), g.ID+1000)), http.StatusNotFound)
	})
}
