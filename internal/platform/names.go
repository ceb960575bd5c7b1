package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// MaxEventNames bounds a destination's own event names, and MaxOwnName
// the length of each.
const (
	MaxEventNames = 50
	MaxOwnName    = 100
)

// ParseEventNames reads the own names of our events of a destination of
// kind k as a person writes them, one "Ours = Theirs" a line, into the
// JSON that Dataset.EventNames keeps ("" for none), or says what is wrong.
func ParseEventNames(k models.Kind, text string) (string, error) {
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
		if err := checkName(k, ours, theirs); err != nil {
			return "", fmt.Errorf("line %d: %w", i+1, err)
		}
		m[ours] = theirs
	}
	return EventNamesJSON(k, m)
}

// EventNamesJSON checks the own event names (ours to the platform's, each
// trimmed) of a destination of kind k and writes them as
// Dataset.EventNames keeps them: "" for none. Google's are conversion
// action ids, at most as many as one request can route to.
func EventNamesJSON(k models.Kind, m map[string]string) (string, error) {
	limit := MaxEventNames
	if k == models.KindGoogle {
		limit = google.MaxDestinations
	}
	if len(m) > limit {
		return "", fmt.Errorf("at most %d event names", limit)
	}
	clean := make(map[string]string, len(m))
	for _, ours := range slices.Sorted(maps.Keys(m)) {
		theirs := strings.TrimSpace(m[ours])
		if err := checkName(k, ours, theirs); err != nil {
			return "", fmt.Errorf("%s: %w", ours, err)
		}
		clean[strings.TrimSpace(ours)] = theirs
	}
	if len(clean) == 0 {
		return "", nil
	}
	b, err := json.Marshal(clean)
	return string(b), err
}

// checkName says what is wrong with naming our event ours theirs on a
// destination of kind k.
func checkName(k models.Kind, ours, theirs string) error {
	switch {
	case rule.EventNameProblem(ours) != "":
		return errors.New(rule.EventNameProblem(ours))
	case k == models.KindGoogle && !conversionActionRE.MatchString(theirs):
		return fmt.Errorf("%.40q is not a conversion action id: its digits, as the action's page in Google Ads shows them (ctId=)", theirs)
	case theirs == "" || len(theirs) > MaxOwnName || strings.IndexFunc(theirs, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("the platform's name is 1 to %d printable characters", MaxOwnName)
	}
	return nil
}

// conversionActionRE is a Google Ads conversion action id.
var conversionActionRE = regexp.MustCompile(`^[0-9]{1,20}$`)

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
