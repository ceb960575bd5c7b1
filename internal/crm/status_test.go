package crm

import (
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// Pipedrive's won and lost are a status: "Mark as won" sets status and
// won_time and leaves stage_id, so the change is one to CRM stage id won
// (or lost), at won_time (lost_time), else update_time.
func TestParsePipedriveStatus(t *testing.T) {
	const (
		v2Won = `{"meta":{"action":"change","entity":"deal","company_id":"8087566","entity_id":"8","id":"evt-won","timestamp":"2026-12-01T10:00:05.120Z","version":"2.0","attempt":1},` +
			`"data":{"id":8,"title":"Sample Org deal","value":2400,"currency":"GBP","status":"won","pipeline_id":1,"stage_id":4,"person_id":8,` +
			`"update_time":"2026-12-01T10:00:05Z","won_time":"2026-12-01T10:00:04Z","lost_time":null},"previous":{"status":"open","won_time":null}}`
		v1Won = `{"v":1,"retry":0,"event":"updated.deal","meta":{"v":1,"action":"updated","object":"deal","id":8,"timestamp":1796119205},` +
			`"current":{"id":8,"status":"won","stage_id":4,"value":2400,"currency":"GBP","person_id":8,"won_time":"2026-12-01 10:00:04","update_time":"2026-12-01 10:00:05"},` +
			`"previous":{"id":8,"status":"open","stage_id":4,"value":2400,"currency":"GBP","person_id":8,"won_time":null,"update_time":"2026-11-30 09:00:00"}}`
	)
	wonAt := time.Date(2026, 12, 1, 10, 0, 4, 0, time.UTC)
	v1Lost := strings.NewReplacer(`"status":"won"`, `"status":"lost"`, `"won_time":"2026-12-01 10:00:04"`, `"lost_time":"2026-12-01 10:00:03"`).Replace(v1Won)
	tests := []struct {
		name, body   string
		stage        string
		at           time.Time
		keyHas       string
		ignored      bool
		value        float64
		personID     string
		wantCurrency string
	}{
		{name: "v2 marked won", body: v2Won, stage: "won", at: wonAt, keyHas: "v2:evt-won", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v2 won without meta.id", body: strings.Replace(v2Won, `"id":"evt-won",`, "", 1), stage: "won", at: wonAt,
			keyHas: "deal:8:status:open>won:2026-12-01T10:00:05.12Z", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v2 won and moved: the status is what Meta must learn",
			body: strings.Replace(v2Won, `"previous":{"status":"open"`, `"previous":{"stage_id":3,"status":"open"`, 1), stage: "won", at: wonAt,
			keyHas: "v2:evt-won", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v2 won without won_time: update_time",
			body: strings.Replace(v2Won, `"won_time":"2026-12-01T10:00:04Z"`, `"won_time":null`, 1), stage: "won",
			at: time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC), keyHas: "v2:evt-won", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v2 lost", body: strings.NewReplacer(`"status":"won"`, `"status":"lost"`, `"lost_time":null`, `"lost_time":"2026-12-01T10:00:03Z"`).Replace(v2Won),
			stage: "lost", at: time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC), keyHas: "v2:evt-won", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v2 reopened is no stage change",
			body: strings.NewReplacer(`"status":"won"`, `"status":"open"`, `"previous":{"status":"open"`, `"previous":{"status":"won"`).Replace(v2Won), ignored: true},
		{name: "v2 a won deal's title edited", body: strings.Replace(v2Won, `"previous":{"status":"open","won_time":null}`, `"previous":{"title":"Old"}`, 1), ignored: true},
		{name: "v2 deal created won", body: strings.NewReplacer(`"action":"change"`, `"action":"create"`, `"previous":{"status":"open","won_time":null}`, `"previous":null`).Replace(v2Won),
			stage: "won", at: wonAt, keyHas: "v2:evt-won", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v1 marked won, stage_id as it was", body: v1Won, stage: "won", at: wonAt,
			keyHas: "deal:8:status:open>won:2026-12-01T10:00:05Z", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v1 lost", body: v1Lost, stage: "lost", at: time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC),
			keyHas: "deal:8:status:open>lost:", value: 2400, personID: "8", wantCurrency: "GBP"},
		{name: "v1 a won deal edited", body: strings.Replace(v1Won, `"previous":{"id":8,"status":"open"`, `"previous":{"id":8,"status":"won"`, 1), ignored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes, ignored, err := Parse(Pipedrive, []byte(tt.body), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.ignored {
				if len(changes) != 0 || ignored != 1 {
					t.Errorf("Parse = %+v, %d ignored; want it ignored", changes, ignored)
				}
				return
			}
			if len(changes) != 1 || changes[0].Problem != "" {
				t.Fatalf("Parse = %+v; want one change", changes)
			}
			ch := changes[0]
			if ch.StageID != tt.stage || !ch.OccurredAt.Equal(tt.at) || !strings.Contains(ch.Key, tt.keyHas) || ch.ObjectID != "8" {
				t.Errorf("change = stage %q at %v key %q deal %q; want stage %q at %v, key with %q, deal 8", ch.StageID, ch.OccurredAt, ch.Key,
					ch.ObjectID, tt.stage, tt.at, tt.keyHas)
			}
			if ch.Value == nil || *ch.Value != tt.value || ch.Currency != tt.wantCurrency || ch.PersonID != tt.personID {
				t.Errorf("value %v %q person %q; want %v %q person %q", ch.Value, ch.Currency, ch.PersonID, tt.value, tt.wantCurrency, tt.personID)
			}
		})
	}

	// Won, reopened and won again: two changes, two keys.
	again := strings.NewReplacer(`"won_time":"2026-12-01 10:00:04"`, `"won_time":"2026-12-03 16:00:00"`, `"timestamp":1796119205`, `"timestamp":1796313600`).Replace(v1Won)
	if a, b := parseOne(t, Pipedrive, v1Won).Key, parseOne(t, Pipedrive, again).Key; a == b {
		t.Errorf("a deal won twice gives one key %q; want two", a)
	}
}

// A Pipedrive connection's stage table lists won and lost whatever its
// API lists; won means the account's won stage until it is mapped
// otherwise. Other kinds have no such rows.
func TestWithStatusStages(t *testing.T) {
	rows := []models.CRMStage{{CRMStageID: "4", Label: "Won deals", Stage: "won"}, {CRMStageID: "lost", Stage: "qualified"}}
	got := WithStatusStages(Pipedrive, rows)
	want := []models.CRMStage{{CRMStageID: "4", Label: "Won deals", Stage: "won"}, {CRMStageID: "lost", Label: "Lost", Stage: "qualified"},
		{CRMStageID: "won", Label: "Won", Stage: models.StageWon}}
	if len(got) != len(want) {
		t.Fatalf("WithStatusStages = %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v; want %+v", i, got[i], want[i])
		}
	}
	if rows[1].Label != "" {
		t.Error("WithStatusStages changed the rows it was given")
	}
	if got := WithStatusStages(HubSpot, rows); len(got) != 2 {
		t.Errorf("HubSpot rows = %+v; want its own two", got)
	}
}
