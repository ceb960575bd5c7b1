package crm

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// show renders a change for comparison; "" fields are left out.
func show(c Change) string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s=%s ", k, v)
		}
	}
	add("key", c.Key)
	add("object", c.ObjectID)
	add("stage", c.StageID)
	if !c.OccurredAt.IsZero() {
		add("at", c.OccurredAt.UTC().Format(time.RFC3339Nano))
	}
	add("person", c.PersonID)
	if c.Value != nil {
		add("value", fmt.Sprint(*c.Value))
	}
	add("currency", c.Currency)
	add("lead", fmt.Sprintf("%+v", c.Lead))
	add("change", c.ChangeID)
	add("body", string(c.Body))
	add("problem", c.Problem)
	return strings.TrimSpace(b.String())
}

func showAll(cs []Change) string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, show(c))
	}
	return strings.Join(lines, "\n")
}

type parseCase struct {
	name    string
	body    string
	fields  map[string]string
	want    []Change
	ignored int
	err     string // a substring of the error; "" for none
	// problem is a substring of the Problem of the last change: the body
	// is stored and needs attention.
	problem string
}

func runParse(t *testing.T, kind Kind, tests []parseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ignored, err := Parse(kind, []byte(tt.body), tt.fields)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse error = %v; want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.problem != "" {
				if len(got) == 0 || !strings.Contains(got[len(got)-1].Problem, tt.problem) || !strings.HasPrefix(got[len(got)-1].Key, "attention:") {
					t.Fatalf("Parse changes:\n%s\nwant the last to need attention: %q", showAll(got), tt.problem)
				}
				return
			}
			if g, w := showAll(got), showAll(tt.want); g != w {
				t.Errorf("Parse changes:\n%s\nwant:\n%s", g, w)
			}
			if ignored != tt.ignored {
				t.Errorf("Parse ignored = %d; want %d", ignored, tt.ignored)
			}
		})
	}
}

func ms(n int64) time.Time { return time.UnixMilli(n).UTC() }

func value(f float64) *float64 { return &f }

const (
	hsStage   = `{"eventId":100,"subscriptionId":1234,"portalId":62515,"appId":54321,"occurredAt":1708986598741,"subscriptionType":"deal.propertyChange","attemptNumber":0,"objectId":987654321,"propertyName":"dealstage","propertyValue":"closedwon","changeSource":"CRM_UI","sourceId":"userId:45678"}`
	hsContact = `{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW","appId":54321}`
)

