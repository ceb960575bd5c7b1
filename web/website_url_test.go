package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// The owner sets the account's Website URL on the Settings page; a bad one
// is refused inline, keeping what was typed; editors and viewers cannot
// change it.
func TestSettingsWebsiteURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		b := a.browser()
		b.login("ada@example.com")
		path := views.AccountURL(acc.ID, "/settings")
		form := func(website string) url.Values {
			return url.Values{"name": {"Acme"}, "timezone": {"UTC"}, "currency": {"USD"}, "website_url": {website}}
		}
		saved := func() string {
			t.Helper()
			got, err := s.AccountBySlug(t.Context(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			return got.WebsiteURL
		}

		r := b.get(path)
		if !r.doc.Find(`input[name="website_url"]`).Is("input") || r.inputValue("website_url") != "" {
			t.Fatalf("settings page: want an empty Website URL field\n%s", r.body)
		}
		r = b.post(path, form(" https://acme.example/contact "))
		if r.status != http.StatusSeeOther || saved() != "https://acme.example/contact" {
			t.Fatalf("save = %d, stored %q; want a redirect and the URL, trimmed", r.status, saved())
		}
		if r = b.get(path); r.inputValue("website_url") != "https://acme.example/contact" {
			t.Errorf("field after saving = %q", r.inputValue("website_url"))
		}

		for _, bad := range []string{"acme.example/contact", "ftp://acme.example/", "https://", "https://acme.example/" + strings.Repeat("x", 2000)} {
			for _, htmx := range []bool{false, true} {
				h := http.Header{}
				if htmx {
					h.Set("HX-Request", "true")
				}
				r := b.postWith(path, form(bad), h)
				wantStatus(t, fmt.Sprintf("website_url %.30q (htmx %v)", bad, htmx), r, http.StatusUnprocessableEntity)
				if r.text("error-website_url") == "" || r.inputValue("website_url") != bad {
					t.Errorf("website_url %.30q (htmx %v): error %q, field %.30q; want an inline error and the typed value",
						bad, htmx, r.text("error-website_url"), r.inputValue("website_url"))
				}
				if htmx && strings.Contains(r.body, "<html") {
					t.Error("htmx answer should be the form fragment alone")
				}
			}
		}
		if saved() != "https://acme.example/contact" {
			t.Errorf("stored %q after invalid posts; want it unchanged", saved())
		}

		// Empty is allowed: no Website URL.
		r = b.postWith(path, form(""), http.Header{"Hx-Request": {"true"}})
		if r.status != http.StatusOK || r.text("settings-flash") != "Settings saved." || saved() != "" {
			t.Errorf("clearing = %d %q, stored %q", r.status, r.text("settings-flash"), saved())
		}

		for _, role := range []models.Role{models.RoleSales, models.RoleViewer} {
			u := a.user(string(role)+"@example.com", false)
			if err := s.SetMember(t.Context(), acc.ID, u.ID, role); err != nil {
				t.Fatal(err)
			}
			m := a.browser()
			m.login(u.Email)
			wantStatus(t, string(role)+" settings page", m.get(path), http.StatusForbidden)
			wantStatus(t, string(role)+" save", m.post(path, form("https://evil.example/")), http.StatusForbidden)
		}
		if saved() != "" {
			t.Errorf("stored %q after an editor and a viewer posted; want it unchanged", saved())
		}
	})
}

// readmeLead is the body of the ingest example in README.md.
func readmeLead(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)-d '(\{[^']*\})' http://localhost:8080/api/v1/leads`).FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no curl example posting to /api/v1/leads")
	}
	return string(m[1])
}

// replyEvent is one event of an ingest reply.
type replyEvent struct {
	EventName string `json:"event_name"`
	Status    string `json:"status"`
	Reason    *string
}

