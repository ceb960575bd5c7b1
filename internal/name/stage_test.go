package name

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

func TestStageKey(t *testing.T) {
	for in, want := range map[string]string{
		"Closed Won": "closedwon", "closedwon": "closedwon", "Closed-won!": "closedwon", " WON ": "won",
		"Qualified To Buy": "qualifiedtobuy", "Étape 2": "étape2", "---": "",
	} {
		if got := StageKey(in); got != want {
			t.Errorf("StageKey(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestStagesFindsNamesAliasesAndCRMLabels(t *testing.T) {
	ss := []models.Stage{
		{Name: "qualified", Aliases: []string{"Qualified To Buy", "SQL"}},
		{Name: "booked", Aliases: []string{"Appointment Scheduled"}},
		{Name: "won", Aliases: []string{"closedwon", "sql"}}, // sql is qualified's: the first stage keeps it
	}
	labels := []models.CRMStage{{Label: "Deal Won", Stage: "WON"}, {Label: "booked", Stage: "won"}, {Label: "Lost", Stage: "gone"}}
	ix := NewStages(ss, labels)
	for label, want := range map[string]string{
		"qualified": "qualified", "qualified to buy": "qualified", "S.Q.L.": "qualified",
		"Appointment-Scheduled": "booked", "BOOKED": "booked", "Closed Won": "won", "deal won": "won",
	} {
		if got, ok := ix.Resolve(label); !ok || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", label, got, ok, want)
		}
	}
	for _, label := range []string{"Lost", "", "!!", "Closed Lost"} {
		if got, ok := ix.Resolve(label); ok || got != label || ix.Index(label) != -1 {
			t.Errorf("Resolve(%q) = %q, %v; want it unmapped", label, got, ok)
		}
	}
	if (Stages{}).Index("won") != -1 {
		t.Error("the zero Stages knows no stage")
	}
}
