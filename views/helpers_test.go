package views

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 57: "57", 999: "999", 1000: "1,000", 9876: "9,876", CountCap: "10,000", CountCap + 1: "10,000+"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0 events", 1: "1 event", 1000: "1,000 events"} {
		if got := plural(n, "event", "events"); got != want {
			t.Errorf("plural(%d) = %q; want %q", n, got, want)
		}
	}
}

// A search counts to SearchCountCap; the leads page says so.
func TestSearchCount(t *testing.T) {
	for n, want := range map[int64]string{1: "1 lead matches", 999: "999 leads match", SearchCountCap: "1,000 leads match", SearchCountCap + 1: "1,000+ leads match"} {
		if got := pluralUpTo(n, SearchCountCap, "lead matches", "leads match"); got != want {
			t.Errorf("pluralUpTo(%d, SearchCountCap) = %q; want %q", n, got, want)
		}
	}
	var b strings.Builder
	v := LeadsView{Filter: LeadFilter{Query: "smith"}, Total: SearchCountCap + 1, Filtered: true, Rows: []LeadRow{{}}}
	if err := LeadsPage(Page{}, v).Render(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1,000+ leads match") {
		t.Errorf("the leads page does not say 1,000+ leads match")
	}
}

// TestSentAs: a lead's events are named once each, with how many
// destinations each went to, and the hover holds the cell's text.
func TestSentAs(t *testing.T) {
	r := LeadRow{SentAs: []SentAs{{"Lead", models.EventSent}, {"Lead", models.EventQueued}, {"Lead", models.EventDryRun}, {"QualifiedLead", models.EventSent}}}
	if got := r.sentAsNames(); got != "Lead ×3, QualifiedLead" {
		t.Errorf("sentAsNames() = %q; want %q", got, "Lead ×3, QualifiedLead")
	}
	if got := r.sentAsStatuses(); !strings.HasPrefix(got, "Lead ×3, QualifiedLead: Lead Sent; Lead Waiting;") {
		t.Errorf("sentAsStatuses() = %q", got)
	}
}