func TestParseHubSpot(t *testing.T) {
	won := Change{Key: "62515:987654321:dealstage:closedwon:1708986598741", Body: []byte(hsStage),
		ObjectID: "987654321", StageID: "closedwon", OccurredAt: ms(1708986598741)}
	runParse(t, HubSpot, []parseCase{
		{name: "one event", body: "[" + hsStage + "]", want: []Change{won}},
		{name: "a single object", body: hsStage, want: []Change{won}},
		{name: "mixed array: contact.creation ignored, the element kept as sent",
			body: "[\n  " + hsContact + ",\n  " + hsStage + " ,{\"subscriptionType\":\"deal.propertyChange\",\"propertyName\":\"amount\",\"objectId\":1,\"propertyValue\":\"9\"}]",
			want: []Change{won}, ignored: 2},
		{name: "eventType spelling, ids as strings",
			body: `[{"eventType":"deal.propertyChange","portalId":"62515","objectId":"987654321","propertyName":"dealstage","propertyValue":"closedwon","occurredAt":"1708986598741"}]`,
			want: []Change{{Key: "62515:987654321:dealstage:closedwon:1708986598741",
				Body:     []byte(`{"eventType":"deal.propertyChange","portalId":"62515","objectId":"987654321","propertyName":"dealstage","propertyValue":"closedwon","occurredAt":"1708986598741"}`),
				ObjectID: "987654321", StageID: "closedwon", OccurredAt: ms(1708986598741)}}},
		{name: "object.propertyChange on a deal kept, on a contact ignored",
			body: `[{"subscriptionType":"object.propertyChange","objectTypeId":"0-3","portalId":1,"objectId":12345678901234567,"propertyName":"dealstage","propertyValue":"1234567","occurredAt":1708986598741},` +
				`{"subscriptionType":"object.propertyChange","objectTypeId":"0-1","portalId":1,"objectId":5,"propertyName":"dealstage","propertyValue":"x","occurredAt":1}]`,
			want: []Change{{Key: "1:12345678901234567:dealstage:1234567:1708986598741",
				Body:     []byte(`{"subscriptionType":"object.propertyChange","objectTypeId":"0-3","portalId":1,"objectId":12345678901234567,"propertyName":"dealstage","propertyValue":"1234567","occurredAt":1708986598741}`),
				ObjectID: "12345678901234567", StageID: "1234567", OccurredAt: ms(1708986598741)}},
			ignored: 1},
		{name: "a duplicate keeps its key", body: "[" + hsStage + "," + strings.Replace(hsStage, `"attemptNumber":0`, `"attemptNumber":1`, 1) + "]",
			want: []Change{won, {Key: won.Key, Body: []byte(strings.Replace(hsStage, `"attemptNumber":0`, `"attemptNumber":1`, 1)),
				ObjectID: won.ObjectID, StageID: won.StageID, OccurredAt: won.OccurredAt}}},
		{name: "only ignored events", body: "[" + hsContact + "]", ignored: 1},
		{name: "empty array", body: "[]"},
		{name: "malformed JSON", body: "[" + hsStage, err: "not JSON"},
		{name: "not an array of objects", body: `[1,2]`, problem: "array of events or one deal record: element 0 is not an object"},
		{name: "a string", body: `"x"`, problem: "not a JSON object or an array"},
		{name: "stage change without an object id", body: `[{"subscriptionType":"deal.propertyChange","propertyName":"dealstage","propertyValue":"x"}]`, problem: "without objectId"},
		{name: "objectId of the wrong type", body: `[{"subscriptionType":"deal.propertyChange","propertyName":"dealstage","propertyValue":"x","objectId":[1]}]`, problem: "without objectId"},
		{name: "too large", body: "[" + strings.Repeat(" ", MaxBody) + "]", err: "over"},
	})
}

const (
	pdV2Stage = `{"meta":{"action":"change","entity":"deal","company_id":"8087566","entity_id":"8","id":"df47d877-8d29-4c8c-a2a1-8bf5bc7ea0e5","is_bulk_edit":false,"timestamp":"2022-11-24T15:11:55.724Z","type":"general","user_id":"12415231","version":"2.0","webhook_id":"4710827","attempt":1},` +
		`"data":{"id":8,"title":"Sample Org deal","value":100,"currency":"EUR","status":"open","pipeline_id":1,"stage_id":2,"person_id":8,"org_id":1,"custom_fields":{}},"previous":{"stage_id":1}}`
	pdV1Stage = `{"v":1,"matches_filters":{"current":[]},"meta":{"v":1,"action":"updated","object":"deal","id":8,"company_id":8087566,"user_id":12415231,"timestamp":1669302715,"timestamp_micro":1669302715724000,"webhook_id":"4710827"},` +
		`"current":{"id":8,"stage_id":3,"value":"250.5","currency":"USD","person_id":{"name":"Jane","value":9}},"previous":{"id":8,"stage_id":2,"value":"250.5","currency":"USD","person_id":9},"event":"updated.deal","retry":0}`
)

