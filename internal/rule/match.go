package rule

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Matcher is a compiled Spec: it decides which leads the rule sends. It is
// safe for concurrent use.
type Matcher struct {
	spec Spec
	mode Mode
	or   bool
	// conds are every condition, in Spec.All's order: the first plain
	// are the rule's own, then each group's, at its span.
	conds        []cond
	plain        int
	groups       []group
	requiresJunk bool
}

// group is a compiled Group: its conditions are conds[from:to].
type group struct {
	or       bool
	from, to int
}

// items is how many items the rule's combinator joins: each plain
// condition and each group.
func (m *Matcher) items() int { return m.plain + len(m.groups) }

// Spec returns the Spec m was compiled from.
func (m *Matcher) Spec() Spec { return m.spec }

// Mode is the rule's send mode, AutomaticCompleted when the Spec left it
// empty.
func (m *Matcher) Mode() Mode { return m.mode }

// RequiresJunk reports whether the rule's conditions require a junk lead:
// for an "and" rule one item, for an "or" rule every one, that junk or a
// junk signal is true, where a group is such an item when its own
// conditions require junk by the same measure. Junk leads match only rules that do: a rule
// has to ask for junk to get it ("junk equals false" does not).
func (m *Matcher) RequiresJunk() bool { return m.requiresJunk }

// itemsRequireJunk decides RequiresJunk for the compiled conditions.
func (m *Matcher) itemsRequireJunk() bool {
	item := make([]bool, 0, m.items())
	for i := range m.plain {
		item = append(item, m.conds[i].needsJunk)
	}
	for _, g := range m.groups {
		inner := make([]bool, 0, g.to-g.from)
		for i := g.from; i < g.to; i++ {
			inner = append(inner, m.conds[i].needsJunk)
		}
		item = append(item, requiresJunk(g.or, inner))
	}
	return requiresJunk(m.or, item)
}

// requiresJunk joins whether each item requires junk: one of an "and"
// list, every one of an "or" list.
func requiresJunk(or bool, items []bool) bool {
	if len(items) == 0 {
		return false
	}
	for _, r := range items {
		if r != or {
			return r
		}
	}
	return or
}

// Reason says why a lead did not match.
type Reason string

// Reasons a lead did not match.
const (
	// ReasonJunk: the lead is junk and the rule does not require junk.
	ReasonJunk Reason = "junk"
	// ReasonPartial: the lead is partial and the rule sends completed
	// leads (automatic_completed, automatic_match).
	ReasonPartial Reason = "partial"
	// ReasonCompleted: the lead is completed and the rule sends partial
	// leads (automatic_partial).
	ReasonCompleted Reason = "completed"
	// ReasonCondition: a condition or a group of an "and" rule did not
	// hold.
	ReasonCondition Reason = "condition"
	// ReasonNoCondition: no condition or group of an "or" rule held.
	ReasonNoCondition Reason = "no_condition"
)

// Result is a Matcher's verdict on one lead.
type Result struct {
	Matched bool
	// Reason says why the lead did not match; "" when it did.
	Reason Reason
	// Condition is the index of the condition that decided, in
	// Spec.All's order: for an "and" rule the first that did not hold
	// (Reason is ReasonCondition), for an "or" rule the first that held
	// (Matched). When a group decided, it is the condition that decided
	// the group: the first that failed in an "and" group, the first that
	// held in an "or" group. It is -1 when no single condition decided.
	Condition int
	// Group is the index of the group that decided (in Spec.Groups), as
	// Condition says for a condition; -1 when none did.
	Group int
}

// Match decides whether the rule sends lead v. It reads only the fields
// the conditions name, stopping at the first condition that decides.
//
// Before the conditions come two gates: a junk lead matches only a rule
// that requires junk (RequiresJunk), and a partial lead matches automatic_partial
// rules while a completed one matches the other automatic modes. Manual
// rules and stage mappings take both: a partial lead can be booked too.
func (m *Matcher) Match(v *Lead) Result { return m.eval(v, nil) }

// MatchEach is Match that evaluates every condition, for the preview: it
// also reports in held whether each condition holds for v on its own,
// gates aside, so that counting the leads each condition rules out costs
// one pass. held is reused when it has the capacity.
func (m *Matcher) MatchEach(v *Lead, held []bool) (Result, []bool) {
	held = slices.Grow(held[:0], len(m.conds))[:len(m.conds)]
	return m.eval(v, held), held
}

func (m *Matcher) eval(v *Lead, held []bool) Result {
	r := Result{Condition: -1, Group: -1}
	gate := m.gate(v)
	if gate != "" && held == nil {
		r.Reason = gate
		return r
	}
	// An "and" list is decided by the first item that fails, an "or" list
	// by the first that holds; with held every condition is evaluated all
	// the same.
	decided, decidedCond := -1, -1
	for k := range m.items() {
		ok, cond := m.item(v, k, held)
		if decided < 0 && ok == m.or {
			decided, decidedCond = k, cond
			if held == nil {
				break
			}
		}
	}
	if decided >= m.plain {
		r.Group = decided - m.plain
	}
	switch {
	case gate != "":
		r.Reason = gate
		r.Group = -1
	case m.items() == 0 || (decided >= 0) == m.or:
		r.Matched = true
		if m.or {
			r.Condition = decidedCond
		} else {
			r.Group = -1
		}
	case m.or:
		r.Reason = ReasonNoCondition
	default:
		r.Reason, r.Condition = ReasonCondition, decidedCond
	}
	return r
}

