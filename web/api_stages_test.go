package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// stageAPIReply is a decoded answer of POST /api/v1/stages.
type stageAPIReply struct {
	status int
	Change struct {
		ID       int64    `json:"id"`
		LeadID   int64    `json:"lead_id"`
		Stage    string   `json:"stage"`
		Value    *float64 `json:"value"`
		ChangeID *string  `json:"change_id"`
	} `json:"change"`
	Events []struct {
		EventName string `json:"event_name"`
		EventID   string `json:"event_id"`
		Dataset   string `json:"dataset"`
		Status    string `json:"status"`
		Reason    string `json:"reason"`
		FilledIn  bool   `json:"filled_in"`
	} `json:"events"`
	Outcome string `json:"outcome"`
	Error   struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
	raw string
}

func (a *app) postStage(key, body string) stageAPIReply {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(a.t.Context(), http.MethodPost, a.srv.URL+"/api/v1/stages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("post stage: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := stageAPIReply{status: res.StatusCode, raw: string(b)}
	if err := json.Unmarshal(b, &r); err != nil {
		a.t.Fatalf("reply is not JSON (%d): %s", res.StatusCode, b)
	}
	return r
}

// stageSetup is an account with a dry-run dataset, the template's stage
// mappings (qualified -> QualifiedLead, booked -> Schedule, won ->
// Purchase with the deal's value) and an Instant Form lead.
type stageSetup struct {
	acc    models.Account
	key    string
	ds     models.Dataset
	won    models.SendRule
	leadID int64
	at     time.Time // the lead's capture time
}

const instantLeadID = "12345678901234567"

func newStageSetup(t *testing.T, a *app, s *store.Store) stageSetup {
	t.Helper()
	ctx := t.Context()
	acc, key := a.ingestAccount("crm", "US")
	ds := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := s.CreateDataset(ctx, &ds); err != nil {
		t.Fatal(err)
	}
	mapping := func(stage, event string, valueField string) models.SendRule {
		r := models.SendRule{AccountID: acc.ID, DatasetID: ds.ID, Name: stage + " to " + event, Mode: string(rule.Stage), Stage: stage,
			EventName: event, ValueField: valueField, Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		return r
	}
	mapping(models.StageQualified, "QualifiedLead", "")
	mapping(models.StageBooked, "Schedule", "")
	won := mapping(models.StageWon, "Purchase", models.StageValueFromChange)
	at := a.clock().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	r := a.postLead(key, fmt.Sprintf(`{"external_id":"crm-1","email":"Jane@Example.com","phone":"+1 415 555 2671","source":"instant_form",
		"meta_lead_id":%q,"created_at":%q}`, instantLeadID, at.Format(time.RFC3339)))
	if r.status != http.StatusCreated {
		t.Fatalf("post lead = %d %s", r.status, r.raw)
	}
	return stageSetup{acc: acc, key: key, ds: ds, won: won, leadID: r.LeadID, at: at}
}

// A lead that jumps to won gets qualified and booked filled in first,
// with times strictly increasing and never before the lead, then a
// Purchase with the deal's value; the same change again queues nothing.
func TestAPIStageFillsInAndIsIdempotent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		body := fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":1200.5,"currency":"eur","change_id":"deal-7"}`,
			st.at.Add(time.Hour).Format(time.RFC3339))
		r := a.postStage(st.key, body)
		if r.status != http.StatusCreated || r.Outcome != "created" {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		var names []string
		for _, e := range r.Events {
			names = append(names, fmt.Sprintf("%s/%v/%s", e.EventName, e.FilledIn, e.Status))
		}
		if want := "QualifiedLead/true/queued Schedule/true/queued Purchase/false/queued"; strings.Join(names, " ") != want {
			t.Fatalf("events = %v; want %s (%s)", names, want, r.raw)
		}
		evs, err := s.StageChangeEvents(t.Context(), st.acc.ID, r.Change.ID)
		if err != nil || len(evs) != 3 {
			t.Fatalf("stored events = %v, %v", evs, err)
		}
		for i, e := range evs {
			if e.EventTime.Before(st.at) || i > 0 && !e.EventTime.After(evs[i-1].EventTime) {
				t.Errorf("event %s at %v: want after %v and strictly after the one before", e.EventName, e.EventTime, st.at)
			}
		}
		var p struct {
			ActionSource string          `json:"action_source"`
			UserData     json.RawMessage `json:"user_data"`
			CustomData   map[string]any  `json:"custom_data"`
		}
		if err := json.Unmarshal([]byte(evs[2].Payload), &p); err != nil {
			t.Fatalf("payload %q: %v", evs[2].Payload, err)
		}
		if p.ActionSource != "system_generated" || p.CustomData["event_source"] != "crm" || p.CustomData["value"] != 1200.5 || p.CustomData["currency"] != "EUR" {
			t.Errorf("Purchase payload = %s", evs[2].Payload)
		}
		if !strings.Contains(string(p.UserData), `"lead_id":`+instantLeadID) {
			t.Errorf("user_data = %s; want lead_id as the integer %s", p.UserData, instantLeadID)
		}

		again := a.postStage(st.key, body)
		if again.status != http.StatusOK || again.Outcome != "existing" || again.Change.ID != r.Change.ID || len(again.Events) != 3 {
			t.Errorf("the same change again = %d %s; want 200 with the stored change and its 3 events", again.status, again.raw)
		}
		// Without change_id the lead, stage and time are the key.
		natural := fmt.Sprintf(`{"lead":{"id":%d},"stage":"qualified","occurred_at":%q}`, st.leadID, st.at.Add(2*time.Hour).Format(time.RFC3339))
		first, second := a.postStage(st.key, natural), a.postStage(st.key, natural)
		if first.status != http.StatusCreated || second.status != http.StatusOK || second.Change.ID != first.Change.ID {
			t.Errorf("a change without change_id twice = %d, %d (%s); want 201 then 200 with the same change", first.status, second.status, second.raw)
		}
		if len(first.Events) != 0 {
			t.Errorf("qualified after it was filled in = %s; want no second QualifiedLead", first.raw)
		}
		counts, err := s.EventCounts(t.Context(), st.acc.ID, store.EventFilter{}, 100)
		if err != nil || counts[models.EventQueued] != 4 {
			t.Errorf("event counts = %v, %v; want the lead's Lead and the 3 stage events", counts, err)
		}
		// The send log marks the filled-in events.
		b := a.browser()
		b.login("crm-owner@example.com")
		if n := b.get(views.AccountURL(st.acc.ID, "/events")).doc.Find(`[data-testid="event-filled-in"]`).Length(); n != 2 {
			t.Errorf("send log marks %d events filled in; want 2", n)
		}
	})
}

