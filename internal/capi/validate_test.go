package capi_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

// validEvent is a website Lead Meta accepts, sent at now.
func validEvent() capi.ServerEvent {
	return capi.ServerEvent{
		EventName: "Lead", EventTime: now.Add(-time.Hour).Unix(), EventID: "abc",
		ActionSource: "website", EventSourceURL: "https://example.com/contact",
		UserData: map[string]any{
			"em":                []string{normalize.Hash("joe@example.com")},
			"client_user_agent": "Mozilla/5.0",
			"client_ip_address": "203.0.113.7",
		},
		DataProcessingOptions: []string{},
	}
}

func TestValidate(t *testing.T) {
	hash := normalize.Hash("x")
	tests := []struct {
		name      string
		change    func(e *capi.ServerEvent)
		wantField string // "" for valid
		wantIn    string // part of the reason
	}{
		{"valid", func(*capi.ServerEvent) {}, "", ""},
		{"exactly 7 days old", func(e *capi.ServerEvent) { e.EventTime = now.Add(-capi.MaxAge).Unix() }, "", ""},
		{"7 days and a second", func(e *capi.ServerEvent) { e.EventTime = now.Add(-capi.MaxAge).Unix() - 1 }, "event_time", "older than 7 days"},
		{"a little ahead (clock skew)", func(e *capi.ServerEvent) { e.EventTime = now.Add(30 * time.Second).Unix() }, "", ""},
		{"ahead by minutes", func(e *capi.ServerEvent) { e.EventTime = now.Add(5 * time.Minute).Unix() }, "event_time", "in the future"},
		{"no time", func(e *capi.ServerEvent) { e.EventTime = 0 }, "event_time", "missing"},
		{"no name", func(e *capi.ServerEvent) { e.EventName = " " }, "event_name", "missing"},
		{"long name", func(e *capi.ServerEvent) { e.EventName = strings.Repeat("x", 101) }, "event_name", "longer than 100"},
		{"100 character name", func(e *capi.ServerEvent) { e.EventName = strings.Repeat("x", 100) }, "", ""},
		{"no event id", func(e *capi.ServerEvent) { e.EventID = "" }, "event_id", "missing"},
		{"no action source", func(e *capi.ServerEvent) { e.ActionSource = "" }, "action_source", "missing"},
		{"unknown action source", func(e *capi.ServerEvent) { e.ActionSource = "crm" }, "action_source", "unknown"},
		{"no user data", func(e *capi.ServerEvent) { e.UserData = nil }, "user_data", "missing"},
		{"website without url", func(e *capi.ServerEvent) { e.EventSourceURL = "" }, "event_source_url", "required"},
		{"website without user agent", func(e *capi.ServerEvent) { delete(e.UserData, "client_user_agent") }, "user_data.client_user_agent", "required"},
		{"system event without url or agent", func(e *capi.ServerEvent) {
			e.ActionSource, e.EventSourceURL = "system_generated", ""
			delete(e.UserData, "client_user_agent")
		}, "", ""},
		{"raw email", func(e *capi.ServerEvent) { e.UserData["em"] = []string{"joe@example.com"} }, "user_data.em", "SHA-256"},
		{"raw phone as string", func(e *capi.ServerEvent) { e.UserData["ph"] = "12062072008" }, "user_data.ph", "SHA-256"},
		{"empty hash list", func(e *capi.ServerEvent) { e.UserData["fn"] = []string{} }, "user_data.fn", "list"},
		{"hashes decoded from JSON", func(e *capi.ServerEvent) { e.UserData["em"] = []any{hash, hash} }, "", ""},
		{"good fbc", func(e *capi.ServerEvent) { e.UserData["fbc"] = "fb.1.1554763741205.AbCdEf" }, "", ""},
		{"fbc with appendix", func(e *capi.ServerEvent) { e.UserData["fbc"] = "fb.1.1554763741205.AbCdEf.AQQCAQAA" }, "", ""},
		{"fbc with 3 segments", func(e *capi.ServerEvent) { e.UserData["fbc"] = "fb.1.AbCdEf" }, "user_data.fbc", "malformed"},
		{"fbc with 6 segments", func(e *capi.ServerEvent) { e.UserData["fbc"] = "fb.1.1.a.AQ.x" }, "user_data.fbc", "malformed"},
		{"good fbp", func(e *capi.ServerEvent) { e.UserData["fbp"] = "fb.2.1596403881668.1116446470" }, "", ""},
		{"fbp not fb.", func(e *capi.ServerEvent) { e.UserData["fbp"] = "GA1.2.3.4" }, "user_data.fbp", "malformed"},
		{"private ip", func(e *capi.ServerEvent) { e.UserData["client_ip_address"] = "10.0.0.1" }, "user_data.client_ip_address", "public"},
		{"lead id 15 digits", func(e *capi.ServerEvent) { e.UserData["lead_id"] = json.Number("123456789012345") }, "", ""},
		{"lead id 17 digits as float", func(e *capi.ServerEvent) { e.UserData["lead_id"] = float64(12345678901234567) }, "", ""},
		{"lead id 14 digits", func(e *capi.ServerEvent) { e.UserData["lead_id"] = "12345678901234" }, "user_data.lead_id", "15-17"},
		{"lead id 18 digits", func(e *capi.ServerEvent) { e.UserData["lead_id"] = json.Number("123456789012345678") }, "user_data.lead_id", "15-17"},
		{"lead id with letters", func(e *capi.ServerEvent) { e.UserData["lead_id"] = "l:1234567890123456" }, "user_data.lead_id", "15-17"},
		{"no customer key", func(e *capi.ServerEvent) {
			e.UserData = map[string]any{"client_user_agent": "Mozilla/5.0", "ct": []string{hash}}
		}, "user_data", "no customer information"},
		{"ip and agent are enough on the web", func(e *capi.ServerEvent) { delete(e.UserData, "em") }, "", ""},
		{"ip and agent are not enough elsewhere", func(e *capi.ServerEvent) {
			delete(e.UserData, "em")
			e.ActionSource = "phone_call"
		}, "user_data", "no customer information"},
		{"lead id alone", func(e *capi.ServerEvent) {
			e.ActionSource = "system_generated"
			e.UserData = map[string]any{"lead_id": json.Number("1234567890123456")}
		}, "", ""},
		{"fbp alone", func(e *capi.ServerEvent) {
			e.ActionSource = "system_generated"
			e.UserData = map[string]any{"fbp": "fb.1.1596403881668.1116446470"}
		}, "", ""},
		{"purchase", func(e *capi.ServerEvent) {
			e.EventName, e.CustomData = "Purchase", map[string]any{"value": 10.0, "currency": "USD"}
		}, "", ""},
		{"purchase without value", func(e *capi.ServerEvent) {
			e.EventName, e.CustomData = "Purchase", map[string]any{"currency": "USD"}
		}, "custom_data.value", "required for Purchase"},
		{"purchase without currency", func(e *capi.ServerEvent) {
			e.EventName, e.CustomData = "Purchase", map[string]any{"value": 10.0}
		}, "custom_data.currency", "required for Purchase"},
		{"value NaN", func(e *capi.ServerEvent) { e.CustomData = map[string]any{"value": math.NaN()} }, "custom_data.value", "not a number"},
		{"value as text", func(e *capi.ServerEvent) { e.CustomData = map[string]any{"value": "10"} }, "custom_data.value", "not a number"},
		{"unknown currency", func(e *capi.ServerEvent) { e.CustomData = map[string]any{"value": 1.0, "currency": "XYZ"} }, "custom_data.currency", "ISO 4217"},
		{"lower-case currency", func(e *capi.ServerEvent) { e.CustomData = map[string]any{"value": 1.0, "currency": "usd"} }, "", ""},
		{"ldu", func(e *capi.ServerEvent) { e.DataProcessingOptions = []string{"LDU"} }, "", ""},
		{"unknown data processing option", func(e *capi.ServerEvent) { e.DataProcessingOptions = []string{"GDPR"} }, "data_processing_options", "unknown"},
		{"business messaging", func(e *capi.ServerEvent) {
			e.ActionSource, e.EventName, e.MessagingChannel = "business_messaging", "LeadSubmitted", "whatsapp"
		}, "", ""},
		{"business messaging Lead", func(e *capi.ServerEvent) {
			e.ActionSource, e.MessagingChannel = "business_messaging", "whatsapp"
		}, "event_name", "business_messaging accepts only"},
		{"business messaging without channel", func(e *capi.ServerEvent) {
			e.ActionSource, e.EventName = "business_messaging", "LeadSubmitted"
		}, "messaging_channel", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEvent()
			tt.change(&e)
			err := capi.Validate(e, now)
			if tt.wantField == "" {
				if err != nil {
					t.Errorf("Validate = %v; want nil", err)
				}
				return
			}
			var inv *capi.Invalid
			if !errors.As(err, &inv) {
				t.Fatalf("Validate = %v; want *capi.Invalid for %s", err, tt.wantField)
			}
			if inv.Field != tt.wantField || !strings.Contains(inv.Reason, tt.wantIn) {
				t.Errorf("Validate = %q; want field %s with %q", err, tt.wantField, tt.wantIn)
			}
		})
	}
}

