package name

import (
	"strings"
	"unicode"

	"github.com/leadsignal/leadsignal/models"
)

// meaning is what a stage label says about a deal, read from its words.
type meaning int

const (
	unknown meaning = iota
	// lost: lost, closed lost, unqualified, disqualified, rejected. Such a
	// label never suggests a stage: "Closed Lost" must not become won.
	lost
	won
	booking
	qualified
)

// SuggestStage is the position in stages (the account's, in order) of the
// stage label probably means, read from its words, and true; false when
// the words say nothing it knows. A won label ("Won", "Closed Won", "Deal
// won", "Closed - Won", HubSpot's "closedwon") suggests the stage named
// won, or whose aliases say won; an appointment, meeting, demo or call
// booked or scheduled suggests the booking stage (models.Stage.Booking),
// else one whose name says so; a qualified label ("SQL", "Qualified To
// Buy", "Sales Qualified") the stage that says qualified. A lost or
// unqualified label suggests nothing. It only suggests: a person confirms
// before a label becomes an alias.
func SuggestStage(label string, stages []models.Stage) (int, bool) {
	want := meaningOf(label)
	if want == unknown || want == lost {
		return -1, false
	}
	if want == booking {
		for i, s := range stages {
			if s.Booking {
				return i, true
			}
		}
	}
	// A stage's own name says more than its aliases: "won" before a
	// stage that lists "won" among its aliases by mistake.
	for i, s := range stages {
		if meaningOf(s.Name) == want {
			return i, true
		}
	}
	for i, s := range stages {
		for _, a := range s.Aliases {
			if meaningOf(a) == want {
				return i, true
			}
		}
	}
	return -1, false
}

// meaningOf reads a label's words, and its letters run together for the
// ids CRMs export ("closedwon", "appointmentscheduled", "qualifiedtobuy").
func meaningOf(label string) meaning {
	words := strings.FieldsFunc(strings.ToLower(label), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	has := func(ws ...string) bool {
		for _, w := range words {
			for _, x := range ws {
				if w == x {
					return true
				}
			}
		}
		return false
	}
	key := StageKey(label)
	contains := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(key, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("lost", "unqualified", "disqualified", "rejected", "dead", "junk", "lose") ||
		contains("closedlost", "deallost", "unqualified", "disqualified", "notqualified", "nonqualified"):
		return lost
	case has("won", "win") || contains("closedwon", "dealwon"):
		return won
	case has("appointment", "appointments", "meeting", "meetings", "demo", "booked", "booking", "scheduled") ||
		contains("appointment", "meetingbooked", "meetingscheduled", "demobooked", "demoscheduled", "callbooked", "callscheduled",
			"presentationscheduled"):
		return booking
	case has("qualified", "sql", "sal", "mql") || contains("qualified"):
		return qualified
	}
	return unknown
}