// Every lead key finds the lead; a key no lead has answers 404 naming it.
func TestAPIStageLookups(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		when := st.at.Add(time.Minute)
		for i, lead := range []string{
			fmt.Sprintf(`{"id":%d}`, st.leadID), `{"external_id":"crm-1"}`, fmt.Sprintf(`{"meta_lead_id":%q}`, instantLeadID),
			`{"email":" jane@EXAMPLE.com "}`, `{"phone":"(415) 555-2671"}`, `{"external_id":"crm-1","email":"nobody@example.com"}`,
		} {
			r := a.postStage(st.key, fmt.Sprintf(`{"lead":%s,"stage":"call %d","occurred_at":%q}`, lead, i, when.Format(time.RFC3339)))
			if r.status != http.StatusCreated || r.Change.LeadID != st.leadID {
				t.Errorf("lead %s: %d %s; want the lead %d", lead, r.status, r.raw, st.leadID)
			}
		}
		for _, tt := range []struct{ lead, field string }{
			{`{"external_id":"nope"}`, "lead.external_id"}, {`{"email":"nobody@example.com"}`, "lead.email"},
			{`{"id":999999}`, "lead.id"}, {`{"phone":"+44 20 7946 0958"}`, "lead.phone"},
		} {
			r := a.postStage(st.key, fmt.Sprintf(`{"lead":%s,"stage":"won","occurred_at":%q,"value":1}`, tt.lead, when.Format(time.RFC3339)))
			if r.status != http.StatusNotFound || r.Error.Code != "lead_not_found" || r.Error.Field != tt.field {
				t.Errorf("lead %s: %d %s; want 404 lead_not_found at %s", tt.lead, r.status, r.raw, tt.field)
			}
		}
		// Another account's lead is not found either.
		_, otherKey := a.ingestAccount("other", "US")
		if r := a.postStage(otherKey, fmt.Sprintf(`{"lead":{"id":%d},"stage":"won","occurred_at":%q}`, st.leadID, when.Format(time.RFC3339))); r.status != http.StatusNotFound {
			t.Errorf("another account's lead id: %d %s; want 404", r.status, r.raw)
		}
	})
}

