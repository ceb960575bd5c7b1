package rule

import (
	"fmt"
	"strings"
)

// ExplainEach is Explain for a result of MatchEach, naming every item that
// decided where Explain names the first: for an "or" rule that matched,
// each condition or group that held (`conditions 1 (City is "Berlin") and
// 3 (Form field budget is greater than 5000) matched`); for an "and" rule
// that did not, each that failed. For an "and" rule with groups that
// matched, it names the conditions by which each "or" group held. held is
// MatchEach's. With one such item, or any other result, it says what
// Explain says.
func (m *Matcher) ExplainEach(r Result, held []bool) string {
	if len(held) != len(m.conds) {
		return m.Explain(r)
	}
	if len(m.groups) > 0 {
		return m.explainGroups(r, held)
	}
	want, verdict := false, ""
	switch {
	case r.Matched && m.or:
		want, verdict = true, "matched"
	case !r.Matched && r.Reason == ReasonCondition:
		want, verdict = false, "did not match"
	default:
		return m.Explain(r)
	}
	var named []string
	for i, ok := range held {
		if ok == want && i < len(m.spec.Conditions) {
			named = append(named, fmt.Sprintf("%d (%s)", i+1, m.spec.Conditions[i]))
		}
	}
	if len(named) < 2 {
		return m.Explain(r)
	}
	return "conditions " + and(named) + " " + verdict
}

// explainGroups is ExplainEach for a rule with groups.
func (m *Matcher) explainGroups(r Result, held []bool) string {
	items := make([]bool, m.items())
	for k := range items {
		items[k] = m.holds(k, held)
	}
	switch {
	case r.Matched && m.or:
		if named := m.itemNames(items, true); len(named) > 1 {
			return and(named) + " held"
		}
	case r.Matched && len(m.conds) > 0:
		var by []string
		for g, gr := range m.groups {
			if !gr.or || gr.to-gr.from < 2 {
				continue
			}
			var conds []string
			for i := gr.from; i < gr.to; i++ {
				if held[i] {
					conds = append(conds, m.condName(i))
				}
			}
			by = append(by, fmt.Sprintf("group %d by its %s", g+1, and(conds)))
		}
		if len(by) > 0 {
			return "every condition and group held: " + strings.Join(by, "; ")
		}
	case !r.Matched && r.Reason == ReasonCondition:
		if named := m.itemNames(items, false); len(named) > 1 {
			return and(named) + " did not hold"
		}
	}
	return m.Explain(r)
}

// holds says whether item k (a plain condition, then the groups) holds,
// from held.
func (m *Matcher) holds(k int, held []bool) bool {
	if k < m.plain {
		return held[k]
	}
	g := m.groups[k-m.plain]
	for i := g.from; i < g.to; i++ {
		if held[i] == g.or {
			return g.or
		}
	}
	return !g.or
}

// itemNames names the items whose verdict is want: "condition 1 (...)",
// "group 2".
func (m *Matcher) itemNames(items []bool, want bool) []string {
	var named []string
	for k, ok := range items {
		switch {
		case ok != want:
		case k < m.plain:
			named = append(named, m.condName(k))
		default:
			named = append(named, fmt.Sprintf("group %d", k-m.plain+1))
		}
	}
	return named
}

// and joins words as a sentence lists them: "a", "a and b", "a, b and c".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Explain says in plain words why r, a result of m, came out as it did,
// for the lead page: `condition 2 (Email domain is "gmail.com") did not
// match`, `group 1 held: its condition 2 (Phone is valid is true)
// matched`. Conditions and groups are counted from 1; a group's
// conditions within their group.
func (m *Matcher) Explain(r Result) string {
	if r.Group >= 0 && r.Group < len(m.groups) {
		return m.explainGroup(r)
	}
	cond := func(verdict string) string {
		if r.Condition < 0 || r.Condition >= m.plain {
			return "a condition " + verdict
		}
		return m.condName(r.Condition) + " " + verdict
	}
	switch {
	case r.Matched && r.Condition >= 0:
		return cond("matched")
	case r.Matched && len(m.conds) == 0:
		return "the rule has no conditions"
	case r.Matched && len(m.conds) == 1:
		return "the condition matched"
	case r.Matched:
		return "all conditions matched"
	}
	switch r.Reason {
	case ReasonJunk:
		return "the lead is junk, and the rule does not require junk"
	case ReasonPartial:
		return "the lead is partial, and this rule sends completed leads"
	case ReasonCompleted:
		return "the lead is completed, and this rule sends partial leads"
	case ReasonCondition:
		return cond("did not match")
	case ReasonNoCondition:
		if len(m.groups) > 0 {
			return "no condition or group held"
		}
		return "none of the conditions matched"
	}
	return "the lead did not match"
}

// explainGroup is Explain for a result a group decided.
func (m *Matcher) explainGroup(r Result) string {
	g := r.Group
	name := fmt.Sprintf("group %d", g+1)
	switch {
	case r.Matched && r.Condition >= 0:
		return name + " held: its " + m.condName(r.Condition) + " matched"
	case r.Matched:
		return name + " (" + m.groupText(g) + ") held"
	case r.Condition >= 0:
		return name + " did not hold: its " + m.condName(r.Condition) + " did not match"
	}
	return name + " did not hold: none of its conditions (" + m.groupText(g) + ") matched"
}

// condName names the condition at index i (Spec.All's order) with its
// words: "condition 2 (City is "Berlin")", counted in its group for a
// group's.
func (m *Matcher) condName(i int) string {
	all := m.spec.All()
	if i < 0 || i >= len(all) {
		return "a condition"
	}
	n := i + 1
	for _, g := range m.groups {
		if i >= g.from && i < g.to {
			n = i - g.from + 1
		}
	}
	return fmt.Sprintf("condition %d (%s)", n, all[i])
}

// groupText says group g's conditions in words, joined by its combinator.
func (m *Matcher) groupText(g int) string {
	gr := m.spec.Groups[g]
	return ConditionsText(gr.Combinator, gr.Conditions)
}
