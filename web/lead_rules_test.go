package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// The lead page says which send rules match the lead and, for the others,
// what decided; a manual rule's button queues its event once.
func TestLeadPageRules(t *testing.T) {
	t.Parallel()
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
		if err := s.SetMember(ctx, acc.ID, viewer.ID, models.RoleSales); err != nil { // marks stages, sends nothing by hand
			t.Fatal(err)
		}
		lead := a.postLead(key, `{"email":"ann@acme.example","client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0","event_source_url":"https://acme.example/form"}`)
		lp := views.AccountURL(acc.ID, fmt.Sprintf("/leads/%d", lead.LeadID))
		send := fmt.Sprintf("%s/rules/%d/send", lp, manual.ID)

		// A viewer reads the verdicts and has the stage buttons only: no
		// Send button, and a Send posted anyway is refused.
		vb := a.browser()
		vb.login("vic@example.com")
		r := vb.get(lp)
		wantStatus(t, "lead page (viewer)", r, http.StatusOK)
		if r.has("send-manual") || !r.has("mark-junk") || !r.has("stage-form") {
			t.Errorf("viewer: send button %v, junk button %v, stage form %v; want the stage buttons only",
				r.has("send-manual"), r.has("mark-junk"), r.has("stage-form"))
		}
		wantStatus(t, "a viewer's manual send", vb.post(send, url.Values{}), http.StatusForbidden)
		if evs, _ := s.LeadEvents(ctx, acc.ID, lead.LeadID); len(evs) != 1 {
			t.Errorf("a viewer's send queued: %d events", len(evs))
		}

		b := a.browser()
		b.login("acme-owner@example.com")
		r = b.get(lp)
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

// The lead page lists the enabled rules only; for an OR rule it names each
// condition that held; for a rule that matches but made no event of the
// lead it says why and offers to apply it (to editors), or names the rule
// that owns the one event both make.
func TestLeadPageRuleVerdicts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		add := func(name, event, combinator, conds string, enabled bool) models.SendRule {
			t.Helper()
			r := models.SendRule{AccountID: f.acc.ID, DatasetID: f.d.ID, Name: name, Mode: "automatic_match", EventName: event,
				Combinator: combinator, Conditions: conds, Enabled: enabled}
			if err := s.CreateSendRule(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			return r
		}
		berlin := `{"field":"city","match_type":"equals","pattern":"berlin"}`
		add("Switched off", "OffLead", "and", "["+berlin+"]", false)
		add("Berlin or rich", "BerlinLead", "or", "["+berlin+`,{"field":"email_domain","match_type":"equals","pattern":"gmail.com"},`+
			`{"field":"fields.budget","match_type":"gt","pattern":"5000"}]`, true)
		add("Also Lead", "Lead", "and", "["+berlin+"]", true)
		fresh := f.a.postLead(f.key, ruleLead(1, "ann@acme-roofing.com", "Berlin", "9000", "2026-11-30T10:00:00Z", nil))
		old := f.a.postLead(f.key, ruleLead(2, "bea@acme-roofing.com", "Berlin", "9000", "2026-11-20T10:00:00Z", nil))
		f.a.advance(time.Minute) // the rule is made a minute after the leads
		late := add("Made later", "LateLead", "and", "["+berlin+"]", true)

		// A rule's verdict, and what the timeline says of its event.
		rows := func(r resp) map[string]string {
			out := map[string]string{}
			r.doc.Find(`[data-testid="lead-rule"]`).Each(func(_ int, row *goquery.Selection) {
				name := strings.TrimSpace(row.Find(".rule-name").Text())
				out[name] = strings.Join(strings.Fields(row.Text()), " ")
			})
			r.doc.Find(`[data-testid="why-no-event"] li`).Each(func(_ int, li *goquery.Selection) {
				name := strings.TrimSpace(li.Find(".rule-name").Text())
				out[name] += " " + strings.Join(strings.Fields(li.Find(`[data-testid="rule-event-note"]`).Text()), " ")
			})
			return out
		}
		lp := views.AccountURL(f.acc.ID, "/leads/"+itoa(fresh.LeadID))
		page := f.b.get(lp)
		wantStatus(t, "lead page", page, http.StatusOK)
		got := rows(page)
		if _, ok := got["Switched off"]; ok || len(got) != 4 {
			t.Errorf("rules listed %q; want the four enabled ones", got)
		}
		if want := `conditions 1 (City is "berlin") and 3 (Form field budget is greater than 5000) matched`; !strings.Contains(got["Berlin or rich"], want) {
			t.Errorf("OR rule says %q; want %q", got["Berlin or rich"], want)
		}
		if want := "One Lead event for both: Completed leads to Main made it first, and owns it."; !strings.Contains(got["Also Lead"], want) {
			t.Errorf("the second Lead rule says %q; want %q", got["Also Lead"], want)
		}
		if want := "No LateLead event: the rule was created after the lead last changed"; !strings.Contains(got["Made later"], want) {
			t.Errorf("the later rule says %q; want %q", got["Made later"], want)
		}
		for _, name := range []string{"Completed leads to Main", "Berlin or rich"} {
			if strings.Contains(got[name], "event") {
				t.Errorf("%s, whose event the lead has, says %q", name, got[name])
			}
		}
		links := page.doc.Find(`[data-testid="rule-apply"]`)
		href, _ := links.Attr("href")
		if links.Length() != 1 || href != f.url("/"+itoa(late.ID)+"/apply") {
			t.Fatalf("apply links %d, to %q; want one, to the later rule's confirmation", links.Length(), href)
		}
		ask := f.b.get(href)
		wantStatus(t, "apply confirmation from the lead page", ask, http.StatusOK)
		if got := ask.text("confirm-message"); !strings.HasPrefix(got, "1 lead of the last 7 days matches this rule") {
			t.Errorf("confirmation %q", got)
		}
		wantStatus(t, "apply", f.b.post(href, url.Values{"confirm": {"yes"}}), http.StatusSeeOther)
		if got := rows(f.b.get(lp))["Made later"]; strings.Contains(got, "No LateLead event") {
			t.Errorf("after applying, the later rule says %q", got)
		}

		// A lead past Meta's 7 days: no event can be sent, nothing to apply.
		oldPage := f.b.get(views.AccountURL(f.acc.ID, "/leads/"+itoa(old.LeadID)))
		if got := rows(oldPage)["Made later"]; !strings.Contains(got, "the lead is older than Meta's 7 days") || oldPage.has("rule-apply") {
			t.Errorf("the old lead says %q (apply link %v)", got, oldPage.has("rule-apply"))
		}

		// A viewer reads why, and no link.
		viewer := f.a.user("vic@example.com", false)
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		add("Made later still", "Later2", "and", "["+berlin+"]", true)
		vb := f.a.browser()
		vb.login(viewer.Email)
		vp := vb.get(lp)
		if got := rows(vp)["Made later still"]; !strings.Contains(got, "An editor can apply the rule") || vp.has("rule-apply") {
			t.Errorf("viewer: %q (apply link %v)", got, vp.has("rule-apply"))
		}
	})
}
