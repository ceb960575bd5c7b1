package rule

import (
	"fmt"
	"strings"
)

// ExplainEach is Explain for a result of MatchEach, naming every condition
// that decided where Explain names the first: for an "or" rule that
// matched, each condition that held (`conditions 1 (City is "Berlin") and
// 3 (Form field budget is greater than 5000) matched`); for an "and" rule
// that did not, each that failed. held is MatchEach's. With one such
// condition, or any other result, it says what Explain says.
func (m *Matcher) ExplainEach(r Result, held []bool) string {
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
	return "conditions " + strings.Join(named[:len(named)-1], ", ") + " and " + named[len(named)-1] + " " + verdict
}
