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
// send rule that shares a destination and its event name with an earlier
// one, and an enabled stage mapping that shares its stage, a destination,
// its event name and repeatable with an earlier one in order. Both make
// the same event id on that destination for a lead that matches both, so
// the lead gets one event there, owned by the first in order
// (docs/setup.md). Every destination of a rule counts, whether the file
// names it as the dataset or among the destinations. A booking rule is
// applied as a stage mapping (bookingWarnings).
func (f File) warnings() []Warning {
	return slices.Concat(f.bookingWarnings(), f.ruleWarnings(), f.mappingWarnings())
}

// mappingWarnings are the warnings of the stage mappings.
func (f File) mappingWarnings() []Warning {
	var ws []Warning
	type key struct {
		stage, dest, event string
		repeatable         bool
	}
	first := map[key]int{}
	for _, i := range mappingOrder(f.StageMappings) {
		m := f.StageMappings[i]
		if !m.Enabled {
			continue
		}
		owners, shared := sharedWith(targets(m.Dataset, m.Destinations), i, func(dest string) key {
			return key{strings.ToLower(m.Stage), strings.ToLower(dest), m.EventName, m.Repeatable}
		}, first)
		for _, j := range owners {
			ws = append(ws, Warning{Path: fmt.Sprintf("stage_mappings[%d]", i), Message: fmt.Sprintf(
				"sends stage %s as %s to %s like stage_mappings[%d]; leads that match both get one event, owned by stage_mappings[%d], the first in order",
				m.Stage, m.EventName, sharedText(m.Destinations, shared[j]), j, j)})
		}
	}
	return ws
}

// ruleWarnings are the warnings of the send rules.
func (f File) ruleWarnings() []Warning {
	var ws []Warning
	type key struct{ dest, event string }
	first := map[key]int{}
	for i, r := range f.SendRules {
		if !r.Enabled || !r.Mode.OnCapture() {
			continue
		}
		// Destinations are found by name ignoring case; event names are
		// Meta's, and case-sensitive.
		owners, shared := sharedWith(targets(r.Dataset, r.Destinations), i, func(dest string) key {
			return key{strings.ToLower(dest), r.EventName}
		}, first)
		for _, j := range owners {
			ws = append(ws, Warning{Path: fmt.Sprintf("send_rules[%d]", i), Message: fmt.Sprintf(
				"shares %s and event %s with send_rules[%d]; leads that match both get one event, owned by send_rules[%d]",
				sharedText(r.Destinations, shared[j]), r.EventName, j, j)})
		}
	}
	return ws
}

// sharedWith finds which earlier rules or mappings own the events that
// the one at i would make on each of its destinations dests (keyOf: the
// event's key on a destination; first: the owner of each key so far,
// which i joins for the keys nobody owns yet). It returns the owners in
// the order of dests, and the destinations each shares with i.
func sharedWith[K comparable](dests []string, i int, keyOf func(dest string) K, first map[K]int) ([]int, map[int][]string) {
	var owners []int
	shared := map[int][]string{}
	for _, d := range dests {
		k := keyOf(d)
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		if _, seen := shared[j]; !seen {
			owners = append(owners, j)
		}
		shared[j] = append(shared[j], d)
	}
	return owners, shared
}
