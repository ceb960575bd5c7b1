package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// logRow is one row of the send log as a person reads it.
type logRow struct {
	queued, event, eventHref, lead, leadHref, status string
}

func readSendLog(r resp) []logRow {
	var rows []logRow
	r.doc.Find(`[data-testid="event-row"]`).Each(func(_ int, s *goquery.Selection) {
		ev, lead := s.Find(`[data-testid="event-link"]`), s.Find(`[data-testid="event-lead"]`)
		row := logRow{status: strings.TrimSpace(s.Find(`[data-testid="event-status"]`).Text()),
			event: strings.TrimSpace(ev.Text()), lead: strings.TrimSpace(lead.Text())}
		row.queued, _ = s.Find(`[data-testid="event-queued"] time`).Attr("datetime")
		row.eventHref, _ = ev.Attr("href")
		row.leadHref, _ = lead.Attr("href")
		rows = append(rows, row)
	})
	return rows
}

// The send log reads as a list: newest first by the time it shows (an
// applied rule's batch of older leads included), the lead by its name or
// email as the link, the event name as the link to the event, statuses in
// words; the event's page names the rule that made it, with a link, and
// shows its JSON as Meta reads it (&, not \u0026).
func TestSendLogReads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		leadIDs := postRuleLeads(t, f)
		named := f.a.postLead(f.key, ruleLead(7, "gus@acme-roofing.com", "Paris", "100", "2026-12-01T09:00:00Z",
			map[string]any{"first_name": "Gus", "last_name": "Grey", "event_source_url": "https://example.com/quote?utm_source=fb&utm_medium=paid"}))
		if named.status != http.StatusCreated {
			t.Fatalf("named lead: %d %s", named.status, named.raw)
		}
		// Applied to the leads of the last 7 days: ann's and bob's
		// QualifiedLead events, queued now in one batch, of leads captured
		// days ago.
		berlin := createRuleForm(t, f, ruleValues("Big Berlin", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "berlin"}))
		wantStatus(t, "apply", f.b.post(f.url("/"+itoa(berlin.ID)+"/apply"), url.Values{"confirm": {"yes"}}), http.StatusSeeOther)

		log := views.AccountURL(f.acc.ID, "/events")
		page := f.b.get(log)
		wantStatus(t, "send log", page, http.StatusOK)
		rows := readSendLog(page)
		if len(rows) != 7 {
			t.Fatalf("%d rows; want 5 Lead events and 2 QualifiedLead: %+v", len(rows), rows)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i].queued > rows[i-1].queued {
				t.Errorf("row %d queued %s after row %d queued %s: not newest first by the time shown", i, rows[i].queued, i-1, rows[i-1].queued)
			}
		}
		if rows[0].event != "QualifiedLead" || rows[1].event != "QualifiedLead" {
			t.Errorf("rows start %q, %q; want the batch applied last on top", rows[0].event, rows[1].event)
		}
		byLead := map[string]logRow{}
		for _, r := range rows {
			if r.status != "Waiting" {
				t.Errorf("row %+v: status %q; want it in words", r, r.status)
			}
			if !strings.HasPrefix(r.eventHref, log+"/") {
				t.Errorf("row %+v: the event name links to %q", r, r.eventHref)
			}
			if r.event == "Lead" {
				byLead[r.lead] = r
			}
		}
		gus, ann := byLead["Gus Grey"], byLead["ann@acme-roofing.com"]
		if gus.leadHref != views.AccountURL(f.acc.ID, "/leads/"+itoa(named.LeadID)) || ann.leadHref != views.AccountURL(f.acc.ID, "/leads/"+itoa(leadIDs[0])) {
			t.Errorf("lead links: Gus %+v, ann %+v; want the name, else the email, linking to the lead", gus, ann)
		}

		// Sent in dry run: in words, never dry_run.
		f.a.drain()
		page = f.b.get(log)
		if table := page.text("events-table"); strings.Contains(table, "dry_run") || !strings.Contains(table, "Dry run") {
			t.Errorf("statuses after a dry run: %q", table)
		}
		if counts := page.text("status-counts"); strings.Contains(counts, "dry_run") || !strings.Contains(counts, "Dry run") {
			t.Errorf("status counts %q", counts)
		}

		// The event's page: the rule by name with its link, the JSON with
		// its & as Meta reads it.
		rules, err := s.SendRules(t.Context(), f.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		detail := f.b.get(gus.eventHref)
		wantStatus(t, "event page", detail, http.StatusOK)
		madeBy := detail.doc.Find(`[data-testid="event-made-by"]`)
		if href, _ := madeBy.Attr("href"); madeBy.Text() != "rule "+rules[0].Name || href != views.AccountURL(f.acc.ID, "/rules/"+itoa(rules[0].ID)) {
			t.Errorf("made by %q (%s); want rule %q linked", madeBy.Text(), href, rules[0].Name)
		}
		payload := detail.text("event-payload")
		if !strings.Contains(payload, `"https://example.com/quote?utm_source=fb&utm_medium=paid"`) || strings.Contains(detail.body, `\u0026`) {
			t.Errorf("payload %q; want & as it is, not \\u0026", payload)
		}
		if detail.text("event-lead") != "Gus Grey" || detail.text("event-status") != "Dry run" {
			t.Errorf("event page lead %q status %q", detail.text("event-lead"), detail.text("event-status"))
		}
		qualified := f.b.get(rows[0].eventHref)
		if got := qualified.text("event-made-by"); got != "rule Big Berlin" {
			t.Errorf("applied event made by %q; want rule Big Berlin", got)
		}

		// A stage mapping's event names the mapping, linked to its page.
		won := models.SendRule{AccountID: f.acc.ID, DatasetID: f.d.ID, Name: "won to Purchase", Mode: "stage", Stage: models.StageWon,
			EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &won, nil); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, "won", f.b.post(views.AccountURL(f.acc.ID, "/leads/"+itoa(named.LeadID)+"/stages"),
			url.Values{"stage": {"won"}, "value": {"1200"}, "currency": {"EUR"}}), http.StatusSeeOther)
		purchases := readSendLog(f.b.get(log + "?event=Purchase"))
		if len(purchases) != 1 {
			t.Fatalf("Purchase rows %+v; want the won lead's", purchases)
		}
		mapped := f.b.get(purchases[0].eventHref).doc.Find(`[data-testid="event-made-by"]`)
		if href, _ := mapped.Attr("href"); mapped.Text() != "stage mapping won to Purchase" || href != views.AccountURL(f.acc.ID, "/stages/mappings/"+itoa(won.ID)) {
			t.Errorf("stage event made by %q (%s); want the mapping, linked", mapped.Text(), href)
		}

		// The filter bar's htmx request gets the page, whose #results it
		// takes: the filtered rows.
		htmx := http.Header{"HX-Request": {"true"}, "HX-Target": {"results"}}
		filtered := f.b.getWith(log+"?event=QualifiedLead", htmx)
		if n := filtered.doc.Find(`#results [data-testid="event-row"]`).Length(); n != 2 {
			t.Errorf("htmx filter by event: %d rows in #results; want 2", n)
		}

		// Another account's events answer 404, to the page and the retry.
		other := f.a.user("other@example.com", false)
		otherAcc := f.a.account("other", other)
		ob := f.a.browser()
		ob.login("other@example.com")
		foreign := strings.Replace(gus.eventHref, views.AccountURL(f.acc.ID, ""), views.AccountURL(otherAcc.ID, ""), 1)
		wantStatus(t, "another account's event", ob.get(foreign), http.StatusNotFound)
		wantStatus(t, "retry of another account's event", ob.post(foreign+"/retry", nil), http.StatusNotFound)
	})
}

