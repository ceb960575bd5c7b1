package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// "Send a test lead" captures a lead marked test by the collect API's path,
// from the key's first origin: it shows under "Check the install" and on
// the leads pages as a test lead, with the events a real lead would make,
// and none of them reaches Meta, even from a live dataset; a real lead of
// the snippet does. A revoked key has nothing to test; another account's
// key is a 404; sales and viewers cannot send one.
func TestSendTestLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, ingest := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		live := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})
		qualified := models.SendRule{AccountID: acc.ID, DatasetID: live.ID, Name: "Qualified", Mode: string(rule.Stage), Stage: models.StageQualified,
			EventName: "QualifiedLead", Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &qualified, nil); err != nil {
			t.Fatal(err)
		}
		k := siteKey(t, s, acc, siteOrigin)
		page := views.SettingsURL(acc.ID, views.SettingsSite)
		send := views.AccountURL(acc.ID, "/site-keys/"+itoa(k.ID)+"/test-lead")

		if !b.get(page).has("send-test-lead") {
			t.Fatal("no Send a test lead button on a live key")
		}
		r := b.post(send, nil)
		wantStatus(t, "send a test lead", r, http.StatusSeeOther)
		if want := page + "#site-arrivals"; r.location() != want {
			t.Errorf("redirect to %q; want %q", r.location(), want)
		}
		r = b.get(page)
		if got := r.text("flash"); !strings.Contains(got, "A real lead like it would send Lead to Main") || !strings.Contains(got, "never go to Meta") {
			t.Errorf("flash %q; want what a real lead would send", got)
		}
		arrival := r.doc.Find(`[data-testid="site-arrival"]`)
		if arrival.Length() != 1 || !strings.Contains(arrival.Text(), "Test Lead") || arrival.Find(`[data-testid="site-arrival-test"]`).Length() != 1 {
			t.Errorf("arrivals %q; want the test lead, marked test", arrival.Text())
		}
		if seen := r.text("site-origin-seen"); seen != "never" {
			t.Errorf("the origin's last lead reads %q; a test lead is not the site's", seen)
		}

		leads, err := s.Leads(t.Context(), acc.ID, store.LeadFilter{}, nil, 10)
		if err != nil || len(leads) != 1 {
			t.Fatalf("leads = %d, %v; want the test lead", len(leads), err)
		}
		l := leads[0]
		if !l.ReceivedAt.Equal(a.clock()) || !l.CreatedAt.Equal(a.clock()) {
			t.Errorf("test lead received %v, created %v; want both at the app's clock, %v", l.ReceivedAt, l.CreatedAt, a.clock())
		}
		if !l.Test || l.Junk || l.Email == "" || !strings.HasSuffix(l.Email, "@northwind.example") || l.EventSourceURL != siteOrigin+"/" ||
			l.ClientIP == "" || l.ClientUserAgent == "" || l.ExternalID == nil || !strings.HasPrefix(*l.ExternalID, "ls_") {
			t.Errorf("test lead %+v", l)
		}
		evs, err := s.LeadEvents(t.Context(), acc.ID, l.ID)
		if err != nil || len(evs) != 1 || evs[0].EventName != "Lead" || evs[0].Status != models.EventFailed ||
			evs[0].LastError != models.ReasonTestLead || evs[0].State() != models.EventNotSent || evs[0].Payload != "" {
			t.Fatalf("test lead's events = %+v, %v; want its Lead, not sent as a test lead's", evs, err)
		}
		a.drain()
		if n := a.meta.EventsReceived(); n != 0 {
			t.Fatalf("Meta received %d events of a test lead", n)
		}
		// A person's retry from the send log builds it again, and holds it again.
		wantStatus(t, "retry", b.post(views.AccountURL(acc.ID, "/events/"+itoa(evs[0].ID)+"/retry"), nil), http.StatusSeeOther)
		a.drain()
		if n := a.meta.EventsReceived(); n != 0 {
			t.Fatalf("Meta received %d events of a retried test lead", n)
		}
		if e, _ := s.Event(t.Context(), acc.ID, evs[0].ID); e.LastError != models.ReasonTestLead {
			t.Errorf("retried test lead's event: %q; want %q", e.LastError, models.ReasonTestLead)
		}

		// A stage recorded on it makes its event, not sent either.
		a.advance(2 * time.Minute)
		st := a.postStage(ingest, `{"lead":{"id":`+itoa(l.ID)+`},"stage":"qualified","occurred_at":"2026-12-01T12:01:00Z"}`)
		if st.status != http.StatusCreated && st.status != http.StatusOK {
			t.Fatalf("stage = %d %s", st.status, st.raw)
		}
		a.drain()
		if n := a.meta.EventsReceived(); n != 0 {
			t.Fatalf("Meta received %d events of a test lead's stage", n)
		}
		if evs, _ := s.LeadEvents(t.Context(), acc.ID, l.ID); len(evs) != 2 || evs[1].EventName != "QualifiedLead" && evs[0].EventName != "QualifiedLead" ||
			evs[0].LastError != models.ReasonTestLead || evs[1].LastError != models.ReasonTestLead {
			t.Errorf("after qualified the test lead's events = %+v; want Lead and QualifiedLead, not sent", evs)
		}

		// A person's stage on the lead page says so.
		booked := models.SendRule{AccountID: acc.ID, DatasetID: live.ID, Name: "Booked", Mode: string(rule.Stage), Stage: models.StageBooked,
			EventName: "Schedule", Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &booked, nil); err != nil {
			t.Fatal(err)
		}
		a.advance(time.Minute)
		lp := views.AccountURL(acc.ID, "/leads/"+itoa(l.ID))
		wantStatus(t, "stage on the lead page", b.post(lp+"/stages", url.Values{"stage": {models.StageBooked}}), http.StatusSeeOther)
		if got := b.get(lp).text("flash"); !strings.Contains(got, "Made Schedule, not sent: a test lead's events never go to Meta.") {
			t.Errorf("the lead page's stage message %q", got)
		}

		// A rule made later and applied to recent leads decides its event,
		// not sent either.
		contact := models.SendRule{AccountID: acc.ID, DatasetID: live.ID, Name: "Contacts", Mode: "automatic_completed",
			EventName: "Contact", Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &contact, nil); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, "apply a rule", b.post(views.AccountURL(acc.ID, "/rules/"+itoa(contact.ID)+"/apply"), url.Values{"confirm": {"yes"}}), http.StatusSeeOther)
		a.drain()
		if n := a.meta.EventsReceived(); n != 0 {
			t.Fatalf("Meta received %d events of a test lead after a rule was applied", n)
		}
		evs, _ = s.LeadEvents(t.Context(), acc.ID, l.ID)
		applied := 0
		for _, e := range evs {
			if e.EventName == "Contact" {
				applied++
				if e.LastError != models.ReasonTestLead || e.Payload != "" {
					t.Errorf("the applied rule's event of a test lead: %+v", e)
				}
			}
		}
		if applied != 1 {
			t.Errorf("%d Contact events of the test lead; want the applied rule's one", applied)
		}

		// Pages mark it: the lead page, the leads list; the Overview counts its
		// event as not sent.
		if r := b.get(views.AccountURL(acc.ID, "/leads/"+itoa(l.ID))); !r.has("lead-test") {
			t.Error("the lead page does not say it is a test lead")
		}
		if r := b.get(views.AccountURL(acc.ID, "/leads")); !r.has("test-badge") {
			t.Error("the leads list does not mark the test lead")
		}
		if r := b.get(views.AccountURL(acc.ID, "/leads.csv")); !strings.HasSuffix(strings.TrimSpace(r.body), ",true") ||
			!strings.HasSuffix(strings.SplitN(r.body, "\n", 2)[0], ",test") {
			t.Errorf("leads.csv does not mark the test lead:\n%s", r.body)
		}
		if r := b.get(views.AccountURL(acc.ID, "/events?status=not_sent")); !strings.Contains(r.body, "a test lead, which never goes to Meta") {
			t.Error("the send log's not sent events do not say why the test lead's was not sent")
		}

		// The snippet's real lead goes to Meta.
		if rep, _ := a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.7",
			`{"external_id":"ls_00000000000000000000000000000001","email":"jane@northwind.example","event_source_url":"https://www.northwind.example/quote"}`); rep.status != http.StatusCreated {
			t.Fatalf("collect = %d", rep.status)
		}
		a.drain()
		if n := a.meta.EventsReceived(); n != 2 {
			t.Errorf("Meta received %d events; want the real lead's Lead and Contact", n)
		}

		// Another account's key; a revoked key; members who may not.
		other, _ := a.ingestAccount("other", "US")
		theirs := siteKey(t, s, other, "https://other.example")
		wantStatus(t, "another account's key", b.post(views.AccountURL(acc.ID, "/site-keys/"+itoa(theirs.ID)+"/test-lead"), nil), http.StatusNotFound)
		if n, _ := s.Leads(t.Context(), other.ID, store.LeadFilter{}, nil, 10); len(n) != 0 {
			t.Errorf("another account got %d leads", len(n))
		}
		wantStatus(t, "revoke", b.post(views.AccountURL(acc.ID, "/site-keys/"+itoa(k.ID)+"/revoke"), nil), http.StatusSeeOther)
		wantStatus(t, "a revoked key's test lead", b.post(send, nil), http.StatusSeeOther)
		if got := b.get(page).text("flash"); !strings.Contains(got, "nothing to test") {
			t.Errorf("a revoked key's test: flash %q", got)
		}
		if ls, _ := s.Leads(t.Context(), acc.ID, store.LeadFilter{}, nil, 10); len(ls) != 2 {
			t.Errorf("%d leads after a revoked key's test; want the two", len(ls))
		}
	})
}

// Sales and viewers cannot send a test lead.
func TestSendTestLeadRoles(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRolesFixture(t, s)
	k := siteKey(t, s, f.acc, siteOrigin)
	for _, role := range []models.Role{models.RoleSales, models.RoleViewer} {
		if r := f.members[role].post(views.AccountURL(f.acc.ID, "/site-keys/"+itoa(k.ID)+"/test-lead"), nil); r.status != http.StatusForbidden {
			t.Errorf("%s: send a test lead = %d; want 403", role, r.status)
		}
	}
	if ls, _ := s.Leads(t.Context(), f.acc.ID, store.LeadFilter{}, nil, 100); len(ls) != 0 {
		for _, l := range ls {
			if l.Test {
				t.Errorf("a refused member made test lead %d", l.ID)
			}
		}
	}
}
