package capi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

// reflected has ServerEvent's fields and tags but not its MarshalJSON, so
// json.Marshal encodes it by reflection: the reference.
type reflected capi.ServerEvent

func TestMarshalJSONMatchesEncodingJSON(t *testing.T) {
	keys := normalize.Normalize(normalize.Input{Email: "Jane.Doe@example.com", Phone: "+1 (415) 555-0100", FirstName: "José",
		City: "San Francisco", State: "California", Country: "US", ExternalID: "crm-42", ClientIP: "203.0.113.9",
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) <script>&", FBCLID: "IwAR123", CapturedAt: time.Unix(1_700_000_000, 0)})
	value := 12.5
	built := func(source models.Source, ldu models.LDU, origin string, edit func(*models.Lead)) capi.ServerEvent {
		l := models.Lead{Source: source, EventSourceURL: "https://example.com/a?b=1&c=<2>", State: "CA", MetaLeadID: "123456789012345"}
		if edit != nil {
			edit(&l)
		}
		return capi.Build(capi.BuildInput{Account: models.Account{Currency: "usd", CRMName: "Hub\u2028Spot"},
			Dataset: models.Dataset{LDU: ldu}, Lead: l, Keys: keys,
			Event: models.Event{EventName: "Lead", EventID: "e1", EventTime: time.Unix(1_700_000_000, 0), Value: &value, Origin: origin}})
	}
	tests := []struct {
		name string
		e    capi.ServerEvent
	}{
		{"website", built(models.SourceWebsite, models.LDUOff, models.OriginRule, nil)},
		{"crm with LDU", built(models.SourceCRM, models.LDUAlways, models.OriginStage, func(l *models.Lead) { l.Partial = true })},
		{"whatsapp in California", built(models.SourceWhatsApp, models.LDUCalifornia, models.OriginRule, nil)},
		{"odd lead id", built(models.SourceInstantForm, models.LDUOff, models.OriginRule, func(l *models.Lead) { l.MetaLeadID = "l-1" })},
		{"zero", capi.ServerEvent{}},
		{"odd values", capi.ServerEvent{EventName: "Ünïcode \"quoted\" \\ \x01", UserData: map[string]any{
			"a": []any{"x", 1.5}, "b": []string(nil), "c": json.Number("12"), "d": nil, "\u2029": "\xff"},
			CustomData: map[string]any{"value": 1e21, "n": 3}, DataProcessingOptions: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.e.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(reflected(tt.e))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("MarshalJSON() =\n%s\nwant (encoding/json)\n%s", got, want)
			}
		})
	}
}
