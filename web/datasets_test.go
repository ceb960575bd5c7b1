package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// connect creates a dataset through the form and returns it.
func connect(t *testing.T, a *app, b *browser, acc models.Account, form url.Values) models.Dataset {
	t.Helper()
	r := b.post(views.AccountURL(acc.ID, "/datasets"), form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("connect dataset = %d\n%s", r.status, r.body)
	}
	ds, err := a.store.Datasets(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Name == form.Get("name") {
			return d
		}
	}
	t.Fatalf("no dataset %q among %v", form.Get("name"), ds)
	return models.Dataset{}
}

func TestDatasetsTokenNeverShown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		base := views.AccountURL(acc.ID, "/datasets")

		r := b.get(base)
		if !r.has("datasets-empty") {
			t.Error("want the empty state on a new account")
		}
		r = b.post(base, url.Values{"name": {""}, "pixel_id": {"abc"}, "mode": {"live"}, "ldu": {"off"}, "api_version": {"24"}})
		wantStatus(t, "invalid dataset", r, http.StatusUnprocessableEntity)
		for _, f := range []string{"name", "pixel_id", "access_token", "api_version"} {
			if r.text("error-"+f) == "" {
				t.Errorf("no inline error for %s", f)
			}
		}
		if r.inputValue("pixel_id") != "abc" {
			t.Error("typed dataset id not kept")
		}
		const token = "EAAGsecretTOKENvalue9876"
		d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {token},
			"mode": {"test"}, "test_event_code": {"TEST42"}, "ldu": {"california"}})
		if d.TokenSealed == "" || strings.Contains(d.TokenSealed, token) || d.TokenLast4 != "9876" {
			t.Errorf("stored dataset %+v: want the token sealed, last four kept", d)
		}
		if got, err := a.box.Open(d.TokenSealed, dispatch.TokenLabel(d.ID)); err != nil || got != token {
			t.Errorf("sealed token opens to %q, %v", got, err)
		}
		for _, path := range []string{base, fmt.Sprintf("%s/%d", base, d.ID)} {
			r := b.get(path)
			wantStatus(t, path, r, http.StatusOK)
			if strings.Contains(r.body, token) || strings.Contains(r.body, d.TokenSealed) {
				t.Errorf("%s shows the token", path)
			}
			if !strings.Contains(r.body, "9876") {
				t.Errorf("%s does not show the token's last four", path)
			}
		}
		// Saving without a token keeps the stored one.
		r = b.post(fmt.Sprintf("%s/%d", base, d.ID), url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"},
			"mode": {"live"}, "ldu": {"off"}, "access_token": {""}})
		wantStatus(t, "save without token", r, http.StatusSeeOther)
		saved, _ := s.Dataset(t.Context(), acc.ID, d.ID)
		if saved.TokenSealed != d.TokenSealed || saved.Mode != models.ModeLive {
			t.Errorf("after saving without a token: %+v", saved)
		}
	})
}

func TestSendTestEvent(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, _ := a.ingestAccount("acme", "US")
	b := a.browser()
	b.login("acme-owner@example.com")
	d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
		"mode": {"test"}, "test_event_code": {"TEST42"}, "ldu": {"off"}})
	path := fmt.Sprintf("%s/%d/test", views.AccountURL(acc.ID, "/datasets"), d.ID)

	r := b.post(path, nil)
	wantStatus(t, "test event", r, http.StatusOK)
	if msg := r.text("test-result"); !strings.Contains(msg, "Meta received 1 event") || !strings.Contains(msg, "fbtrace_id") {
		t.Errorf("test result = %q", msg)
	}
	reqs := a.meta.Requests()
	if len(reqs) != 1 || reqs[0].TestEventCode != "TEST42" || len(reqs[0].Events) != 1 {
		t.Fatalf("Meta got %+v; want one event with the test code", reqs)
	}
	if em := fmt.Sprint(reqs[0].Events[0]["user_data"]); strings.Contains(em, "@") {
		t.Errorf("test event sends raw contact data: %s", em)
	}
	if !r.has("requests-table") {
		t.Error("the dataset page should list the test request")
	}

	// A dataset without a test code is told what to fix; nothing is sent.
	noCode := connect(t, a, b, acc, url.Values{"name": {"Second"}, "pixel_id": {"223456789012345"}, "access_token": {capitest.Token},
		"mode": {"live"}, "ldu": {"off"}})
	r = b.post(fmt.Sprintf("%s/%d/test", views.AccountURL(acc.ID, "/datasets"), noCode.ID), nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("test-result"), "test event code") || len(a.meta.Requests()) != 1 {
		t.Errorf("test without a code = %d %q, %d requests", r.status, r.text("test-result"), len(a.meta.Requests()))
	}

	// Meta's refusal in plain words.
	a.meta.Tokens = map[string]bool{}
	r = b.post(path, nil)
	if r.status != http.StatusBadGateway || !strings.Contains(r.text("test-result"), "code 190") {
		t.Errorf("refused token = %d %q", r.status, r.text("test-result"))
	}
	if strings.Contains(r.body, capitest.Token) {
		t.Error("the page shows the token")
	}
}

func TestLeadToSentEventAndSendLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"live"}, "ldu": {"off"}})

		r := a.postLead(key, goodLead)
		if r.status != http.StatusCreated || len(r.Events) != 1 || !strings.Contains(string(r.Events[0]), `"status":"queued"`) {
			t.Fatalf("lead reply %s; want one queued event", r.raw)
		}
		junk := a.postLead(key, `{"email":"bot@example.com","honeypot":"x","event_source_url":"https://example.com/quote","client_user_agent":"Mozilla/5.0 (Test)"}`)
		if len(junk.Events) != 0 {
			t.Errorf("junk lead queued %s", junk.raw)
		}
		partial := a.postLead(key, `{"external_id":"p-1","email":"p@example.com","partial":true}`)
		if len(partial.Events) != 0 {
			t.Errorf("partial lead queued %s", partial.raw)
		}
		again := a.postLead(key, goodLead)
		if again.status != http.StatusOK || len(again.Events) != 1 {
			t.Errorf("resend = %s; want the same one event, nothing new", again.raw)
		}

		log := views.AccountURL(acc.ID, "/events")
		page := b.get(log)
		if page.text("count-queued") != "1" || page.doc.Find("#sendlog[hx-trigger]").Length() != 1 {
			t.Errorf("send log before dispatch: queued %q, live refresh %v", page.text("count-queued"), page.doc.Find("#sendlog[hx-trigger]").Length())
		}
		// Before it is sent, the event's page shows the payload capture
		// prepared, and says when it would be built again.
		queued, _ := s.Events(t.Context(), acc.ID, store.EventFilter{}, nil, 10)
		pre := b.get(fmt.Sprintf("%s/%d", log, queued[0].ID))
		if !strings.Contains(pre.text("event-payload"), queued[0].EventID) || !strings.Contains(pre.text("payload-note"), "Prepared when the event was queued") {
			t.Errorf("queued event's page: payload %q note %q", pre.text("event-payload"), pre.text("payload-note"))
		}
		// Limited Data Use turned on before the send: the page no longer
		// promises the prepared JSON, and the event goes out built again.
		d.LDU = models.LDUAlways
		if err := s.SaveDataset(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		pre = b.get(fmt.Sprintf("%s/%d", log, queued[0].ID))
		if note := pre.text("payload-note"); !strings.Contains(note, "built again from the lead and the dataset when it is sent") {
			t.Errorf("queued event's page after an LDU change: note %q", note)
		}
		a.drain()
		page = b.get(log)
		if page.text("count-sent") != "1" || page.doc.Find("#sendlog[hx-trigger]").Length() != 0 {
			t.Errorf("after dispatch: sent %q", page.text("count-sent"))
		}
		reqs := a.meta.Requests()
		if len(reqs) != 1 || reqs[0].EventIDs()[0] == "" {
			t.Fatalf("Meta requests %+v", reqs)
		}
		ev := reqs[0].Events[0]
		if ev["action_source"] != "website" || ev["event_name"] != "Lead" || ev["event_source_url"] != "https://example.com/quote" ||
			fmt.Sprint(ev["data_processing_options"]) != "[LDU]" {
			t.Errorf("event sent = %v", ev)
		}
		ud := fmt.Sprint(ev["user_data"])
		if strings.Contains(ud, "example.com") && strings.Contains(ud, "jane") {
			t.Errorf("raw contact data in user_data: %s", ud)
		}

		// Event detail: the exact JSON sent (built again, with LDU, not the
		// one prepared before) and Meta's reply.
		evs, _ := s.Events(t.Context(), acc.ID, store.EventFilter{}, nil, 10)
		detail := b.get(fmt.Sprintf("%s/%d", log, evs[0].ID))
		if !strings.Contains(detail.text("event-payload"), evs[0].EventID) || !strings.Contains(detail.text("event-payload"), `"LDU"`) ||
			!strings.Contains(detail.text("event-reply"), "events_received") {
			t.Errorf("event detail payload %q reply %q", detail.text("event-payload"), detail.text("event-reply"))
		}
		// The lead page lists its event.
		lp := b.get(fmt.Sprintf("%s/leads/%d", views.AccountURL(acc.ID, ""), r.LeadID))
		if !strings.Contains(lp.text("lead-events"), "sent") {
			t.Errorf("lead page events = %q", lp.text("lead-events"))
		}
		// Marking a sent lead junk changes nothing sent; a junk lead marked
		// not junk queues its event.
		b.post(fmt.Sprintf("%s/leads/%d/stages", views.AccountURL(acc.ID, ""), junk.LeadID), url.Values{"stage": {"not_junk"}})
		if c, _ := s.EventCounts(t.Context(), acc.ID, store.EventFilter{}, 1_000_000); c[models.EventQueued] != 1 {
			t.Errorf("after not junk: %v; want the lead's event queued", c)
		}
	})
}

