package capi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

var (
	now     = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	created = now.Add(-2 * time.Hour)
	account = models.Account{ID: 1, Currency: "eur", CRMName: "HubSpot", DefaultCountry: "US"}
	dataset = models.Dataset{ID: 2, PixelID: "1234567890", LDU: models.LDUOff, Mode: models.ModeLive}
)

func ptr[T any](v T) *T { return &v }

// lead is a full website lead with its stored match keys.
func lead() (models.Lead, normalize.Keys) {
	l := models.Lead{
		ID: 42, AccountID: 1, ExternalID: ptr("crm-42"), Source: models.SourceWebsite,
		Email: "Joe@Example.com", Phone: "(206) 207-2008", FirstName: "Joe", LastName: "Smith",
		City: "Menlo Park", State: "California", Zip: "94025", Country: "US",
		FBC: "fb.1.1554763741205.AbCdEf", FBP: "fb.1.1596403881668.1116446470",
		ClientIP: "203.0.113.7", ClientUserAgent: "Mozilla/5.0", EventSourceURL: "https://example.com/contact",
		CreatedAt: created,
	}
	k := normalize.Normalize(normalize.Input{
		Email: l.Email, Phone: l.Phone, FirstName: l.FirstName, LastName: l.LastName, City: l.City,
		State: l.State, Zip: l.Zip, Country: l.Country, ExternalID: *l.ExternalID, ClientIP: l.ClientIP,
		UserAgent: l.ClientUserAgent, FBC: l.FBC, FBP: l.FBP, CapturedAt: created, DefaultCountry: "US",
	})
	return l, k
}

func leadEvent(l models.Lead, name string) models.Event {
	return models.Event{
		LeadID: l.ID, Origin: models.OriginRule, EventName: name,
		EventID: capi.EventID(dataset.PixelID, name, capi.RecordKey(l)), EventTime: l.CreatedAt,
	}
}

func TestEventIDKnownVector(t *testing.T) {
	// Worked out by hand: sha256 of the literal "1234567890|Lead|crm-42".
	sum := sha256.Sum256([]byte("1234567890|Lead|crm-42"))
	want := hex.EncodeToString(sum[:])
	if want != "d837f0398e100e4f6fb364b26d87bb176c534181abf003705d998b61634c15e7" {
		t.Fatalf("test vector itself is wrong: %s", want)
	}
	if got := capi.EventID("1234567890", "Lead", "crm-42"); got != want {
		t.Errorf("EventID = %s; want %s", got, want)
	}
	if got := capi.EventID("1234567890", "QualifiedLead", "crm-42:qualified"); got != "f88d6771d957cc4a717e41acba8ec7a4e7a3c5a67dc240bc6d665db9ef60303d" {
		t.Errorf("stage EventID = %s", got)
	}
}

func TestRecordKey(t *testing.T) {
	tests := []struct {
		name string
		lead models.Lead
		want string
	}{
		{"external id as given", models.Lead{ID: 7, ExternalID: ptr("CRM-42 ")}, "CRM-42 "},
		// The own id is namespaced: lead #7 and external_id "7" must not
		// share an event id.
		{"no external id", models.Lead{ID: 7}, "lead:7"},
		{"blank external id", models.Lead{ID: 7, ExternalID: ptr("  ")}, "lead:7"},
		{"numeric external id", models.Lead{ID: 9, ExternalID: ptr("7")}, "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := capi.RecordKey(tt.lead); got != tt.want {
				t.Errorf("RecordKey = %q; want %q", got, tt.want)
			}
		})
	}
	l := models.Lead{ID: 7}
	if got := capi.StageRecordKey(l, "qualified", ""); got != "lead:7:qualified" {
		t.Errorf("StageRecordKey = %q; want lead:7:qualified", got)
	}
	if got := capi.StageRecordKey(l, "won", "deal-9"); got != "lead:7:won:deal-9" {
		t.Errorf("StageRecordKey repeatable = %q; want lead:7:won:deal-9", got)
	}
}

