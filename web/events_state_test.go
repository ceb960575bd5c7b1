package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// Every event state reads one word, the same in the send log's row, its
// count, its filter (which keeps exactly the events of that state), the
// event's page, the CSV and the lead's page (DESIGN.md "Event states"):
// an event our check held back is "Held back" everywhere, never "Failed",
// which is Meta's refusal only; a cancelled one is "Not sent".
func TestEachEventStateReadsOneWordEverywhere(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		live := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})
		leadEvent := func(leadID int64) models.Event {
			t.Helper()
			evs, err := s.LeadEvents(ctx, acc.ID, leadID)
			if err != nil || len(evs) != 1 {
				t.Fatalf("lead %d events %+v, %v; want one", leadID, evs, err)
			}
			return evs[0]
		}

		// Sent and failed through Meta (the fake); the others stored as
		// the dispatcher and the decisions leave them.
		sent := a.postLead(key, goodLead)
		refused := a.postLead(key, strings.NewReplacer("form-1", "form-2", "Jane.Doe", "Jon.Roe", "692-4281", "692-4282").Replace(goodLead))
		a.meta.RejectEventIDs(leadEvent(refused.LeadID).EventID)
		a.drain()
		dry := models.Dataset{AccountID: acc.ID, Name: "Rehearsal", PixelID: "999999999999999", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &dry); err != nil {
			t.Fatal(err)
		}
		byState := map[models.EventStatus]models.Event{
			models.EventSent:   leadEvent(sent.LeadID),
			models.EventFailed: leadEvent(refused.LeadID),
		}
		stored := []struct {
			state  models.EventStatus
			ds     models.Dataset
			status models.EventStatus
			reason string
		}{
			{models.EventQueued, live, models.EventQueued, ""},
			{models.EventHeldBack, live, models.EventFailed, "not sent: user_data.client_user_agent: required for website events"},
			{models.EventExpired, live, models.EventExpired, "event_time 2026-11-20T10:00:00Z is more than 7 days ago; Meta would refuse the whole batch"},
			{models.EventNotSent, live, models.EventFailed, models.ReasonJunkLead},
			{models.EventDryRun, dry, models.EventDryRun, ""},
			{models.EventSending, dry, models.EventQueued, ""},
		}
		for i, st := range stored {
			l := models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, Email: "l" + strconv.Itoa(i) + "@example.com",
				CreatedAt: a.clock(), ReceivedAt: a.clock(), Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			evs, _, err := s.EnqueueEvents(ctx, []models.Event{{AccountID: acc.ID, DatasetID: st.ds.ID, LeadID: l.ID,
				Origin: models.OriginDefault, EventName: "Lead", EventID: "state-" + strconv.Itoa(i), EventTime: a.clock(),
				NextAttemptAt: a.clock().Add(time.Hour), Status: st.status, LastError: st.reason}})
			if err != nil {
				t.Fatal(err)
			}
			byState[st.state] = evs[0]
		}
		// Claimed under a running lease: sending.
		if _, err := s.ClaimEvents(ctx, dry.ID, time.Now().Add(2*time.Hour), time.Hour, 10, nil); err != nil {
			t.Fatal(err)
		}

		log := views.AccountURL(acc.ID, "/events")
		page := b.get(log)
		wantStatus(t, "send log", page, http.StatusOK)
		rowWord := map[string]string{}
		page.doc.Find(`[data-testid="event-row"]`).Each(func(_ int, r *goquery.Selection) {
			href, _ := r.Find(`[data-testid="event-link"]`).Attr("href")
			rowWord[href] = strings.TrimSpace(r.Find(`[data-testid="event-status"]`).Text())
		})
		options := map[string]string{}
		page.doc.Find(`select[name="status"] option`).Each(func(_ int, o *goquery.Selection) {
			options[o.AttrOr("value", "")] = strings.TrimSpace(o.Text())
		})
		csv := map[string]string{}
		for _, rec := range readCSV(t, b.get(views.AccountURL(acc.ID, "/events.csv"))) {
			csv[rec["event_id"]] = rec["status"]
		}

		for _, st := range models.EventStatuses {
			e, ok := byState[st]
			if !ok {
				t.Fatalf("no event made for %s", st)
			}
			word := views.EventStatusWord(st)
			href := log + "/" + itoa(e.ID)
			if got := rowWord[href]; got != word {
				t.Errorf("%s: the send log's row reads %q; want %q", st, got, word)
			}
			if got := options[string(st)]; got != word {
				t.Errorf("%s: the filter's option reads %q; want %q", st, got, word)
			}
			if got := page.text("count-" + string(st)); got != "1" {
				t.Errorf("%s: the send log counts %q; want 1", st, got)
			}
			filtered := readSendLog(b.get(log + "?status=" + string(st)))
			if len(filtered) != 1 || filtered[0].eventHref != href || filtered[0].status != word {
				t.Errorf("%s: the filter keeps %+v; want only its event, reading %q", st, filtered, word)
			}
			if got := b.get(href).text("event-status"); got != word {
				t.Errorf("%s: the event's page reads %q; want %q", st, got, word)
			}
			if got := csv[e.EventID]; got != word {
				t.Errorf("%s: the CSV reads %q; want %q", st, got, word)
			}
			lead := b.get(views.AccountURL(acc.ID, "/leads/"+itoa(e.LeadID)))
			if got := strings.TrimSpace(lead.doc.Find(`[data-testid="timeline-event"] .badge`).Text()); got != word {
				t.Errorf("%s: the lead's page reads %q; want %q", st, got, word)
			}
		}
		// A status the log does not know filters nothing and is no error; a
		// NUL is refused with the reason.
		if r := b.get(log + "?status=held_back%00"); r.status != http.StatusBadRequest || !strings.Contains(r.text("error-page"), "NUL") {
			t.Errorf("send log with a NUL in its filter: %d %q; want 400 saying so", r.status, r.text("error-page"))
		}
		for _, q := range []string{"?status=bogus", "?status=" + strings.Repeat("x", 5000)} {
			r := b.get(log + q)
			wantStatus(t, "send log "+q, r, http.StatusOK)
			if n := len(readSendLog(r)); n != len(models.EventStatuses) {
				t.Errorf("send log %.40s lists %d events; want all %d", q, n, len(models.EventStatuses))
			}
		}
		// The Overview counts each state apart, and each figure links to
		// the send log filtered to exactly its events.
		over := b.get(views.AccountURL(acc.ID, ""))
		wantStatus(t, "overview", over, http.StatusOK)
		for _, st := range []models.EventStatus{models.EventSent, models.EventFailed, models.EventHeldBack, models.EventNotSent,
			models.EventExpired} {
			cell := over.doc.Find(`[data-testid="count-` + string(st) + `-0"]`)
			if got := strings.TrimSpace(cell.Text()); got != "1" {
				t.Errorf("the Overview's %s this week = %q; want 1", st, got)
			}
			href, _ := cell.Find("a").Attr("href")
			if got := readSendLog(b.get(href)); len(got) != 1 || got[0].status != views.EventStatusWord(st) {
				t.Errorf("the Overview's %s links to %s, which lists %+v; want its one event", st, href, got)
			}
		}
		if len(rowWord) != len(models.EventStatuses) {
			t.Errorf("the send log lists %d events; want one per state", len(rowWord))
		}
	})
}