// Retrying the failed events queues those that can succeed now and leaves,
// saying why, those that would fail the same way: one Meta refused whose
// JSON has not changed, a WhatsApp lead's Lead event that Meta takes from
// business_messaging only under a messaging event name. A website event
// held back for its page URL goes once the account has a Website URL.
func TestRetryFailedLeavesWhatCannotSucceed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})
		leadEvent := func(leadID int64) models.Event {
			t.Helper()
			evs, err := s.LeadEvents(t.Context(), acc.ID, leadID)
			if err != nil || len(evs) != 1 {
				t.Fatalf("lead %d events %+v, %v; want one", leadID, evs, err)
			}
			return evs[0]
		}

		refused := a.postLead(key, goodLead)
		a.meta.RejectEventIDs(leadEvent(refused.LeadID).EventID)
		a.drain()
		whatsapp := a.postLead(key, `{"source":"whatsapp","phone":"+1 415 692 4299","first_name":"Wes"}`)
		noURL := a.postLead(key, `{"email":"una@example.com","client_user_agent":"Mozilla/5.0 (Test)"}`)
		junk := a.postLead(key, `{"external_id":"form-2","email":"joe@example.com","phone":"+1 415 692 4300","first_name":"Joe",
			"client_user_agent":"Mozilla/5.0 (Test)","event_source_url":"https://example.com/quote","client_ip_address":"203.0.113.8","fill_seconds":30}`)
		wantStatus(t, "mark junk", b.post(views.AccountURL(acc.ID, "/leads/"+itoa(junk.LeadID)+"/stages"), url.Values{"stage": {"junk"}}), http.StatusSeeOther)
		for _, l := range []apiReply{refused, whatsapp, noURL, junk} {
			if e := leadEvent(l.LeadID); e.Status != models.EventFailed {
				t.Fatalf("lead %d event %s (%s); want failed", l.LeadID, e.Status, e.LastError)
			}
		}
		log := views.AccountURL(acc.ID, "/events")
		// Nothing can go yet: no Retry, on the log or on an event's page,
		// and the held-back event says what to change, and where.
		page := b.get(log)
		if page.text("count-failed") != "1" || page.text("count-held_back") != "2" || page.text("count-not_sent") != "1" || page.has("retry-all") {
			t.Errorf("send log before the fix: failed %q, held back %q, not sent %q, retry button %v; want 1, 2, 1 and no retry",
				page.text("count-failed"), page.text("count-held_back"), page.text("count-not_sent"), page.has("retry-all"))
		}
		held := b.get(log + "/" + itoa(leadEvent(noURL.LeadID).ID))
		fixLinks := held.doc.Find(`[data-testid="event-fix-link"]`)
		if held.text("event-status") != "Held back" || held.has("retry-event") || !held.has("retry-note") ||
			!strings.Contains(held.text("event-fix"), "Website URL") || fixLinks.Length() == 0 || fixLinks.First().AttrOr("href", "") != views.AccountURL(acc.ID, "/settings") {
			t.Errorf("held-back event before the fix: status %q, retry %v, note %q, fix %q (%d links); want held back, what to change with a link to the settings, no retry",
				held.text("event-status"), held.has("retry-event"), held.text("retry-note"), held.text("event-fix"), fixLinks.Length())
		}
		leadPage := b.get(views.AccountURL(acc.ID, "/leads/"+itoa(noURL.LeadID)))
		if badge := strings.TrimSpace(leadPage.doc.Find(`[data-testid="timeline-event"] .badge`).Text()); badge != "Held back" ||
			!strings.Contains(leadPage.text("rule-event-note"), "was held back: event_source_url") {
			t.Errorf("the held-back event's lead page: badge %q, rule note %q; want held back with its reason", badge, leadPage.text("rule-event-note"))
		}
		refusedPage := b.get(log + "/" + itoa(leadEvent(refused.LeadID).ID))
		if refusedPage.text("event-status") != "Failed" || refusedPage.has("retry-event") || refusedPage.has("event-fix") {
			t.Errorf("event Meta refused: status %q, retry %v, fix %v; want failed, no retry (the same JSON would be refused), no fix",
				refusedPage.text("event-status"), refusedPage.has("retry-event"), refusedPage.has("event-fix"))
		}

		settings := url.Values{"name": {"Acme"}, "timezone": {"UTC"}, "default_country": {"US"}, "currency": {"USD"},
			"website_url": {"https://acme.example/contact"}}
		wantStatus(t, "set Website URL", b.post(views.AccountURL(acc.ID, "/settings"), settings), http.StatusSeeOther)

		if page := b.get(log); !page.has("retry-all") {
			t.Fatalf("send log after the fix: no retry button")
		}
		if held := b.get(log + "/" + itoa(leadEvent(noURL.LeadID).ID)); !held.has("retry-event") {
			t.Errorf("the held-back event after the fix offers no retry")
		}
		wantStatus(t, "retry all", b.post(log+"/retry", nil), http.StatusSeeOther)
		msg := b.get(log).text("flash")
		for _, want := range []string{"1 queued again; 3 left: 2 that their platform rejects as sent (graph error 100/",
			"; event_name: business_messaging accepts only", "); 1 held back (a person marked the lead junk)."} {
			if !strings.Contains(msg, want) {
				t.Errorf("retry message %q; want %q", msg, want)
			}
		}
		if e := leadEvent(noURL.LeadID); e.Status != models.EventQueued {
			t.Errorf("the event held for its page URL: %s; want queued again", e.Status)
		}
		for _, l := range []apiReply{refused, whatsapp, junk} {
			if e := leadEvent(l.LeadID); e.Status != models.EventFailed {
				t.Errorf("lead %d event %s, %d attempts; want failed as it was", l.LeadID, e.Status, e.Attempts)
			}
		}
		sentBefore := len(a.meta.Requests())
		a.drain()
		if e := leadEvent(noURL.LeadID); e.Status != models.EventSent {
			t.Errorf("the retried event: %s (%s); want sent", e.Status, e.LastError)
		}
		if got := len(a.meta.Requests()) - sentBefore; got != 1 {
			t.Errorf("%d requests after the retry; want the one retried event's", got)
		}

		// Again: nothing can go; the message says so, once.
		wantStatus(t, "retry all again", b.post(log+"/retry", nil), http.StatusSeeOther)
		again := b.get(log)
		if msgs := again.doc.Find(`[data-testid="flash"]`); msgs.Length() != 1 || !strings.HasPrefix(msgs.Text(), "None queued again; 3 left: ") {
			t.Errorf("second retry: %d messages %q", msgs.Length(), msgs.Text())
		}
		if again.has("retry-all") {
			t.Errorf("send log with nothing that can go offers a retry")
		}
		// One event's retry says the same of it.
		one := log + "/" + itoa(leadEvent(refused.LeadID).ID)
		wantStatus(t, "retry one", b.post(one+"/retry", nil), http.StatusSeeOther)
		if got := b.get(one).text("flash"); !strings.HasPrefix(got, "Not queued again: their platform rejects it as sent (graph error 100/") {
			t.Errorf("one event's retry: %q", got)
		}
	})
}
