package web

import (
	"regexp"
	"strconv"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/views"
)

// A rule's conditions may be groups, one level deep (rule.Group): the
// rule's combinator joins its own conditions and its groups. The forms
// post each group as a group_key and a group_combinator, and each
// condition row with the key of its group in cond_group ("" for the
// rule's own); they show each group again keyed by its place.

// groupInput is one condition group of the rule form.
type groupInput struct {
	Combinator string
	Conditions []rule.Condition
}

// spec is the conditions part of the form as a rule.Spec.
func (in ruleInput) spec() rule.Spec {
	s := rule.Spec{Mode: rule.Mode(in.Mode), EventName: in.EventName, Combinator: rule.Combinator(in.Combinator), Conditions: in.Conditions}
	for _, g := range in.Groups {
		s.Groups = append(s.Groups, rule.Group{Combinator: rule.Combinator(g.Combinator), Conditions: g.Conditions})
	}
	return s
}

// conditionPath matches the path of one input of a condition row: the
// group's index (empty for the rule's own conditions), the row's, and the
// input.
var conditionPath = regexp.MustCompile(`^(?:groups\[(\d+)\]\.)?conditions\[(\d+)\]\.(field|match_type|pattern)$`)

// groupPath matches the path of a group's problem: its index, and
// "combinator" or "conditions".
var groupPath = regexp.MustCompile(`^groups\[(\d+)\]\.(combinator|conditions)$`)

// rowAt is the condition row a problem's path points at (conditions[i].x,
// groups[g].conditions[i].x): of own, the rule's own rows, or of group g's
// rows as group gives them (false past the groups); nil for another path
// or a row past the end.
func rowAt[T any](path string, own []T, group func(g int) ([]T, bool)) *T {
	m := conditionPath.FindStringSubmatch(path)
	if m == nil {
		return nil
	}
	rows := own
	if m[1] != "" {
		g, _ := strconv.Atoi(m[1])
		var ok bool
		if rows, ok = group(g); !ok {
			return nil
		}
	}
	if i, _ := strconv.Atoi(m[2]); i < len(rows) {
		return &rows[i]
	}
	return nil
}

// formRow is the condition row of the form at a problem's path; nil for
// none.
func formRow(f *views.RuleForm, path string) *views.RuleCondition {
	return rowAt(path, f.Conditions, func(g int) ([]views.RuleCondition, bool) {
		if g >= len(f.Groups) {
			return nil, false
		}
		return f.Groups[g].Conditions, true
	})
}

// eachRow calls fn with each condition row of f, the groups' too.
func eachRow(f *views.RuleForm, fn func(c *views.RuleCondition)) {
	for i := range f.Conditions {
		fn(&f.Conditions[i])
	}
	for g := range f.Groups {
		for i := range f.Groups[g].Conditions {
			fn(&f.Groups[g].Conditions[i])
		}
	}
}
