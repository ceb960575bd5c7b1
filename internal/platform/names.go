package platform

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/leadsignal/leadsignal/internal/rule"
)

// MaxEventNames bounds a destination's own event names, and MaxOwnName
// the length of each.
const (
	MaxEventNames = 50
	MaxOwnName    = 100
)

// ParseEventNames reads a destination's own names of our events as a
// person writes them, one "Ours = Theirs" a line, into the JSON that
// Dataset.EventNames keeps ("" for none), or says what is wrong.
func ParseEventNames(text string) (string, error) {
	m := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ours, theirs, ok := strings.Cut(line, "=")
		ours, theirs = strings.TrimSpace(ours), strings.TrimSpace(theirs)
		switch {
		case !ok || ours == "" || theirs == "":
			return "", fmt.Errorf("line %d: write it as Ours = Theirs, like QualifiedLead = ApplicationApproval", i+1)
		case rule.EventNameProblem(ours) != "":
			return "", fmt.Errorf("line %d: %s", i+1, rule.EventNameProblem(ours))
		case len(theirs) > MaxOwnName || strings.IndexFunc(theirs, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			return "", fmt.Errorf("line %d: the platform's name is at most %d printable characters", i+1, MaxOwnName)
		case m[ours] != "":
			return "", fmt.Errorf("line %d: %s is named twice", i+1, ours)
		}
		m[ours] = theirs
	}
	if len(m) > MaxEventNames {
		return "", fmt.Errorf("at most %d event names", MaxEventNames)
	}
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// EventNamesText writes a destination's own event names as ParseEventNames
// reads them, in our names' order.
func EventNamesText(eventNames string) string {
	m := ownNames(eventNames)
	var b strings.Builder
	for _, ours := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(ours + " = " + m[ours] + "\n")
	}
	return b.String()
}
