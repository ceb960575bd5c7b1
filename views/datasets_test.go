package views

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// A dataset's total is its counts added up, "+" when a count stopped at
// its cap: the total never claims to be exact when a part is not.
func TestEventCountsTotal(t *testing.T) {
	tests := []struct {
		name   string
		counts EventCounts
		want   string
	}{
		{"none", EventCounts{}, "0"},
		{"dry run and failed", EventCounts{models.EventDryRun: 73, models.EventFailed: 2}, "75"},
		{"one capped", EventCounts{models.EventSent: CountCap + 1, models.EventQueued: 5}, "10,006+"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.counts.total(); got != tt.want {
				t.Errorf("total(%v) = %q; want %q", tt.counts, got, tt.want)
			}
		})
	}
}

// The list has a column for every status a dataset has events of, and
// for dry run when a dataset is in dry run; waiting, sent and failed
// always.
func TestDatasetStatuses(t *testing.T) {
	live := DatasetItem{Dataset: models.Dataset{Mode: models.ModeLive}, Counts: EventCounts{models.EventExpired: 1}}
	dry := DatasetItem{Dataset: models.Dataset{Mode: models.ModeDryRun}}
	for _, tt := range []struct {
		name  string
		items []DatasetItem
		want  string
	}{
		{"live, one held back", []DatasetItem{live}, "queued,sent,failed,expired"},
		{"dry run", []DatasetItem{dry}, "queued,sent,failed,dry_run"},
		{"both", []DatasetItem{live, dry}, "queued,sent,failed,expired,dry_run"},
	} {
		var got string
		for i, s := range datasetStatuses(tt.items) {
			if i > 0 {
				got += ","
			}
			got += string(s)
		}
		if got != tt.want {
			t.Errorf("%s: columns %s; want %s", tt.name, got, tt.want)
		}
	}
}
