package rule

import (
	"strings"
	"testing"
)

func TestEventNameProblem(t *testing.T) {
	tests := []struct {
		name    string
		want    string // a part of the problem; "" for none
		problem bool
	}{
		{"Lead", "", false},
		{"Schedule", "", false},
		{"PageView", "", false},
		{"QualifiedLead", "", false},
		{"qualified_lead-2 B", "", false},
		{strings.Repeat("a", MaxEventNameLen), "", false},
		{"", "choose an event", true},
		{"   ", "choose an event", true},
		{strings.Repeat("a", MaxEventNameLen+1), "at most 40 characters", true},
		{" Lead", "spaces at the start or end", true},
		{"Qualified ", "spaces at the start or end", true},
		{"Qualified.Lead", `'.' is not allowed`, true},
		{"Lead/Won", `'/' is not allowed`, true},
		{"Qualifié", `'é' is not allowed`, true},
		{"lead", "write Lead for Meta's standard event", true},
		{"PURCHASE", "write Purchase", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EventNameProblem(tt.name)
			if (got != "") != tt.problem || !strings.Contains(got, tt.want) {
				t.Errorf("EventNameProblem(%q) = %q; want a problem %v containing %q", tt.name, got, tt.problem, tt.want)
			}
		})
	}
}

func TestStandardEventsAreValidNames(t *testing.T) {
	for _, name := range StandardEvents {
		if !IsStandardEvent(name) {
			t.Errorf("IsStandardEvent(%q) = false", name)
		}
		for _, r := range name {
			if !eventNameRune(r) {
				t.Errorf("standard event %q has %q, which custom names may not", name, r)
			}
		}
	}
	if IsStandardEvent("lead") {
		t.Error(`IsStandardEvent("lead") = true; want false: names are case-sensitive`)
	}
}
