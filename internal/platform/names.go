package platform

import (
	"encoding/json"
	"errors"
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
		case m[ours] != "":
			return "", fmt.Errorf("line %d: %s is named twice", i+1, ours)
		}
		if err := checkName(ours, theirs); err != nil {
			return "", fmt.Errorf("line %d: %w", i+1, err)
		}
		m[ours] = theirs
	}
	return EventNamesJSON(m)
}

// EventNamesJSON checks a destination's own event names (ours to the
// platform's) and writes them as Dataset.EventNames keeps them: "" for
// none.
func EventNamesJSON(m map[string]string) (string, error) {
	if len(m) > MaxEventNames {
		return "", fmt.Errorf("at most %d event names", MaxEventNames)
	}
	for _, ours := range slices.Sorted(maps.Keys(m)) {
		if err := checkName(ours, m[ours]); err != nil {
			return "", fmt.Errorf("%s: %w", ours, err)
		}
	}
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// checkName says what is wrong with naming our event ours theirs.
func checkName(ours, theirs string) error {
	switch {
	case rule.EventNameProblem(ours) != "":
		return errors.New(rule.EventNameProblem(ours))
	case strings.TrimSpace(theirs) == "" || len(theirs) > MaxOwnName || strings.IndexFunc(theirs, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("the platform's name is 1 to %d printable characters", MaxOwnName)
	}
	return nil
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