func TestParsePipedrive(t *testing.T) {
	v2 := Change{Key: "v2:df47d877-8d29-4c8c-a2a1-8bf5bc7ea0e5", Body: []byte(pdV2Stage), ObjectID: "8", StageID: "2",
		OccurredAt: time.Date(2022, 11, 24, 15, 11, 55, 724e6, time.UTC), PersonID: "8", Value: value(100), Currency: "EUR"}
	withTS := func(ts string) string {
		return strings.Replace(pdV2Stage, `"timestamp":"2022-11-24T15:11:55.724Z"`, `"timestamp":`+ts, 1)
	}
	at := func(body string, t time.Time) Change {
		c := v2
		c.Body, c.OccurredAt = []byte(body), t
		return c
	}
	runParse(t, Pipedrive, []parseCase{
		{name: "v2 stage change", body: pdV2Stage, want: []Change{v2}},
		{name: "v2 timestamp as an integer", body: withTS("1727447128"), want: []Change{at(withTS("1727447128"), time.Unix(1727447128, 0).UTC())}},
		{name: "v2 timestamp as a numeric string", body: withTS(`"1727447128"`), want: []Change{at(withTS(`"1727447128"`), time.Unix(1727447128, 0).UTC())}},
		{name: "v2 timestamp in milliseconds", body: withTS("1727447128123"), want: []Change{at(withTS("1727447128123"), ms(1727447128123))}},
		{name: "v2 timestamp not a time", body: withTS(`"yesterday"`), problem: "meta.timestamp"},
		{name: "v2 other field changed", body: strings.Replace(pdV2Stage, `"previous":{"stage_id":1}`, `"previous":{"title":"Old"}`, 1), ignored: 1},
		{name: "v2 change without previous: the deal's stage as it is",
			body: strings.Replace(pdV2Stage, `"previous":{"stage_id":1}`, `"previous":null`, 1),
			want: []Change{at(strings.Replace(pdV2Stage, `"previous":{"stage_id":1}`, `"previous":null`, 1), v2.OccurredAt)}},
		{name: "v2 deal created",
			body: strings.Replace(strings.Replace(pdV2Stage, `"action":"change"`, `"action":"create"`, 1), `"previous":{"stage_id":1}`, `"previous":null`, 1),
			want: []Change{at(strings.Replace(strings.Replace(pdV2Stage, `"action":"change"`, `"action":"create"`, 1), `"previous":{"stage_id":1}`, `"previous":null`, 1), v2.OccurredAt)}},
		{name: "v2 deal deleted", body: strings.Replace(pdV2Stage, `"action":"change"`, `"action":"delete"`, 1), ignored: 1},
		{name: "v2 person changed", body: strings.Replace(pdV2Stage, `"entity":"deal"`, `"entity":"person"`, 1), ignored: 1},
		{name: "v2 17-digit ids, string value, no person",
			body: `{"meta":{"action":"change","entity":"deal","id":"e1","timestamp":"2026-12-01T10:00:00Z","version":"2.0"},"data":{"id":12345678901234567,"stage_id":"7","value":"99.5","currency":"GBP","person_id":null},"previous":{"stage_id":6}}`,
			want: []Change{{Key: "v2:e1", ObjectID: "12345678901234567", StageID: "7", OccurredAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Value: value(99.5), Currency: "GBP",
				Body: []byte(`{"meta":{"action":"change","entity":"deal","id":"e1","timestamp":"2026-12-01T10:00:00Z","version":"2.0"},"data":{"id":12345678901234567,"stage_id":"7","value":"99.5","currency":"GBP","person_id":null},"previous":{"stage_id":6}}`)}}},
		{name: "v2 deal without stage", body: `{"meta":{"action":"create","entity":"deal","id":"e1","version":"2.0"},"data":{"id":1}}`, problem: "without a stage_id"},
		{name: "v1 stage change", body: pdV1Stage, want: []Change{{Key: "deal:8:stage:2>3:2022-11-24T15:11:55.724Z", Body: []byte(pdV1Stage), ObjectID: "8", StageID: "3",
			OccurredAt: time.UnixMicro(1669302715724000).UTC(), PersonID: "9", Value: value(250.5), Currency: "USD"}}},
		{name: "v1 other field changed", body: strings.Replace(pdV1Stage, `"stage_id":2`, `"stage_id":3`, 1), ignored: 1},
		{name: "v1 stage change with event only",
			body: `{"meta":{"id":5,"timestamp":1669302715,"webhook_id":7},"current":{"id":5,"stage_id":1},"previous":null,"event":"added.deal"}`,
			want: []Change{{Key: "deal:5:stage:>1:2022-11-24T15:11:55Z", ObjectID: "5", StageID: "1", OccurredAt: time.Unix(1669302715, 0).UTC(),
				Body: []byte(`{"meta":{"id":5,"timestamp":1669302715,"webhook_id":7},"current":{"id":5,"stage_id":1},"previous":null,"event":"added.deal"}`)}}},
		{name: "v1 person updated", body: strings.Replace(strings.Replace(pdV1Stage, `"object":"deal"`, `"object":"person"`, 1), `"updated.deal"`, `"updated.person"`, 1), ignored: 1},
		{name: "v1 deal deleted", body: strings.Replace(strings.Replace(pdV1Stage, `"action":"updated"`, `"action":"deleted"`, 1), `"updated.deal"`, `"deleted.deal"`, 1), ignored: 1},
		{name: "not a webhook", body: `{"hello":"world"}`, problem: "not a Pipedrive webhook"},
		{name: "an array", body: `[` + pdV2Stage + `]`, problem: "Pipedrive posts one JSON object"},
		{name: "malformed", body: `{"meta":`, err: "not JSON"},
	})
}

