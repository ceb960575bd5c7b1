package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// The Overview's sequence health shows each week's count, the last full
// week against the threshold, and for a learning-limited sequence the
// plain warning with what to change; a dry-run dataset's counts say what
// they are.
func TestSequenceHealthView(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	starts := store.WeekStarts(berlin, time.Date(2026, 3, 11, 12, 0, 0, 0, berlin), sequenceHealthWeeks)
	ds := []models.Dataset{{ID: 7, Name: "Main", Mode: models.ModeDryRun}, {ID: 8, Name: "EU", Mode: models.ModeLive}}
	count := func(id, dataset int64, final string, last int64) store.SequenceCount {
		c := store.SequenceCount{Sequence: models.Sequence{ID: id, DatasetID: dataset, InitialEvent: "Lead", FinalEvent: final}}
		for i, st := range starts {
			c.Weeks = append(c.Weeks, store.SequenceWeek{Start: st, Complete: int64(i)})
		}
		c.Weeks[len(c.Weeks)-2].Complete = last
		c.Weeks[len(c.Weeks)-2].AtLeast = last >= store.MaxWeekCount
		return c
	}
	v := sequenceHealthView([]store.SequenceCount{count(1, 7, "Purchase", 23), count(2, 8, "QualifiedLead", store.MaxWeekCount)}, ds)
	if !v.DryRun || len(v.Sequences) != 2 || !v.Sequences[0].Limited || v.Sequences[1].Limited {
		t.Fatalf("sequenceHealthView = %+v; want the first limited, the second not, dry run said", v)
	}
	if w := v.Sequences[0].Weeks; len(w) != sequenceHealthWeeks || w[10].Label != "Mar 2" || !w[11].Current || w[10].Current {
		t.Errorf("weeks = %+v; want 12, the week of Mar 2 the last full one", w)
	}
	var buf bytes.Buffer
	if err := views.SequenceHealth(v).Render(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	items := doc.Find(`[data-testid="sequence-health-item"]`)
	if n := items.Length(); n != 2 {
		t.Fatalf("%d sequences shown; want 2", n)
	}
	warning := strings.Join(strings.Fields(items.First().Find(`[data-testid="sequence-health-warning"]`).Text()), " ")
	if !strings.HasPrefix(warning, "Learning limited: 23 complete sequences last week; Meta needs about 50 a week to leave learning.") ||
		!strings.Contains(warning, "earlier final event") || !strings.Contains(warning, "widen the audience") {
		t.Errorf("warning = %q", warning)
	}
	if got := items.Eq(1).Find(`[data-testid="sequence-health-warning"]`).Length(); got != 0 {
		t.Error("a sequence at 100+ a week is warned about")
	}
	if got := strings.Join(strings.Fields(items.Eq(1).Find(`[data-testid="sequence-health-last-week"]`).Text()), " "); !strings.Contains(got, "100+ complete") {
		t.Errorf("last week = %q; want 100+ complete", got)
	}
	if rows := items.First().Find(`[data-testid="sequence-weeks"] tbody tr`).Length(); rows != sequenceHealthWeeks {
		t.Errorf("%d week rows; want %d", rows, sequenceHealthWeeks)
	}
	if !strings.Contains(doc.Text(), "Dry-run datasets count the events they would have sent") {
		t.Error("the dry-run note is missing")
	}
	empty := bytes.Buffer{}
	if err := views.SequenceHealth(views.SequenceHealthView{}).Render(t.Context(), &empty); err != nil || strings.TrimSpace(empty.String()) != "" {
		t.Errorf("without sequences SequenceHealth renders %q, %v; want nothing", empty.String(), err)
	}
}