func TestValidateTimeVerdicts(t *testing.T) {
	old := validEvent()
	old.EventTime = now.Add(-8 * 24 * time.Hour).Unix()
	old.UserData = nil // expired wins over every other problem
	var inv *capi.Invalid
	if err := capi.Validate(old, now); !errors.As(err, &inv) || !inv.Expired() || inv.Future() {
		t.Errorf("Validate(old) = %v; want Expired", err)
	}
	if inv.Error() != "event_time: older than 7 days" {
		t.Errorf("Error() = %q", inv.Error())
	}
	early := validEvent()
	early.EventTime = now.Add(time.Hour).Unix()
	if err := capi.Validate(early, now); !errors.As(err, &inv) || !inv.Future() || inv.Expired() {
		t.Errorf("Validate(early) = %v; want Future", err)
	}
	// The same event is fine once its time has come.
	if err := capi.Validate(early, now.Add(time.Hour)); err != nil {
		t.Errorf("Validate(early, later) = %v", err)
	}
}

func TestValidateBuiltEvents(t *testing.T) {
	// Every event Build makes from a complete lead passes, per source.
	for _, src := range []string{"website", "instant_form", "crm", "phone"} {
		l, k := lead()
		l.Source = models.Source(src)
		e := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
		if err := capi.Validate(e, now); err != nil {
			t.Errorf("%s: Validate(Build) = %v", src, err)
		}
	}
}
