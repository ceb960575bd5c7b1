package crm

import (
	"strings"
	"testing"
	"time"
)

// A HubSpot workflow's "Send a webhook" action posts the deal record, not
// an app webhook's events: its stage is a change too, in each of the
// shapes HubSpot posts it.
func TestParseHubSpotWorkflowRecords(t *testing.T) {
	tests := []struct {
		name               string
		body               string
		object, stage      string
		at                 time.Time
		value              float64
		currency, keyStart string
	}{
		{"objects API shape", `{"id":"987","properties":{"dealstage":"closedwon","amount":"1500.50","deal_currency_code":"EUR",
			"hs_lastmodifieddate":"2026-12-01T10:00:00Z"},"updatedAt":"2026-12-01T10:00:01Z"}`,
			"987", "closedwon", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), 1500.5, "EUR", "workflow::987:closedwon:"},
		{"legacy workflow webhook", `{"portalId":62515,"objectId":12345678901234567,"properties":{"dealstage":{"value":"qualifiedtobuy",
			"timestamp":1764583200000},"amount":{"value":"200"}}}`,
			"12345678901234567", "qualifiedtobuy", time.UnixMilli(1764583200000).UTC(), 200, "", "workflow:62515:12345678901234567:qualifiedtobuy:1764583200000"},
		{"chosen properties flat", `{"hs_object_id":"55","dealstage":"appointmentscheduled"}`,
			"55", "appointmentscheduled", time.Time{}, 0, "", "workflow::55:appointmentscheduled::"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes, ignored, err := Parse(HubSpot, []byte(tt.body), nil)
			if err != nil || ignored != 0 || len(changes) != 1 {
				t.Fatalf("Parse = %+v, %d, %v; want one change", changes, ignored, err)
			}
			ch := changes[0]
			if ch.ObjectID != tt.object || ch.StageID != tt.stage || !ch.OccurredAt.Equal(tt.at) || ch.Currency != tt.currency {
				t.Errorf("change = %+v; want deal %s at %s, %v, %q", ch, tt.object, tt.stage, tt.at, tt.currency)
			}
			if tt.value != 0 && (ch.Value == nil || *ch.Value != tt.value) {
				t.Errorf("value = %v; want %v", ch.Value, tt.value)
			}
			if len(ch.Key) < len(tt.keyStart) || ch.Key[:len(tt.keyStart)] != tt.keyStart {
				t.Errorf("key = %q; want it to start %q", ch.Key, tt.keyStart)
			}
			again, _, _ := Parse(HubSpot, []byte(tt.body), nil)
			if again[0].Key != ch.Key {
				t.Errorf("the same record gives keys %q and %q; want one", ch.Key, again[0].Key)
			}
		})
	}
	// A contact record, a deal record without its stage, or one without
	// its id, cannot become a change: it is kept, and needs attention.
	for body, problem := range map[string]string{
		`{"id":"1","properties":{"email":"a@example.com"}}`: `HubSpot deal "1" has no dealstage`,
		`{"objectId":5,"properties":{"amount":"3"}}`:        `HubSpot deal "5" has no dealstage`,
		`{"properties":{"dealstage":"closedwon"}}`:          "no objectId, dealId, id or hs_object_id",
	} {
		changes, ignored, err := Parse(HubSpot, []byte(body), nil)
		if err != nil || ignored != 0 || len(changes) != 1 || !strings.Contains(changes[0].Problem, problem) {
			t.Errorf("Parse(%s) = %+v, %d, %v; want one change needing attention: %s", body, changes, ignored, err, problem)
		}
	}
}
