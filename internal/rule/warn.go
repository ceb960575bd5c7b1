package rule

import (
	"fmt"
	"strings"
)

// JunkInOr warns of each condition on junk (junk, or a junk signal) that
// sits in an "or" list with other items, the rule's or a group's: such a
// list rarely says what its writer meant. "Junk is false" holds for every
// lead a rule sees that is not junk, so an "or" list holding it lets them
// all in, whatever its other conditions ("one OR list with Junk is no
// matched 219 of 267"); a condition requiring junk in an "or" list beside
// others does not make the rule require junk, so junk leads never reach
// it. The way out is a group: "(campaign A OR a valid phone) AND not
// junk". Saving is not refused: the rule is valid, only likely wrong.
func JunkInOr(s Spec) []string {
	var out []string
	check := func(where string, cb Combinator, cs []Condition, items int, all bool) {
		if cb != Or || items < 2 {
			return
		}
		for _, c := range cs {
			if c.notJunk() {
				out = append(out, fmt.Sprintf("“%s” sits in %s, and every lead that is not junk meets it: the list lets them all in, "+
					"whatever its other conditions. To require it beside them, join the rule's conditions with AND and put the "+
					"alternatives in a group of their own, joined with OR.", c.String(), where))
				continue
			}
			if !c.requiresJunk() || all {
				continue
			}
			out = append(out, fmt.Sprintf("“%s” sits in %s beside conditions that do not ask for junk: a junk lead reaches a rule "+
				"only when its conditions require junk, so this condition lets no junk lead in. Join it with AND, and put the "+
				"alternatives in a group of their own.", c.String(), where))
		}
	}
	groups := make([]bool, len(s.Groups))
	for g, gr := range s.Groups {
		groups[g] = listRequiresJunk(gr.Combinator == Or, gr.Conditions, nil)
	}
	check("the rule's OR list", s.Combinator, s.Conditions, len(s.Conditions)+len(s.Groups), listRequiresJunk(true, s.Conditions, groups))
	for g, gr := range s.Groups {
		check(fmt.Sprintf("group %d's OR list", g+1), gr.Combinator, gr.Conditions, len(gr.Conditions), groups[g])
	}
	return out
}

// listRequiresJunk reports whether a list of conditions cs and groups
// (whether each requires junk) requires junk, as RequiresJunk decides it:
// a junk condition in such a list is what its writer meant.
func listRequiresJunk(or bool, cs []Condition, groups []bool) bool {
	items := make([]bool, 0, len(cs)+len(groups))
	for _, c := range cs {
		items = append(items, c.requiresJunk())
	}
	return requiresJunk(or, append(items, groups...))
}

// isJunkField reports whether a condition on the field reads the junk
// verdict or a junk signal.
func isJunkField(name string) bool {
	return name == "junk" || strings.HasPrefix(name, JunkReasonPrefix)
}

// notJunk reports whether c holds for a lead that is not junk: "junk is
// false", "junk is not true".
func (c Condition) notJunk() bool {
	if c.Field != "junk" {
		return false
	}
	p := fold(strings.TrimSpace(c.Pattern))
	return c.MatchType == Equals && p == "false" || c.MatchType == NotEquals && p == "true"
}