// item evaluates item k of the rule: a plain condition, or a group. It
// returns whether the item holds and the condition that decided it (-1
// for none: an "and" group that holds, an "or" group that fails). With
// held, every condition of a group is evaluated and recorded.
func (m *Matcher) item(v *Lead, k int, held []bool) (bool, int) {
	if k < m.plain {
		ok := m.conds[k].match(v)
		if held != nil {
			held[k] = ok
		}
		return ok, k
	}
	g := m.groups[k-m.plain]
	decided := -1
	for i := g.from; i < g.to; i++ {
		ok := m.conds[i].match(v)
		if held != nil {
			held[i] = ok
		}
		if decided < 0 && ok == g.or {
			decided = i
			if held == nil {
				break
			}
		}
	}
	if g.from == g.to {
		return !g.or, -1 // no group compiles empty; as "and" of nothing
	}
	return (decided >= 0) == g.or, decided
}

func (m *Matcher) gate(v *Lead) Reason {
	switch {
	case v.m.Junk && !m.requiresJunk:
		return ReasonJunk
	case m.mode == AutomaticPartial && !v.m.Partial:
		return ReasonCompleted
	case (m.mode == AutomaticCompleted || m.mode == AutomaticMatch) && v.m.Partial:
		return ReasonPartial
	}
	return ""
}

// cond is a compiled Condition.
type cond struct {
	get  func(*Lead) string
	op   MatchType
	text string              // the folded pattern
	list map[string]struct{} // the folded values of in_list and not_in_list
	re   *regexp.Regexp
	num  float64
	// boolean: the field is true, false or unknown ("").
	boolean bool
	// needsJunk: the condition holds only for a junk lead
	// (Condition.requiresJunk).
	needsJunk bool
	// cost is the regex's size; 0 for other match types.
	cost int
}

// requiresJunk reports whether the condition holds only for a lead that
// is junk or has a junk signal: "junk equals true", "junk_reason.x
// not_equals false".
func (c Condition) requiresJunk() bool {
	p := fold(strings.TrimSpace(c.Pattern))
	return isJunkField(c.Field) && (c.MatchType == Equals && p == "true" || c.MatchType == NotEquals && p == "false")
}

// match reports whether the condition holds for v. Values are read with
// surrounding space trimmed, at most their first MaxFieldRead bytes, and
// compared folded (see fold). An empty value holds for not_equals,
// not_contains and not_in_list (it is none of the pattern's values) and
// fails gt and lt (it is no number); a regex sees it as "". An unknown
// true/false value fails equals and not_equals alike.
func (c *cond) match(v *Lead) bool {
	s := strings.TrimSpace(prefix(c.get(v)))
	switch {
	case c.op == IsEmpty:
		return s == ""
	case c.op == NotEmpty:
		return s != ""
	case c.boolean && s == "":
		return false
	}
	switch c.op {
	case GT, LT, GTE, LTE:
		n, ok := number(s)
		return ok && (c.op == GT && n > c.num || c.op == LT && n < c.num || c.op == GTE && n >= c.num || c.op == LTE && n <= c.num)
	case Regex:
		return c.re.MatchString(norm.NFC.String(s))
	}
	s = fold(s)
	switch c.op {
	case Equals:
		return s == c.text
	case NotEquals:
		return s != c.text
	case Contains:
		return strings.Contains(s, c.text)
	case NotContains:
		return !strings.Contains(s, c.text)
	case StartsWith:
		return strings.HasPrefix(s, c.text)
	case EndsWith:
		return strings.HasSuffix(s, c.text)
	case InList:
		_, ok := c.list[s]
		return ok
	case NotInList:
		_, ok := c.list[s]
		return !ok
	}
	return false
}

// prefix is the part of s a condition reads: its first MaxFieldRead bytes,
// cut at a character boundary.
func prefix(s string) string {
	if len(s) <= MaxFieldRead {
		return s
	}
	n := MaxFieldRead
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxQuoted is how much of a pattern Condition.String shows.
const maxQuoted = 60

func quote(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxQuoted {
		s = string([]rune(s)[:maxQuoted]) + "…"
	}
	return strconv.Quote(s)
}

// quoteList shows the first few values of a list.
func quoteList(items []string) string {
	const shown = 5
	q := make([]string, 0, shown)
	for _, it := range items[:min(len(items), shown)] {
		q = append(q, quote(it))
	}
	s := strings.Join(q, ", ")
	if len(items) > shown {
		s += fmt.Sprintf(" and %d more", len(items)-shown)
	}
	return s
}
