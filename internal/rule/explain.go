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