func TestFailedEventRetryAndPausedBanner(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, key := a.ingestAccount("acme", "US")
	b := a.browser()
	b.login("acme-owner@example.com")
	d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {"wrong-token-0000"},
		"mode": {"live"}, "ldu": {"off"}})
	a.postLead(key, goodLead)
	a.drain()
	// Meta refused the token: the dataset is paused and every account page says so.
	r := b.get(views.AccountURL(acc.ID, "/leads"))
	if msg := r.text("account-alert"); !strings.Contains(msg, "paused") || !strings.Contains(msg, "1 events wait") || !strings.Contains(msg, "expires") {
		t.Errorf("banner = %q", msg)
	}
	// Saving a new token resumes.
	r = b.post(fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/datasets"), d.ID), url.Values{"name": {"Main"},
		"pixel_id": {"123456789012345"}, "access_token": {capitest.Token}, "mode": {"live"}, "ldu": {"off"}})
	wantStatus(t, "new token", r, http.StatusSeeOther)
	a.drain()
	if c, _ := a.store.EventCounts(t.Context(), acc.ID, store.EventFilter{}, 1_000_000); c[models.EventSent] != 1 {
		t.Errorf("after the new token: %v; want 1 sent", c)
	}
	if r := b.get(views.AccountURL(acc.ID, "")); r.has("account-alert") {
		t.Error("the banner stays after resuming")
	}

	// A held-back event can be retried after a fix, not before.
	bad := a.postLead(key, `{"external_id":"x2","email":"x2@example.com","client_user_agent":"Mozilla/5.0"}`)
	a.drain()
	evs, _ := a.store.LeadEvents(t.Context(), acc.ID, bad.LeadID)
	if len(evs) != 1 || evs[0].Status != models.EventFailed || !strings.Contains(evs[0].LastError, "event_source_url") {
		t.Fatalf("website event without a URL = %+v; want held back with the reason", evs)
	}
	detail := b.get(fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/events"), evs[0].ID))
	if detail.has("retry-event") || !strings.Contains(detail.text("event-error"), "event_source_url") {
		t.Errorf("detail of a held-back event before the fix: retry %v error %q; want its reason and no retry", detail.has("retry-event"), detail.text("event-error"))
	}
	// Before the fix, the retry leaves it and says why.
	retry := fmt.Sprintf("%s/%d/retry", views.AccountURL(acc.ID, "/events"), evs[0].ID)
	wantStatus(t, "retry before the fix", b.post(retry, nil), http.StatusSeeOther)
	if e, _ := a.store.Event(t.Context(), acc.ID, evs[0].ID); e.Status != models.EventFailed {
		t.Errorf("retried before the fix: %s", e.Status)
	}
	if msg := b.get(fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/events"), evs[0].ID)).text("flash"); !strings.HasPrefix(msg, "Not queued again: their platform rejects it as sent (event_source_url: required") {
		t.Errorf("retry before the fix says %q", msg)
	}
	settings := url.Values{"name": {"Acme"}, "timezone": {"UTC"}, "default_country": {"US"}, "currency": {"USD"},
		"website_url": {"https://acme.example/contact"}}
	wantStatus(t, "set Website URL", b.post(views.AccountURL(acc.ID, "/settings"), settings), http.StatusSeeOther)
	if detail := b.get(fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/events"), evs[0].ID)); !detail.has("retry-event") {
		t.Error("detail of the held-back event after the fix offers no retry")
	}
	r = b.post(retry, nil)
	wantStatus(t, "retry", r, http.StatusSeeOther)
	if e, _ := a.store.Event(t.Context(), acc.ID, evs[0].ID); e.Status != models.EventQueued || e.Attempts != 0 {
		t.Errorf("after retry: %s attempts %d", e.Status, e.Attempts)
	}
}

func TestSendLogAndDatasetsNeedEditor(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, _ := a.ingestAccount("acme", "US")
	viewer := a.user("vic@example.com", false)
	if err := a.store.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleViewer); err != nil {
		t.Fatal(err)
	}
	b := a.browser()
	b.login("vic@example.com")
	for _, p := range []string{"/events", "/datasets"} {
		wantStatus(t, "viewer "+p, b.get(views.AccountURL(acc.ID, p)), http.StatusForbidden)
	}
	if r := b.get(views.AccountURL(acc.ID, "")); strings.Contains(r.body, "/events\"") {
		t.Error("viewer sees the Send log link")
	}
}

