package name

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

func TestSuggestStage(t *testing.T) {
	stages := []models.Stage{
		{Name: "new"},
		{Name: "qualified"},
		{Name: "Call booked", Booking: true},
		{Name: "won"},
		{Name: "lost"},
	}
	tests := []struct {
		label string
		want  string // "" for no suggestion
	}{
		{"Won", "won"},
		{"Closed Won", "won"},
		{"closedwon", "won"},
		{"Deal won", "won"},
		{"Closed - Won", "won"},
		{"CLOSED_WON", "won"},
		{"Appointment Scheduled", "Call booked"},
		{"appointmentscheduled", "Call booked"},
		{"Meeting", "Call booked"},
		{"Demo booked", "Call booked"},
		{"Call scheduled", "Call booked"},
		{"Qualified To Buy", "qualified"},
		{"qualifiedtobuy", "qualified"},
		{"SQL", "qualified"},
		{"Sales Qualified", "qualified"},
		{"Closed Lost", ""},
		{"closedlost", ""},
		{"Lost", ""},
		{"Unqualified", ""},
		{"Disqualified", ""},
		{"Not qualified", ""},
		{"Contract sent", ""},
		{"", ""},
		{"!!!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			i, ok := SuggestStage(tt.label, stages)
			got := ""
			if ok {
				got = stages[i].Name
			}
			if got != tt.want {
				t.Errorf("SuggestStage(%q) = %q, %v; want %q", tt.label, got, ok, tt.want)
			}
		})
	}
}

// The booking stage is the one marked Booking, whatever its name; the won
// stage may be known by its aliases only; an account without the stage a
// label means gets no suggestion.
func TestSuggestStageByFlagAndAliases(t *testing.T) {
	stages := []models.Stage{
		{Name: "Intro"},
		{Name: "Sales accepted", Aliases: models.Labels{"SQL"}},
		{Name: "Visit", Booking: true},
		{Name: "Paid", Aliases: models.Labels{"Closed Won"}},
	}
	tests := []struct {
		label string
		want  string
	}{
		{"Appointment Scheduled", "Visit"},
		{"Deal Won", "Paid"},
		{"Qualified to buy", "Sales accepted"},
		{"Closed lost", ""},
	}
	for _, tt := range tests {
		i, ok := SuggestStage(tt.label, stages)
		got := ""
		if ok {
			got = stages[i].Name
		}
		if got != tt.want {
			t.Errorf("SuggestStage(%q) = %q, %v; want %q", tt.label, got, ok, tt.want)
		}
	}
	if i, ok := SuggestStage("Won", []models.Stage{{Name: "new"}, {Name: "booked"}}); ok {
		t.Errorf("SuggestStage(Won) without a won stage = %d; want none", i)
	}
	if i, ok := SuggestStage("Won", nil); ok {
		t.Errorf("SuggestStage(Won) of no stages = %d; want none", i)
	}
}
