package setup

import (
	"fmt"
	"strings"
)

// Warning is something a valid file asks for that a person may not mean,
// at a JSON path. Unlike a Problem it stops nothing: the file applies, and
// the product resolves it by a documented rule.
type Warning struct {
	Path    string
	Message string
}

// String is "path: message".
func (w Warning) String() string { return w.Path + ": " + w.Message }

// warnings lists the warnings of a clean, valid file: an enabled automatic
// send rule that shares its dataset and event name with an earlier one.
// Both make the same event id for a lead that matches both, so the lead
// gets one event, owned by the first rule in order (docs/setup.md).
func (f File) warnings() []Warning {
	var ws []Warning
	type key struct{ dataset, event string }
	first := map[key]int{}
	for i, r := range f.SendRules {
		if !r.Enabled || !r.Mode.OnCapture() {
			continue
		}
		// Datasets are found by name ignoring case; event names are
		// Meta's, and case-sensitive.
		k := key{strings.ToLower(r.Dataset), r.EventName}
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		ws = append(ws, Warning{Path: fmt.Sprintf("send_rules[%d]", i), Message: fmt.Sprintf(
			"shares dataset %q and event %s with send_rules[%d]; leads that match both get one event, owned by send_rules[%d]",
			r.Dataset, r.EventName, j, j)})
	}
	return ws
}
