package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestMetaOutageEndToEnd: leads arrive while Meta refuses connections. The
// dataset is held and the account's banner says so to everyone, with
// "Try now" for editors; once Meta is back, one try lifts the hold, every
// event arrives once, and the banner goes.
func TestMetaOutageEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		viewer := a.user("vera@example.com", false)
		if err := s.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})
		down := dispatch.New(dispatch.Options{Store: s, Sender: &capi.Client{}, Box: a.box, Log: testLogger(),
			GraphURL: capitest.Unreachable(t), DefaultVersion: capitest.Version, Now: a.clock})

		var ids []int64
		for i := range 12 {
			body := strings.Replace(goodLead, `"form-1"`, fmt.Sprintf(`"form-%d"`, i), 1)
			body = strings.Replace(body, "Jane.Doe@", fmt.Sprintf("jane%d@", i), 1)
			body = strings.Replace(body, "692-4281", fmt.Sprintf("692-%04d", 4300+i), 1)
			r := a.postLead(key, body)
			if r.status != http.StatusCreated {
				t.Fatalf("post lead %d = %d %s", i, r.status, r.raw)
			}
			ids = append(ids, r.LeadID)
			if i%4 == 3 {
				if _, err := down.Drain(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		}

		overview := views.AccountURL(acc.ID, "")
		r := b.get(overview)
		alert := r.text("account-alert")
		if !strings.Contains(alert, "Meta unreachable for dataset Main since") || !strings.Contains(alert, "12 events waiting") ||
			!strings.Contains(alert, "Last error: network:") {
			t.Errorf("banner during the outage = %q", alert)
		}
		if !r.has("alert-action") {
			t.Error("no 'Try now' for the owner")
		}
		if r := b.get(views.AccountURL(acc.ID, "/datasets")); !r.has("dataset-held") {
			t.Error("the Datasets page does not mark the held dataset")
		}
		vb := a.browser()
		vb.login(viewer.Email)
		if r := vb.get(overview); !strings.Contains(r.text("account-alert"), "Meta unreachable") || r.has("alert-action") {
			t.Errorf("viewer's banner = %q, try now shown %v; want the news without the button", r.text("account-alert"), r.has("alert-action"))
		}
		for _, id := range ids {
			evs, err := s.LeadEvents(t.Context(), acc.ID, id)
			if err != nil || len(evs) != 1 || evs[0].Status != models.EventQueued || evs[0].Attempts != 0 {
				t.Fatalf("lead %d's events during the outage = %+v, %v; want one queued, no attempt spent", id, evs, err)
			}
		}
		if got := len(a.meta.Requests()); got != 0 {
			t.Fatalf("the live Meta got %d requests during the outage", got)
		}

		// Meta is back: an editor's "Try now" sends at once.
		ds, _ := s.Datasets(t.Context(), acc.ID)
		r = b.post(views.AccountURL(acc.ID, fmt.Sprintf("/datasets/%d/probe", ds[0].ID)), nil)
		wantStatus(t, "try now", r, http.StatusSeeOther)
		a.drain()
		if got := a.meta.EventsReceived(); got != 12 {
			t.Errorf("Meta received %d events; want all 12, once each", got)
		}
		seen := map[string]int{}
		for _, req := range a.meta.Requests() {
			for _, id := range req.EventIDs() {
				seen[id]++
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("event %s sent %d times", id, n)
			}
		}
		if r := b.get(overview); r.has("account-alert") {
			t.Errorf("banner after Meta came back: %q; want none", r.text("account-alert"))
		}
		if ds, _ := s.DatasetByID(t.Context(), ds[0].ID); ds.HeldSince != nil {
			t.Error("dataset still held")
		}
		// The same click replayed once Meta is back says so, and changes nothing.
		r = b.post(views.AccountURL(acc.ID, fmt.Sprintf("/datasets/%d/probe", ds[0].ID)), nil)
		wantStatus(t, "try now, replayed", r, http.StatusSeeOther)
		if got := b.get(r.location()).text("flash"); !strings.Contains(got, "reachable again") {
			t.Errorf("replayed try now says %q; want that the dataset sends as usual", got)
		}

		// Try now is for editors, on their own account's datasets only.
		if r := vb.post(views.AccountURL(acc.ID, fmt.Sprintf("/datasets/%d/probe", ds[0].ID)), nil); r.status != http.StatusForbidden {
			t.Errorf("viewer's try now = %d; want 403", r.status)
		}
		other, _ := a.ingestAccount("other", "US")
		ob := a.browser()
		ob.login("other-owner@example.com")
		if r := ob.post(views.AccountURL(other.ID, fmt.Sprintf("/datasets/%d/probe", ds[0].ID)), nil); r.status != http.StatusNotFound {
			t.Errorf("try now on another account's dataset = %d; want 404", r.status)
		}
	})
}

// TestFixingAPausedDatasetResumesIt: a dataset paused because Meta refused
// its requests (a wrong dataset id) resumes when an editor fixes the id;
// an unrelated edit leaves the pause for a person to fix the cause.
func TestFixingAPausedDatasetResumesIt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		form := url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}}
		d := connect(t, a, b, acc, form)
		pause := func() {
			t.Helper()
			if err := s.PauseDataset(t.Context(), d.ID, "Meta refused the requests: (#100) no such dataset", a.clock()); err != nil {
				t.Fatal(err)
			}
		}
		paused := func() bool {
			t.Helper()
			got, err := s.DatasetByID(t.Context(), d.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.PausedAt != nil
		}
		page := views.AccountURL(acc.ID, fmt.Sprintf("/datasets/%d", d.ID))
		pause()
		form.Del("access_token")
		form.Set("ldu", "always")
		b.get(page)
		wantStatus(t, "unrelated edit", b.post(page, form), http.StatusSeeOther)
		if !paused() {
			t.Error("changing Limited Data Use resumed a dataset paused for its requests")
		}
		form.Set("pixel_id", "543210987654321")
		wantStatus(t, "fix the dataset id", b.post(page, form), http.StatusSeeOther)
		if paused() {
			t.Error("fixing the dataset id left the dataset paused")
		}
	})
}
