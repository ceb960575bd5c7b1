package tiktok_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/tiktok"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/models"
)

var at = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func input(l models.Lead, in normalize.Input, ev models.Event) capi.BuildInput {
	in.DefaultCountry = "US"
	ev.EventTime, ev.EventID = at, "ev-1"
	if ev.EventName == "" {
		ev.EventName = "Lead"
	}
	return capi.BuildInput{Account: models.Account{Currency: "usd"}, Dataset: models.Dataset{Kind: models.KindTikTok},
		Lead: l, Keys: normalize.Normalize(in), Event: ev}
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("payload %s: %v", body, err)
	}
	return m
}

// TestPrepareVectors checks destinations.md's TikTok vectors: the email
// trimmed and lower-cased with no Gmail rule, the phone as E.164 with "+".
func TestPrepareVectors(t *testing.T) {
	tests := []struct {
		name, email, phone, wantEmail, wantPhone string
	}{
		{"plain", "janedoe@gmail.com", "", "d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69", ""},
		{"gmail untouched", " Alex.Smith+Promo@Gmail.com ", "+1 (800) 555-0100",
			"7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab", "fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30"},
		{"uk phone", "", "+44 20 7183 8750", "", "e631c2534428c6c9b48c2167604a8983046085e43a2c00ed748733c544c0bb4d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := tiktok.Prepare(input(models.Lead{}, normalize.Input{Email: tt.email, Phone: tt.phone}, models.Event{}), "Lead")
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			user := decode(t, body)["user"].(map[string]any)
			for field, want := range map[string]string{"email": tt.wantEmail, "phone": tt.wantPhone} {
				got, _ := user[field].([]any)
				switch {
				case want == "" && got != nil:
					t.Errorf("user.%s = %v; want none", field, got)
				case want != "" && (len(got) != 1 || got[0] != want):
					t.Errorf("user.%s = %v; want [%s]", field, got, want)
				}
			}
		})
	}
}

func TestPrepare(t *testing.T) {
	value := 250.0
	l := models.Lead{Source: models.SourceWebsite, EventSourceURL: "https://example.com/form",
		Fields: `{"ttclid":" E.C_123 ","ttp":"ttp-cookie","plan":"pro"}`, State: "CA"}
	body, err := tiktok.Prepare(input(l, normalize.Input{Email: "a@example.com", ExternalID: "crm-1", ClientIP: "203.0.113.7", UserAgent: "Mozilla/5.0"},
		models.Event{EventName: "Purchase", Value: &value}), "Purchase")
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	got := decode(t, body)
	user := got["user"].(map[string]any)
	checks := map[string]any{
		"event": got["event"], "event_time": got["event_time"], "event_id": got["event_id"],
		"ttclid": user["ttclid"], "ttp": user["ttp"], "ip": user["ip"], "user_agent": user["user_agent"],
		"value": got["properties"].(map[string]any)["value"], "currency": got["properties"].(map[string]any)["currency"],
		"url": got["page"].(map[string]any)["url"], "limited_data_use": got["limited_data_use"],
	}
	want := map[string]any{"event": "Purchase", "event_time": float64(at.Unix()), "event_id": "ev-1",
		"ttclid": "E.C_123", "ttp": "ttp-cookie", "ip": "203.0.113.7", "user_agent": "Mozilla/5.0",
		"value": 250.0, "currency": "USD", "url": "https://example.com/form", "limited_data_use": false}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %v; want %v", k, checks[k], w)
		}
	}
	if ids, _ := user["external_id"].([]any); len(ids) != 1 || ids[0] != normalize.Hash("crm-1") {
		t.Errorf("external_id = %v; want the hash of crm-1", user["external_id"])
	}

	t.Run("limited data use", func(t *testing.T) {
		in := input(l, normalize.Input{Email: "a@example.com"}, models.Event{})
		in.Dataset.LDU = models.LDUCalifornia
		body, _ := tiktok.Prepare(in, "Lead")
		if decode(t, body)["limited_data_use"] != true {
			t.Errorf("a Californian lead under LDU california: limited_data_use = false; want true")
		}
	})
	t.Run("stage event has no page", func(t *testing.T) {
		body, _ := tiktok.Prepare(input(l, normalize.Input{Email: "a@example.com"}, models.Event{Origin: models.OriginStage}), "Schedule")
		if _, ok := decode(t, body)["page"]; ok {
			t.Errorf("a stage event carries the form's page: %s", body)
		}
	})
	t.Run("nothing to match by", func(t *testing.T) {
		body, err := tiktok.Prepare(input(models.Lead{}, normalize.Input{FirstName: "Ann"}, models.Event{}), "Lead")
		var inv *capi.Invalid
		if !errors.As(err, &inv) || inv.Field != "user" || body == nil {
			t.Errorf("Prepare = %s, %v; want the JSON and a *capi.Invalid on user", body, err)
		}
	})
}

func TestEventName(t *testing.T) {
	for ours, want := range map[string]string{"Lead": "Lead", "SubmitApplication": "ApplicationApproval", "Purchase": "Purchase", "QualifiedLead": "QualifiedLead"} {
		if got := tiktok.EventName(ours); got != want {
			t.Errorf("EventName(%q) = %q; want %q", ours, got, want)
		}
	}
}

func prepared(t *testing.T, n int) []json.RawMessage {
	t.Helper()
	evs := make([]json.RawMessage, n)
	for i := range evs {
		in := input(models.Lead{}, normalize.Input{Email: "a@example.com"}, models.Event{})
		in.Event.EventID = "ev-" + strings.Repeat("x", i%3) + string(rune('a'+i%26))
		body, err := tiktok.Prepare(in, "Lead")
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = body
	}
	return evs
}