func TestParsePipedriveDuplicates(t *testing.T) {
	a, _, err := Parse(Pipedrive, []byte(pdV2Stage), nil)
	if err != nil {
		t.Fatal(err)
	}
	retry := strings.Replace(pdV2Stage, `"attempt":1`, `"attempt":2`, 1)
	b, _, err := Parse(Pipedrive, []byte(retry), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a[0].Key != b[0].Key {
		t.Errorf("a retry's key %q is not the first delivery's %q", b[0].Key, a[0].Key)
	}
}

func TestParseGeneric(t *testing.T) {
	flat := `{"email":"jane@example.com","stage":"won","occurred_at":"2026-12-02T15:30:00Z","value":1200,"currency":"EUR","change_id":"deal-88-won"}`
	nested := `{"deal":{"id":12345678901234567,"stage_id":"s-4","amount":"99.90"},"contact":{"email":"a@b.c","phones":["+44 20 7946 0000"]},"at":1700000000123}`
	runParse(t, Generic, []parseCase{
		{name: "flat, no mapping", body: flat,
			want: []Change{{Key: "change:deal-88-won", Body: []byte(flat), StageID: "won", OccurredAt: time.Date(2026, 12, 2, 15, 30, 0, 0, time.UTC),
				Value: value(1200), Currency: "EUR", ChangeID: "deal-88-won", Lead: LeadRef{Email: "jane@example.com"}}}},
		{name: "the stage API's shape",
			body: `{"lead":{"external_id":"form-1"},"stage":"booked","occurred_at":1700000000}`,
			want: []Change{{Key: "body:" + bodyHash([]byte(`{"lead":{"external_id":"form-1"},"stage":"booked","occurred_at":1700000000}`)),
				Body: []byte(`{"lead":{"external_id":"form-1"},"stage":"booked","occurred_at":1700000000}`), StageID: "booked",
				OccurredAt: time.Unix(1700000000, 0).UTC(), Lead: LeadRef{ExternalID: "form-1"}}}},
		{name: "mapped paths, array index, milliseconds, 17-digit id kept",
			body:   nested,
			fields: map[string]string{"email": "contact.email", "phone": "contact.phones.0", "stage": "deal.stage_id", "object_id": "deal.id", "value": "deal.amount", "occurred_at": "at"},
			want: []Change{{Key: "body:" + bodyHash([]byte(nested)), Body: []byte(nested), ObjectID: "12345678901234567", StageID: "s-4",
				OccurredAt: ms(1700000000123), Value: value(99.9), Lead: LeadRef{Email: "a@b.c", Phone: "+44 20 7946 0000"}}}},
		{name: "numeric lead id and meta lead id",
			body:   `{"lead_id":124,"meta":{"leadgen":123456789012345678},"stage":3}`,
			fields: map[string]string{"id": "lead_id", "meta_lead_id": "meta.leadgen"},
			want: []Change{{Key: "body:" + bodyHash([]byte(`{"lead_id":124,"meta":{"leadgen":123456789012345678},"stage":3}`)),
				Body: []byte(`{"lead_id":124,"meta":{"leadgen":123456789012345678},"stage":3}`), StageID: "3", Lead: LeadRef{ID: "124", MetaLeadID: "123456789012345678"}}}},
		{name: "an array, each object one change; a duplicate keeps its key",
			body: `[{"email":"a@b.c","stage":"won"}, {"email":"a@b.c","stage":"won"}]`,
			want: []Change{
				{Key: "body:" + bodyHash([]byte(`{"email":"a@b.c","stage":"won"}`)), Body: []byte(`{"email":"a@b.c","stage":"won"}`), StageID: "won", Lead: LeadRef{Email: "a@b.c"}},
				{Key: "body:" + bodyHash([]byte(`{"email":"a@b.c","stage":"won"}`)), Body: []byte(`{"email":"a@b.c","stage":"won"}`), StageID: "won", Lead: LeadRef{Email: "a@b.c"}},
			}},
		{name: "an unmapped id that is an object is not a lead key",
			body: `{"id":{"x":1},"email":"a@b.c","stage":"won"}`,
			want: []Change{{Key: "body:" + bodyHash([]byte(`{"id":{"x":1},"email":"a@b.c","stage":"won"}`)), Body: []byte(`{"id":{"x":1},"email":"a@b.c","stage":"won"}`), StageID: "won", Lead: LeadRef{Email: "a@b.c"}}}},
		{name: "no stage names the path", body: `{"email":"a@b.c","deal":{}}`, fields: map[string]string{"stage": "deal.stage_id"}, problem: `no stage at "deal.stage_id"`},
		{name: "no lead key", body: `{"stage":"won","name":"Jane"}`, problem: "no lead key"},
		{name: "a mapped path to an object", body: `{"email":{"primary":"a@b.c"},"stage":"won"}`, fields: map[string]string{"email": "email"}, problem: "email: is an object"},
		{name: "value not a number", body: `{"email":"a@b.c","stage":"won","value":"lots"}`, problem: `value "lots" is not a number`},
		{name: "occurred_at not a time", body: `{"email":"a@b.c","stage":"won","occurred_at":"tomorrow"}`, problem: "occurred_at"},
		{name: "the second object's problem is numbered", body: `[{"email":"a@b.c","stage":"won"},{"email":"a@b.c"}]`, problem: "object 1: no stage"},
		{name: "not objects", body: `["a"]`, problem: "not an object"},
		{name: "malformed", body: `{"stage":`, err: "not JSON"},
	})
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"2026-12-02T15:30:00+01:00", time.Date(2026, 12, 2, 14, 30, 0, 0, time.UTC), false},
		{"2022-11-24 15:11:55", time.Date(2022, 11, 24, 15, 11, 55, 0, time.UTC), false},
		{"1700000000", time.Unix(1700000000, 0), false},
		{"1700000000.5", time.Unix(1700000000, 5e8), false},
		{"1700000000123", time.UnixMilli(1700000000123), false},
		{"0", time.Time{}, true},
		{"-5", time.Time{}, true},
		{"12/02/2026", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in)
		if (err != nil) != tt.err || !got.Equal(tt.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v (error %t)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestCheckFields(t *testing.T) {
	tests := []struct {
		name   string
		fields map[string]string
		err    string
	}{
		{"none", nil, ""},
		{"every target", map[string]string{"id": "a", "external_id": "b.c", "meta_lead_id": "d", "email": "contact.emails.0", "phone": "Phone Number",
			"stage": "deal.stage_id", "occurred_at": "t", "value": "v", "currency": "c", "change_id": "x", "object_id": "o"}, ""},
		{"unknown target", map[string]string{"stage": "s", "name": "n"}, `"name" is not a field`},
		{"empty path", map[string]string{"stage": " "}, "stage: the path is empty"},
		{"leading dot", map[string]string{"stage": ".a"}, "empty key"},
		{"trailing dot", map[string]string{"stage": "a."}, "empty key"},
		{"two dots", map[string]string{"stage": "a..b"}, "empty key"},
		{"control character", map[string]string{"stage": "a\nb"}, "control character"},
		{"too long", map[string]string{"stage": strings.Repeat("a", MaxPath+1)}, "over 200"},
		{"just long enough", map[string]string{"stage": strings.Repeat("a", MaxPath)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckFields(tt.fields)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("CheckFields = %v; want %q", err, tt.err)
			}
		})
	}
}