func events(t *testing.T, r apiReply) []replyEvent {
	t.Helper()
	out := make([]replyEvent, len(r.Events))
	for i, raw := range r.Events {
		var e struct {
			replyEvent
			Reason *string `json:"reason"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		out[i] = e.replyEvent
		out[i].Reason = e.Reason
	}
	return out
}

// The README's example lead is sent to Meta. The example as it used to be
// (no user agent, no page URL) is held back at once with the reason in the
// reply, and Meta receives nothing; with the account's Website URL set, a
// retry sends it once the lead has what Meta needs.
func TestReadmeExampleSends(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})

		body := readmeLead(t)
		r := a.postLead(key, body)
		evs := events(t, r)
		if r.status != http.StatusCreated || len(evs) != 1 || evs[0].Status != "queued" || evs[0].Reason != nil {
			t.Fatalf("README example = %d %s; want one queued event, without a reason", r.status, r.raw)
		}
		a.drain()
		reqs := a.meta.Requests()
		if len(reqs) != 1 || len(reqs[0].Events) != 1 {
			t.Fatalf("Meta got %+v; want the README's lead", reqs)
		}
		var want struct {
			UserAgent string `json:"client_user_agent"`
			URL       string `json:"event_source_url"`
		}
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		sent := reqs[0].Events[0]
		ud, _ := sent["user_data"].(map[string]any)
		if sent["event_source_url"] != want.URL || ud["client_user_agent"] != want.UserAgent {
			t.Errorf("event sent = %v; want the example's page URL and user agent", sent)
		}
		if lead, _ := s.LeadEvents(t.Context(), acc.ID, r.LeadID); len(lead) != 1 || lead[0].Status != models.EventSent {
			t.Errorf("README lead's events = %+v; want one sent", lead)
		}

		// The old example: held back at once, with the reason. (The same
		// person again would be junk as a duplicate, with no event at all.)
		if err := s.UpdateJunkSettings(t.Context(), acc.ID, `{"duplicate":{"enabled":false}}`); err != nil {
			t.Fatal(err)
		}
		old := a.postLead(key, `{"email": "jane@example.com", "first_name": "Jane"}`)
		evs = events(t, old)
		const reason = "not sent: event_source_url: required for website events"
		if old.status != http.StatusCreated || len(evs) != 1 || evs[0].Status != "failed" || evs[0].Reason == nil || *evs[0].Reason != reason {
			t.Fatalf("old README example = %d %s; want its event failed with %q", old.status, old.raw, reason)
		}
		a.drain()
		if got := len(a.meta.Requests()); got != 1 {
			t.Errorf("Meta got %d requests; want nothing more for the held-back event", got)
		}

		// With the Website URL set, a lead posted without a page URL takes
		// it and is sent; a held-back one waiting for it is sent on retry.
		waiting := a.postLead(key, `{"email": "max@example.com", "client_user_agent": "Mozilla/5.0 (Test)"}`)
		if evs := events(t, waiting); len(evs) != 1 || evs[0].Status != "failed" {
			t.Fatalf("lead without a page URL = %s; want its event held back", waiting.raw)
		}
		settings := url.Values{"name": {"Acme"}, "timezone": {"UTC"}, "default_country": {"US"}, "currency": {"USD"},
			"website_url": {"https://acme.example/contact"}}
		wantStatus(t, "set Website URL", b.post(views.AccountURL(acc.ID, "/settings"), settings), http.StatusSeeOther)
		filled := a.postLead(key, `{"email": "ann@example.com", "client_user_agent": "Mozilla/5.0 (Test)"}`)
		if evs := events(t, filled); len(evs) != 1 || evs[0].Status != "queued" {
			t.Fatalf("lead without a page URL, Website URL set = %s; want its event queued", filled.raw)
		}
		held, _ := s.LeadEvents(t.Context(), acc.ID, waiting.LeadID)
		wantStatus(t, "retry", b.post(fmt.Sprintf("%s/%d/retry", views.AccountURL(acc.ID, "/events"), held[0].ID), nil), http.StatusSeeOther)
		a.drain()
		got := map[string]string{}
		for _, req := range a.meta.Requests()[1:] {
			for _, e := range req.Events {
				got[fmt.Sprint(e["event_id"])] = fmt.Sprint(e["event_source_url"])
			}
		}
		for _, id := range []int64{waiting.LeadID, filled.LeadID} {
			evs, _ := s.LeadEvents(t.Context(), acc.ID, id)
			if len(evs) != 1 || evs[0].Status != models.EventSent || got[evs[0].EventID] != "https://acme.example/contact" {
				t.Errorf("lead %d: events %+v, Meta got URL %q; want it sent with the Website URL", id, evs, got[evs[0].EventID])
			}
		}
		if l, _ := s.Lead(t.Context(), acc.ID, waiting.LeadID); l.EventSourceURL != "https://acme.example/contact" {
			t.Errorf("waiting lead's event_source_url = %q; want the Website URL, as sent", l.EventSourceURL)
		}
	})
}