// TestDryRunTestEventSendsNothing: in dry run, "Send test event" shows the
// event's JSON as the send log lays payloads out and says nothing was
// sent; Meta hears nothing, and the same event is what test mode sends.
func TestDryRunTestEventSendsNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		// A token and a test code are stored, so only the mode stops the send.
		d := connect(t, a, b, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
			"mode": {"dry_run"}, "test_event_code": {"TEST42"}, "ldu": {"off"}})
		page := fmt.Sprintf("%s/%d", views.AccountURL(acc.ID, "/datasets"), d.ID)

		r := b.post(page+"/test", nil)
		wantStatus(t, "dry-run test event", r, http.StatusOK)
		if msg := r.text("test-result"); !strings.Contains(msg, "nothing was sent") || !strings.Contains(msg, "TEST42") {
			t.Errorf("test result = %q; want it to say nothing was sent", msg)
		}
		if n := len(a.meta.Requests()); n != 0 {
			t.Fatalf("Meta received %d requests from a dry-run dataset; want none", n)
		}
		if reqs, err := s.SendRequests(t.Context(), acc.ID, d.ID, 10); err != nil || len(reqs) != 0 || r.has("requests-table") {
			t.Errorf("send requests logged = %d, %v; want none: nothing was sent", len(reqs), err)
		}
		shown := r.doc.Find(`[data-testid="test-payload"]`).Text()
		var dry map[string]any
		if err := json.Unmarshal([]byte(shown), &dry); err != nil {
			t.Fatalf("payload shown is not JSON: %v\n%s", err, shown)
		}
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(shown), "", "  ") != nil || buf.String() != shown {
			t.Errorf("payload is not laid out as the send log does (two spaces a level):\n%s", shown)
		}
		if dry["event_name"] != "Lead" || dry["event_id"] == "" || strings.Contains(fmt.Sprint(dry["user_data"]), "@") {
			t.Errorf("dry-run event = %v; want a Lead with hashed contact data", dry)
		}

		// Test mode sends, at the same moment, exactly the event shown.
		r = b.post(page, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "mode": {"test"},
			"test_event_code": {"TEST42"}, "ldu": {"off"}})
		wantStatus(t, "switch to test mode", r, http.StatusSeeOther)
		r = b.post(page+"/test", nil)
		wantStatus(t, "test-mode test event", r, http.StatusOK)
		reqs := a.meta.Requests()
		if len(reqs) != 1 || len(reqs[0].Events) != 1 || r.has("test-payload") {
			t.Fatalf("test mode: Meta got %d requests, payload shown %v; want one request and Meta's answer", len(reqs), r.has("test-payload"))
		}
		var sent map[string]any
		raw, _ := json.Marshal(reqs[0].Events[0])
		if err := json.Unmarshal(raw, &sent); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dry, sent) {
			t.Errorf("dry run showed\n%v\ntest mode sent\n%v", dry, sent)
		}
	})
}
