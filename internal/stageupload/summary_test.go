package stageupload

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
)

// A pass's summary survives the upload's column: what it counted reads
// back the same, and an upload kept before the summary (events per name
// alone) reads as its events.
func TestSummaryRoundTrip(t *testing.T) {
	var s Summary
	s.add(2, decide.Outcome{Unmapped: true, Change: models.StageChange{Stage: "Closed Won"}})
	s.add(3, decide.Outcome{Unmapped: true, Change: models.StageChange{Stage: "closed-won"}})
	s.add(4, decide.Outcome{Refused: &decide.Refusal{Code: decide.ValueRequired, Field: "value", Message: "needs the value"}})
	s.add(5, decide.Outcome{Events: []models.Event{{EventName: "Lead"}, {EventName: "Purchase", Status: models.EventFailed, LastError: "not sent: value"}}})
	s.add(6, decide.Outcome{Replayed: true, Events: []models.Event{{EventName: "Lead"}}})
	s.add(7, decide.Outcome{Refused: &decide.Refusal{Code: decide.LeadNotFound}})
	want := Summary{
		Events:   map[string]int{"Lead": 1, "Purchase": 1},
		Unmapped: []LabelRows{{Label: "Closed Won", Rows: 2}},
		Flagged:  2,
		Flags:    []Flag{{Row: 4, Event: "Purchase", Reason: "needs the value"}, {Row: 5, Event: "Purchase", Reason: "not sent: value"}},
	}
	enc, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSummary(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("summary read back = %+v; want %+v", got, want)
	}
	for _, tt := range []struct{ in, want string }{{`{"Lead":3}`, "map[Lead:3]"}, {`{}`, "map[]"}, {`{"events":{}}`, "map[]"}} {
		s, err := DecodeSummary(tt.in)
		if err != nil || len(s.Unmapped) != 0 || fmt.Sprint(s.Events) != tt.want {
			t.Errorf("DecodeSummary(%s) = %+v, %v; want events %s", tt.in, s, err, tt.want)
		}
	}
	if _, err := DecodeSummary(`[1]`); err == nil {
		t.Error("DecodeSummary([1]) = nil error")
	}
}

// The labels an upload skips or reads as stages are kept beside its
// columns, and neither hides the other.
func TestMappingKeepsLabels(t *testing.T) {
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{stagecsv.Email: 0, stagecsv.Stage: 1}, DateOrder: stagecsv.DayFirst}
	l := Labels{Skip: []string{"Closed Lost"}, Aliases: []StageAlias{{Label: "Closed Won", Stage: "won"}}}
	enc, err := encodeMapping(m, l)
	if err != nil {
		t.Fatal(err)
	}
	u := models.StageUpload{Mapping: enc, Header: "[]"}
	gotM, _, err := Decode(u)
	if err != nil {
		t.Fatal(err)
	}
	gotL, err := DecodeLabels(u)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, gotM) {
		t.Errorf("mapping = %+v; want %+v", gotM, m)
	}
	if !reflect.DeepEqual(l, gotL) {
		t.Errorf("labels = %+v; want %+v", gotL, l)
	}
	r := newReader(gotL)
	if !r.skips("closed-lost") || r.skips("Closed Won") || r.stage("CLOSED WON") != "won" || r.stage("Lost") != "Lost" {
		t.Errorf("reader: skips closed-lost %v, Closed Won %v; CLOSED WON reads %q, Lost %q", r.skips("closed-lost"), r.skips("Closed Won"),
			r.stage("CLOSED WON"), r.stage("Lost"))
	}
}

func TestNothingToRecord(t *testing.T) {
	for _, tt := range []struct {
		refused, replayed, skipped int
		want                       string
	}{
		{20, 0, 0, "Nothing to record: 20 rows refused."},
		{1, 0, 0, "Nothing to record: 1 row refused."},
		{0, 3, 0, "Nothing to record: 3 rows recorded before."},
		{2, 3, 1, "Nothing to record: 2 rows refused, 3 recorded before and 1 skipped."},
		{0, 0, 0, "Nothing to record: the file has no row to record."},
	} {
		if got := NothingToRecord(tt.refused, tt.replayed, tt.skipped); got != tt.want {
			t.Errorf("NothingToRecord(%d, %d, %d) = %q; want %q", tt.refused, tt.replayed, tt.skipped, got, tt.want)
		}
	}
}
