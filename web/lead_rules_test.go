package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// The lead page says which send rules match the lead and, for the others,
// what decided; a manual rule's button queues its event once.
func TestLeadPageRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		manual := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Hand picked", Mode: "manual", EventName: "Contact",
			Combinator: "and", Conditions: `[]`, Enabled: true}
		picky := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Gmail only", Mode: "automatic_match", EventName: "GmailLead",
			Combinator: "and", Conditions: `[{"field":"email_domain","match_type":"equals","pattern":"gmail.com"}]`, Enabled: true}
		for _, r := range []*models.SendRule{&manual, &picky} {
			if err := s.CreateSendRule(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
		}
		viewer := a.user("vic@example.com", false)
		if err := s.SetMember(ctx, acc.ID, viewer.ID, "viewer"); err != nil {
			t.Fatal(err)
		}
		lead := a.postLead(key, `{"email":"ann@acme.example","client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0","event_source_url":"https://acme.example/form"}`)
		b := a.browser()
		b.login("vic@example.com")
		lp := views.AccountURL(acc.ID, fmt.Sprintf("/leads/%d", lead.LeadID))
		r := b.get(lp)
		wantStatus(t, "lead page", r, http.StatusOK)
		rules := r.text("lead-rules")
		for _, want := range []string{"Completed leads to Main", "the rule has no conditions", "Gmail only",
			`condition 1 (Email domain is "gmail.com") did not match`, "Hand picked", "sends when a person clicks"} {
			if !strings.Contains(strings.Join(strings.Fields(rules), " "), want) {
				t.Errorf("rules section %q; want %q", rules, want)
			}
		}
		if n := r.doc.Find(`[data-testid="send-manual"]`).Length(); n != 1 {
			t.Fatalf("%d manual buttons; want 1", n)
		}
		send := fmt.Sprintf("%s/rules/%d/send", lp, manual.ID)
		wantStatus(t, "send manual", b.post(send, url.Values{}), http.StatusSeeOther)
		if !strings.Contains(b.get(lp).body, "Contact queued for Meta") {
			t.Error("no flash saying the event was queued")
		}
		b.post(send, url.Values{})
		if !strings.Contains(b.get(lp).body, "already queued") {
			t.Error("a second click should say nothing is sent twice")
		}
		evs, err := s.LeadEvents(ctx, acc.ID, lead.LeadID)
		if err != nil || len(evs) != 2 {
			t.Errorf("lead events = %d, %v; want Lead and one Contact", len(evs), err)
		}
		wantStatus(t, "an automatic rule's button", b.post(fmt.Sprintf("%s/rules/%d/send", lp, picky.ID), url.Values{}), http.StatusSeeOther)
		if !strings.Contains(b.get(lp).body, "not an enabled manual rule") {
			t.Error("an automatic rule's button should be refused with a reason")
		}

		// Another account's rule or lead is not found.
		other, otherKey := a.ingestAccount("beta", "DE")
		od := models.Dataset{AccountID: other.ID, Name: "Theirs", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &od); err != nil {
			t.Fatal(err)
		}
		theirs := models.SendRule{AccountID: other.ID, DatasetID: od.ID, Name: "Theirs", Mode: "manual", EventName: "Contact",
			Combinator: "and", Conditions: `[]`, Enabled: true}
		if err := s.CreateSendRule(ctx, &theirs, nil); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, "another account's rule", b.post(fmt.Sprintf("%s/rules/%d/send", lp, theirs.ID), url.Values{}), http.StatusNotFound)
		theirLead := a.postLead(otherKey, `{"email":"x@example.com"}`)
		wantStatus(t, "another account's lead", b.post(views.AccountURL(acc.ID, fmt.Sprintf("/leads/%d/rules/%d/send", theirLead.LeadID, manual.ID)), url.Values{}), http.StatusNotFound)
		wantStatus(t, "a rule id that is no number", b.post(lp+"/rules/x/send", url.Values{}), http.StatusNotFound)
	})
}