// What the account cannot take is refused with the field named; a change
// older than Meta's 7 days is stored and its event expired at once; a
// stage that is not mapped is stored with no event; a repeatable mapping
// sends each change.
func TestAPIStageRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		ctx := t.Context()
		at := func(d time.Duration) string { return st.at.Add(d).Format(time.RFC3339) }
		for _, tt := range []struct {
			name, body, code, field string
			status                  int
			says                    string // in the message, when set
		}{
			{"before the lead", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"booked","occurred_at":%q}`, at(-time.Hour)), "before_lead", "occurred_at", 422, ""},
			{"purchase without value", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q}`, at(time.Hour)), "value_required", "value", 422, ""},
			{"no lead", fmt.Sprintf(`{"stage":"won","occurred_at":%q}`, at(time.Hour)), "invalid_field", "lead", 422, ""},
			{"junk is no stage", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"junk","occurred_at":%q}`, at(time.Hour)), "invalid_field", "stage", 422, ""},
			{"no time", `{"lead":{"external_id":"crm-1"},"stage":"won"}`, "invalid_field", "occurred_at", 422, ""},
			{"bad time", `{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":"yesterday"}`, "invalid_occurred_at", "occurred_at", 400, ""},
			{"negative value", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":-1}`, at(time.Hour)), "invalid_field", "value", 422, ""},
			{"bad currency", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":1,"currency":"EURO"}`, at(time.Hour)), "invalid_field", "currency", 422, ""},
			{"unknown field", `{"lead":{"external_id":"crm-1"},"stag":"won"}`, "unknown_field", "stag", 400, ""},
			{"a form's body", `lead=crm-1&stage=won`, "malformed_json", "", 400, `not text starting "lead=crm-1&stage=won"`},
			{"NUL", "{\"lead\":{\"external_id\":\"crm\\u0000\"},\"stage\":\"won\"}", "invalid_character", "lead.external_id", 400, ""},
			// A field the recorder checks is refused by the recorder's own
			// limit, as from every other way in, and never quoted back at
			// length.
			{"long change id", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":1,"change_id":%q}`, at(time.Hour), strings.Repeat("x", 40000)), "invalid_field", "change_id", 422, "longer than 200 bytes"},
			{"long stage", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":%q,"occurred_at":%q}`, strings.Repeat("x", 40000), at(time.Hour)), "invalid_field", "stage", 422, "at most 100 characters"},
			{"long currency", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":1,"currency":%q}`, at(time.Hour), strings.Repeat("X", 40000)), "invalid_field", "currency", 422, "ISO 4217"},
			{"fractional lead id", fmt.Sprintf(`{"lead":{"id":1.5},"stage":"won","occurred_at":%q}`, at(time.Hour)), "wrong_type", "lead.id", 400, "whole number up to 9223372036854775807, not 1.5"},
			{"value out of range", fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":1e400}`, at(time.Hour)), "wrong_type", "value", 400, "value is out of range: 1e400"},
			{"long external id", fmt.Sprintf(`{"lead":{"external_id":%q},"stage":"won","occurred_at":%q}`, strings.Repeat("x", 40000), at(time.Hour)), "invalid_field", "lead.external_id", 422, "longer than 500 bytes"},
		} {
			r := a.postStage(st.key, tt.body)
			if r.status != tt.status || r.Error.Code != tt.code || r.Error.Field != tt.field || r.Error.Message == "" ||
				!strings.Contains(r.Error.Message, tt.says) || len(r.Error.Message) > 300 {
				t.Errorf("%s: %d %.400s; want %d %s at %q saying %q", tt.name, r.status, r.raw, tt.status, tt.code, tt.field, tt.says)
			}
		}
		if cs, err := s.StageChanges(ctx, st.acc.ID, st.leadID); err != nil || len(cs) != 0 {
			t.Errorf("stage changes after refusals = %v, %v; want none", cs, err)
		}

		// An old lead's change of 9 days ago counts, its event expired.
		old := a.postLead(st.key, fmt.Sprintf(`{"external_id":"old-1","email":"old@example.com","source":"crm","created_at":%q}`,
			a.clock().Add(-10*24*time.Hour).UTC().Format(time.RFC3339)))
		r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"id":%d},"stage":"booked","occurred_at":%q}`, old.LeadID,
			a.clock().Add(-9*24*time.Hour).UTC().Format(time.RFC3339)))
		if r.status != http.StatusCreated || len(r.Events) != 2 || r.Events[1].Status != string(models.EventExpired) || r.Events[1].Reason == "" {
			t.Errorf("a change of 9 days ago = %d %s; want it stored, QualifiedLead filled in and Schedule expired with the reason", r.status, r.raw)
		}

		// A stage the account does not map is stored, with no event.
		if r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"Proposal sent","occurred_at":%q}`, at(time.Minute))); r.status != http.StatusCreated || len(r.Events) != 0 {
			t.Errorf("an unmapped stage = %d %s; want 201 with no event", r.status, r.raw)
		}

		// A repeatable mapping sends each sale.
		st.won.Repeatable = true
		if err := s.SaveSendRule(ctx, &st.won, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SendRule(ctx, st.acc.ID, st.won.ID); err != nil || !got.Repeatable {
			t.Fatalf("saved mapping = %+v, %v; want repeatable", got, err)
		}
		for i, id := range []string{"sale-1", "sale-2", "sale-2"} {
			r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":%d,"change_id":%q}`,
				at(time.Duration(i+2)*time.Hour), 100*(i+1), id))
			if r.status/100 != 2 {
				t.Fatalf("sale %d: %d %s", i, r.status, r.raw)
			}
		}
		counts, err := s.EventCounts(ctx, st.acc.ID, store.EventFilter{EventName: "Purchase"}, 100)
		if err != nil || counts[models.EventQueued] != 2 {
			t.Errorf("Purchase events = %v, %v; want one per sale, 2", counts, err)
		}
	})
}