func TestSend(t *testing.T) {
	fake := tiktoktest.New(t)
	c := &tiktok.Client{BaseURL: fake.URL}
	target := destination.Target{AccountID: "C0PIXEL", Token: tiktoktest.Token, EventSource: "crm"}

	a, err := c.Send(t.Context(), target, prepared(t, 3))
	if err != nil || a.Verdict != destination.Accepted || a.Received != 3 || a.RequestID == "" {
		t.Fatalf("Send = %+v, %v; want 3 accepted with a request id", a, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].EventSource != "crm" || reqs[0].EventSourceID != "C0PIXEL" || reqs[0].TestEventCode != "" {
		t.Fatalf("fake took %+v; want one crm request to C0PIXEL without a test code", reqs)
	}

	test := target
	test.Test, test.TestEventCode = true, "TEST123"
	if _, err := c.Send(t.Context(), test, prepared(t, 1)); err != nil {
		t.Fatal(err)
	}
	if reqs := fake.Requests(); reqs[len(reqs)-1].TestEventCode != "TEST123" {
		t.Errorf("test mode sent test_event_code %q; want TEST123", reqs[len(reqs)-1].TestEventCode)
	}
}

func TestSendVerdicts(t *testing.T) {
	tests := []struct {
		name string
		fail tiktoktest.Failure
		want destination.Verdict
	}{
		{"too many requests", tiktoktest.Failure{Code: tiktoktest.CodeTooManyRequests}, destination.Unavailable},
		{"no permission", tiktoktest.Failure{Code: tiktoktest.CodeNoPermission}, destination.AuthRefused},
		{"invalid parameter", tiktoktest.Failure{Code: tiktoktest.CodeInvalidParameter}, destination.EventRefused},
		{"server error", tiktoktest.Failure{Status: http.StatusBadGateway}, destination.Unavailable},
		{"unknown code", tiktoktest.Failure{Code: 40700}, destination.Refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := tiktoktest.New(t)
			fake.FailNext(1, tt.fail)
			a, err := (&tiktok.Client{BaseURL: fake.URL}).Send(t.Context(), destination.Target{AccountID: "P", Token: tiktoktest.Token}, prepared(t, 2))
			if err != nil || a.Verdict != tt.want || a.Message == "" {
				t.Errorf("Send = %+v, %v; want verdict %d with a message", a, err, tt.want)
			}
		})
	}

	t.Run("wrong token is refused and never echoed", func(t *testing.T) {
		fake := tiktoktest.New(t)
		secret := "sekret-token-" + strings.Repeat("z", 20)
		a, err := (&tiktok.Client{BaseURL: fake.URL}).Send(t.Context(), destination.Target{AccountID: "P", Token: secret}, prepared(t, 1))
		if err != nil || a.Verdict != destination.AuthRefused {
			t.Fatalf("Send = %+v, %v; want AuthRefused", a, err)
		}
		if strings.Contains(string(a.Body)+a.Message, secret) {
			t.Errorf("the answer shows the token: %s / %s", a.Body, a.Message)
		}
	})
	t.Run("a bad hash sinks the batch", func(t *testing.T) {
		fake := tiktoktest.New(t)
		evs := prepared(t, 2)
		evs[1] = json.RawMessage(`{"event":"Lead","event_time":1764583200,"event_id":"x","user":{"email":["not-a-hash"]}}`)
		a, err := (&tiktok.Client{BaseURL: fake.URL}).Send(t.Context(), destination.Target{AccountID: "P", Token: tiktoktest.Token}, evs)
		if err != nil || a.Verdict != destination.EventRefused || !strings.Contains(a.Message, "Batch.1") {
			t.Errorf("Send = %+v, %v; want EventRefused naming Batch.1", a, err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		_, err := (&tiktok.Client{BaseURL: "http://127.0.0.1:1"}).Send(t.Context(), destination.Target{AccountID: "P", Token: "tok-secret"}, prepared(t, 1))
		if err == nil || strings.Contains(err.Error(), "tok-secret") {
			t.Errorf("Send to a closed port: %v; want an error without the token", err)
		}
	})
	t.Run("refused locally", func(t *testing.T) {
		fake := tiktoktest.New(t)
		c := &tiktok.Client{BaseURL: fake.URL}
		target := destination.Target{AccountID: "P", Token: "t"}
		for _, tc := range []struct {
			name        string
			target      destination.Target
			events      []json.RawMessage
			unsendable  bool
			wantMessage string
		}{
			{"no pixel", destination.Target{Token: "t"}, prepared(t, 1), true, "no pixel code"},
			{"no token", destination.Target{AccountID: "P"}, prepared(t, 1), true, "no access token"},
			{"a NUL in the token", destination.Target{AccountID: "P", Token: "ab\x00c"}, prepared(t, 1), true, "control character"},
			{"a line break in the token", destination.Target{AccountID: "P", Token: "ab\r\nX-Evil: 1"}, prepared(t, 1), true, "control character"},
			{"no events", target, nil, false, "no events"},
			{"too many events", target, prepared(t, tiktok.MaxBatch+1), false, "1001 events in one batch"},
			{"an event that is no object", target, []json.RawMessage{json.RawMessage(`["Lead"]`)}, false, "not a JSON object"},
		} {
			_, err := c.Send(t.Context(), tc.target, tc.events)
			var un *destination.Unsendable
			if err == nil || !strings.Contains(err.Error(), tc.wantMessage) || errors.As(err, &un) != tc.unsendable {
				t.Errorf("%s: Send = %v; want an error with %q (unsendable %v)", tc.name, err, tc.wantMessage, tc.unsendable)
			}
		}
		if n := len(fake.Requests()); n != 0 {
			t.Errorf("%d requests reached the fake; want none", n)
		}
	})
}