func TestBuildPerSource(t *testing.T) {
	tests := []struct {
		source        models.Source
		metaLeadID    string
		wantAction    string
		wantURL       bool
		wantLeadID    bool
		wantCRM       bool
		wantMessaging string
	}{
		{models.SourceWebsite, "", "website", true, false, false, ""},
		{"", "", "website", true, false, false, ""},
		{models.SourceInstantForm, "1234567890123456", "system_generated", false, true, true, ""},
		{models.SourceCRM, "", "system_generated", false, false, true, ""},
		{models.SourceWhatsApp, "", "business_messaging", false, false, false, "whatsapp"},
		{models.SourcePhone, "", "phone_call", false, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.source), func(t *testing.T) {
			l, k := lead()
			l.Source, l.MetaLeadID = tt.source, tt.metaLeadID
			e := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
			if e.ActionSource != tt.wantAction {
				t.Errorf("action_source = %q; want %q", e.ActionSource, tt.wantAction)
			}
			if got := e.EventSourceURL != ""; got != tt.wantURL {
				t.Errorf("event_source_url = %q; want present %v", e.EventSourceURL, tt.wantURL)
			}
			if _, got := e.UserData["lead_id"]; got != tt.wantLeadID {
				t.Errorf("lead_id present = %v; want %v", got, tt.wantLeadID)
			}
			if got := e.CustomData["event_source"] == "crm"; got != tt.wantCRM {
				t.Errorf("custom_data = %v; want event_source crm %v", e.CustomData, tt.wantCRM)
			}
			if tt.wantCRM && e.CustomData["lead_event_source"] != "HubSpot" {
				t.Errorf("lead_event_source = %v; want HubSpot", e.CustomData["lead_event_source"])
			}
			if e.MessagingChannel != tt.wantMessaging {
				t.Errorf("messaging_channel = %q; want %q", e.MessagingChannel, tt.wantMessaging)
			}
			if e.EventName != "Lead" || e.EventTime != created.Unix() || e.EventID != capi.EventID(dataset.PixelID, "Lead", "crm-42") {
				t.Errorf("name, time, id = %q, %d, %q", e.EventName, e.EventTime, e.EventID)
			}
		})
	}
}

func TestBuildUserData(t *testing.T) {
	l, k := lead()
	e := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
	ud := e.UserData
	for _, key := range []string{"em", "ph", "fn", "ln", "ct", "st", "zp", "country", "external_id"} {
		v, ok := ud[key].([]string)
		if !ok || len(v) != 1 || !normalize.IsHashed(v[0]) {
			t.Errorf("user_data[%s] = %#v; want one SHA-256", key, ud[key])
		}
	}
	if got := ud["em"].([]string)[0]; got != normalize.Hash("joe@example.com") {
		t.Errorf("em = %s; want hash of joe@example.com", got)
	}
	plain := map[string]string{
		"client_ip_address": "203.0.113.7", "client_user_agent": "Mozilla/5.0",
		"fbc": "fb.1.1554763741205.AbCdEf", "fbp": "fb.1.1596403881668.1116446470",
	}
	for key, want := range plain {
		if ud[key] != want {
			t.Errorf("user_data[%s] = %#v; want %q unhashed", key, ud[key], want)
		}
	}
	for _, key := range []string{"ge", "db", "lead_id"} {
		if _, ok := ud[key]; ok {
			t.Errorf("user_data[%s] present for a lead without it", key)
		}
	}
	raw, _ := json.Marshal(e)
	for _, s := range []string{"Joe@Example.com", "joe@example.com", "2062072008", "Smith"} {
		if strings.Contains(string(raw), s) {
			t.Errorf("payload carries raw contact data %q: %s", s, raw)
		}
	}

	// A lead with only an email has nothing else.
	k2 := normalize.Normalize(normalize.Input{Email: "a@b.co"})
	e2 := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: models.Lead{ID: 1}, Keys: k2,
		Event: models.Event{EventName: "Lead", EventID: "x", EventTime: now}})
	if keys := mapKeys(e2.UserData); !slices.Equal(keys, []string{"em"}) {
		t.Errorf("user_data keys = %v; want [em]", keys)
	}
}

func mapKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestBuildLeadIDIsAnExactInteger(t *testing.T) {
	l, k := lead()
	l.Source, l.MetaLeadID = models.SourceInstantForm, " 12345678901234567 "
	e := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"lead_id":12345678901234567`) {
		t.Errorf("payload = %s; want lead_id as the integer 12345678901234567", raw)
	}
	back, err := capi.ParseEvent(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := capi.Validate(back, now); err != nil {
		t.Errorf("Validate(parsed payload) = %v", err)
	}

	// A malformed lead id is kept as text, so encoding never fails, and
	// Validate holds the event back.
	l.MetaLeadID = "l:123"
	e = capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
	if _, err := json.Marshal(e); err != nil {
		t.Fatalf("Marshal with bad lead id: %v", err)
	}
	if err := capi.Validate(e, now); err == nil || !strings.Contains(err.Error(), "lead_id") {
		t.Errorf("Validate(bad lead id) = %v; want a lead_id problem", err)
	}
}

// Stage events carry what Meta's Conversions API for CRM requires,
// whatever the lead's source: system_generated, event_source "crm" and
// the CRM's name as lead_event_source.
func TestBuildStageEvents(t *testing.T) {
	tests := []struct {
		name      string
		source    models.Source
		crmName   string
		wantCRM   string // lead_event_source; "" for none
		wantURL   bool
		wantValue bool
	}{
		{"website lead", models.SourceWebsite, "HubSpot", "HubSpot", false, false},
		{"crm lead", models.SourceCRM, "HubSpot", "HubSpot", false, false},
		{"instant form lead, no CRM name", models.SourceInstantForm, " ", "leadsignal", false, false},
		{"whatsapp lead", models.SourceWhatsApp, "HubSpot", "HubSpot", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, k := lead()
			l.Source = tt.source
			acc := account
			acc.CRMName = tt.crmName
			ev := models.Event{Origin: models.OriginStage, EventName: "QualifiedLead", EventTime: now,
				EventID: capi.EventID(dataset.PixelID, "QualifiedLead", capi.StageRecordKey(l, "qualified", ""))}
			e := capi.Build(capi.BuildInput{Account: acc, Dataset: dataset, Lead: l, Keys: k, Event: ev})
			if e.ActionSource != "system_generated" {
				t.Errorf("action_source = %q; want system_generated", e.ActionSource)
			}
			if e.MessagingChannel != "" || e.EventSourceURL != "" {
				t.Errorf("messaging_channel, event_source_url = %q, %q; want none", e.MessagingChannel, e.EventSourceURL)
			}
			got, _ := e.CustomData["lead_event_source"].(string)
			if got != tt.wantCRM {
				t.Errorf("lead_event_source = %q; want %q", got, tt.wantCRM)
			}
			if src, _ := e.CustomData["event_source"].(string); (src == "crm") != (tt.wantCRM != "") {
				t.Errorf("event_source = %q", src)
			}
			if err := capi.Validate(e, now); err != nil {
				t.Errorf("Validate = %v", err)
			}
		})
	}
}

func TestBuildValueAndPartial(t *testing.T) {
	tests := []struct {
		name       string
		value      *float64
		currency   string
		accountCur string
		partial    bool
		want       map[string]any
	}{
		{"no value", nil, "usd", "eur", false, nil},
		{"value with own currency upper-cased", ptr(120.5), " usd ", "eur", false, map[string]any{"value": 120.5, "currency": "USD"}},
		{"value with account currency", ptr(99.0), "", "eur", false, map[string]any{"value": 99.0, "currency": "EUR"}},
		{"zero value is a value", ptr(0.0), "GBP", "", false, map[string]any{"value": 0.0, "currency": "GBP"}},
		{"value, no currency anywhere", ptr(5.0), "", "", false, map[string]any{"value": 5.0}},
		{"partial lead", nil, "", "eur", true, map[string]any{"lead_type": "partial"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, k := lead()
			l.Partial = tt.partial
			acc := account
			acc.Currency = tt.accountCur
			ev := leadEvent(l, "Lead")
			ev.Value, ev.Currency = tt.value, tt.currency
			e := capi.Build(capi.BuildInput{Account: acc, Dataset: dataset, Lead: l, Keys: k, Event: ev})
			if !reflect.DeepEqual(e.CustomData, tt.want) {
				t.Errorf("custom_data = %#v; want %#v", e.CustomData, tt.want)
			}
		})
	}
}

func TestBuildLDU(t *testing.T) {
	leads := []struct {
		name, country, state string
		california           bool
	}{
		{"California code", "US", "CA", true},
		{"California name, any case", "united states", "cALIFORNIA", true},
		{"California, no country", "", "ca", true},
		{"Texas", "US", "TX", false},
		{"Texas name", "", "Texas", false},
		{"Canada with state CA", "CA", "CA", false},
		{"foreign", "DE", "Bayern", false},
		{"no state", "US", "", false},
	}
	for _, setting := range []models.LDU{models.LDUOff, models.LDUCalifornia, models.LDUAlways} {
		for _, tt := range leads {
			t.Run(string(setting)+"/"+tt.name, func(t *testing.T) {
				l, k := lead()
				l.Country, l.State = tt.country, tt.state
				if got := capi.FromCalifornia(l); got != tt.california {
					t.Errorf("FromCalifornia = %v; want %v", got, tt.california)
				}
				ds := dataset
				ds.LDU = setting
				e := capi.Build(capi.BuildInput{Account: account, Dataset: ds, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
				raw, _ := json.Marshal(e)
				var got struct {
					Options []string `json:"data_processing_options"`
					Country *int     `json:"data_processing_options_country"`
					State   *int     `json:"data_processing_options_state"`
				}
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				var want []string
				var wantCountry, wantState *int
				switch {
				case setting == models.LDUAlways:
					want, wantCountry, wantState = []string{"LDU"}, ptr(0), ptr(0)
				case setting == models.LDUCalifornia && tt.california:
					want, wantCountry, wantState = []string{"LDU"}, ptr(1), ptr(1000)
				default:
					want = []string{}
				}
				if !reflect.DeepEqual(got.Options, want) || !reflect.DeepEqual(got.Country, wantCountry) || !reflect.DeepEqual(got.State, wantState) {
					t.Errorf("payload %s: options %#v country %v state %v; want %#v %v %v",
						raw, got.Options, deref(got.Country), deref(got.State), want, deref(wantCountry), deref(wantState))
				}
				if want != nil && len(want) == 0 && !strings.Contains(string(raw), `"data_processing_options":[]`) {
					t.Errorf("payload %s; want an explicit data_processing_options: []", raw)
				}
			})
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestNewTarget(t *testing.T) {
	ds := models.Dataset{PixelID: "99", Mode: models.ModeLive, TestEventCode: "TEST1"}
	got := capi.NewTarget("http://graph", "v24.0", ds, "tok", "sec")
	want := capi.Target{BaseURL: "http://graph", Version: "v24.0", PixelID: "99", Token: "tok", AppSecret: "sec"}
	if got != want {
		t.Errorf("live NewTarget = %+v; want %+v", got, want)
	}
	ds.Mode, ds.APIVersion = models.ModeTest, "v25.0"
	want.TestEventCode, want.Version = "TEST1", "v25.0"
	if got := capi.NewTarget("http://graph", "v24.0", ds, "tok", "sec"); got != want {
		t.Errorf("test NewTarget = %+v; want %+v", got, want)
	}
}

func TestBatchEvent(t *testing.T) {
	data := []byte(`[{"event_name":"Lead","event_id":"a"},{"event_name":"Lead","event_id":"b","user_data":{"em":["x"]}}]`)
	tests := []struct {
		name, data, id, want string
	}{
		{"first", string(data), "a", `{"event_name":"Lead","event_id":"a"}`},
		{"second", string(data), "b", `{"event_name":"Lead","event_id":"b","user_data":{"em":["x"]}}`},
		{"absent", string(data), "c", ""},
		{"not an array", `{"data":[]}`, "a", ""},
		{"empty", "", "a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(capi.BatchEvent([]byte(tt.data), tt.id)); got != tt.want {
				t.Errorf("capi.BatchEvent(%q) = %q; want %q", tt.id, got, tt.want)
			}
		})
	}
}
