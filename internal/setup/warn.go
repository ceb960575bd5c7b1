package setup

import (
	"fmt"
	"slices"
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
// send rule that shares its dataset and event name with an earlier one,
// and an enabled stage mapping that shares its stage, dataset, event name
// and repeatable with an earlier one in order. Both make the same event id
// for a lead that matches both, so the lead gets one event, owned by the
// first in order (docs/setup.md). A booking rule is applied as a stage
// mapping (bookingWarnings).
func (f File) warnings() []Warning {
	return slices.Concat(f.bookingWarnings(), f.ruleWarnings(), f.mappingWarnings())
}

// mappingWarnings are the warnings of the stage mappings.
func (f File) mappingWarnings() []Warning {
	var ws []Warning
	type key struct {
		stage, dataset, event string
		repeatable            bool
	}
	first := map[key]int{}
	for _, i := range mappingOrder(f.StageMappings) {
		m := f.StageMappings[i]
		if !m.Enabled {
			continue
		}
		k := key{strings.ToLower(m.Stage), strings.ToLower(m.Dataset), m.EventName, m.Repeatable}
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		ws = append(ws, Warning{Path: fmt.Sprintf("stage_mappings[%d]", i), Message: fmt.Sprintf(
			"sends stage %s as %s to dataset %q like stage_mappings[%d]; leads that match both get one event, owned by stage_mappings[%d], the first in order",
			m.Stage, m.EventName, m.Dataset, j, j)})
	}
	return ws
}

// ruleWarnings are the warnings of the send rules.
func (f File) ruleWarnings() []Warning {
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
