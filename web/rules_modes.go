package web

import (
	"github.com/leadsignal/leadsignal/internal/rule"
)

// modeWords says what a send mode does, in words: the one table the rule
// form, the rules list, a rule's history and the lead page read.
type modeWords struct {
	// label names the mode: the form's choice, the list's and the
	// history's setting, the lead page's line under a rule.
	label string
	// help explains it on the form, after its label.
	help string
	// leads starts the list's "which leads"; conditions follow "where".
	leads string
}

// modes are the send modes in words; the form lists them in the order of
// rule.Modes.
var modes = map[rule.Mode]modeWords{
	rule.AutomaticCompleted: {label: rule.AutomaticCompleted.Label(),
		help:  "sends each completed lead that is not junk as it is captured; takes no conditions.",
		leads: "Every completed lead that is not junk"},
	rule.AutomaticPartial: {label: rule.AutomaticPartial.Label(),
		help: "sends leads who left the form unfinished, under a custom event name such as PartialLead: under Lead, Meta would " +
			"count unfinished forms as conversions and look for more people who abandon forms.",
		leads: "Every partial lead"},
	rule.AutomaticMatch: {label: rule.AutomaticMatch.Label(),
		help:  "sends each completed lead that meets the conditions below, as it is captured.",
		leads: "Completed leads"},
	rule.Manual: {label: rule.Manual.Label(),
		help:  "adds a Send button to the lead page; sends nothing on its own.",
		leads: "When a person clicks Send on the lead page"},
}

// modeOf is mode in words; an unknown mode is named as it is stored.
func modeOf(mode string) modeWords {
	if w, ok := modes[rule.Mode(mode)]; ok {
		return w
	}
	return modeWords{label: rule.Mode(mode).Label(), leads: mode}
}
