package rule

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Limits of a Spec. They keep one rule from costing the server much to
// compile, or to evaluate over the preview's week of leads.
const (
	// MaxConditions bounds a rule's conditions, its groups' included.
	MaxConditions = 50
	// MaxGroups bounds a rule's groups.
	MaxGroups = 10
	// MaxPatternLen is the longest pattern but a list, in characters.
	MaxPatternLen = 2000
	// MaxListLen is the longest in_list or not_in_list pattern, in
	// characters, and MaxListItems the most values it may hold.
	MaxListLen   = 20000
	MaxListItems = 1000
	// MaxRegexSize is the most instructions a compiled regular expression
	// may have. Matching costs up to this many steps per byte of the value
	// it reads (at most MaxFieldRead).
	MaxRegexSize = 1000
	// MaxFieldRead is how much of a field's value a condition reads, in
	// bytes: a 20,000-byte message is judged on its first 4 KB.
	MaxFieldRead = 4096
)

// Compile checks s and turns it into a Matcher. schema says which custom
// fields the conditions may name. When s has problems, Compile returns
// them all, in the order of s's parts, and no Matcher.
func Compile(s Spec, schema Schema) (*Matcher, []Problem) {
	m := &Matcher{spec: s, mode: s.Mode}
	if m.mode == "" {
		m.mode = AutomaticCompleted
	}
	c := compiler{schema: schema, stage: m.mode == Stage}

	if !m.mode.Valid() && m.mode != Stage {
		if schema.Words && m.mode != Booking {
			c.add("mode", "choose a send mode from the list")
		} else {
			c.add("mode", "%s", m.mode.problem())
		}
	}
	if msg := EventNameProblem(s.EventName); msg != "" {
		c.add("event_name", "%s", msg)
	} else if m.mode == AutomaticPartial && IsStandardEvent(s.EventName) {
		c.add("event_name", "partial leads need a custom event name, like PartialLead: under the standard %s event, "+
			"Meta would count unfinished forms as conversions and look for more people who leave forms unfinished", s.EventName)
	}
	m.or = c.combinator("combinator", s.Combinator, "whether every condition must hold or one is enough",
		"and (every condition must match) or or (one is enough)")

	n := s.Count()
	switch {
	case n > MaxConditions:
		c.add("conditions", "use at most %d conditions, not %d", MaxConditions, n)
		return nil, c.problems
	case len(s.Groups) > MaxGroups:
		c.add("groups", "use at most %d groups, not %d", MaxGroups, len(s.Groups))
		return nil, c.problems
	case n > 0 && m.mode == AutomaticCompleted:
		c.add("conditions", "%s sends every completed lead, so it takes no conditions: "+
			"choose %s to send only the leads that meet them", c.mode(AutomaticCompleted), c.mode(AutomaticMatch))
	case n == 0 && len(s.Groups) == 0 && m.mode == AutomaticMatch:
		c.add("conditions", "%s needs at least one condition", c.mode(AutomaticMatch))
	}
	for i, cd := range s.Conditions {
		m.conds = append(m.conds, c.condition(fmt.Sprintf("conditions[%d]", i), cd))
	}
	for g, gr := range s.Groups {
		path := fmt.Sprintf("groups[%d]", g)
		k := group{from: len(m.conds)}
		k.or = c.combinator(path+".combinator", gr.Combinator, "whether every condition of the group must hold or one is enough",
			"and (every condition of the group must match) or or (one is enough)")
		if len(gr.Conditions) == 0 {
			c.add(path+".conditions", "a group needs at least one condition: add one, or remove the group")
		}
		for i, cd := range gr.Conditions {
			m.conds = append(m.conds, c.condition(fmt.Sprintf("%s.conditions[%d]", path, i), cd))
		}
		k.to = len(m.conds)
		m.groups = append(m.groups, k)
	}
	m.plain = len(s.Conditions)
	m.requiresJunk = m.itemsRequireJunk()
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	return m, nil
}

// combinator reads a rule's or a group's combinator: true for or. An
// unknown one is a problem at path, said in words (Schema.Words) or as a
// setup file writes it.
func (c *compiler) combinator(path string, cb Combinator, words, names string) bool {
	switch cb {
	case "", And:
	case Or:
		return true
	default:
		if c.schema.Words {
			c.add(path, "choose %s", words)
		} else {
			c.add(path, "%q is not a combinator; use %s", cb, names)
		}
	}
	return false
}

// compiler collects the problems of one Spec.
type compiler struct {
	schema Schema
	// stage: the Spec is a stage mapping's, whose conditions may read the
	// stage change's fields.
	stage    bool
	problems []Problem
}

func (c *compiler) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// condition compiles one condition, reporting its problems under path.
func (c *compiler) condition(path string, cd Condition) cond {
	k := cond{op: cd.MatchType}
	f, known := c.field(path+".field", cd.Field, &k)
	k.boolean = f.Kind == Bool
	k.needsJunk = cd.requiresJunk()

	switch {
	case cd.MatchType == "" && c.schema.Words:
		c.add(path+".match_type", "choose how to compare %s", cmp.Or(f.Label, "the field"))
	case cd.MatchType == "":
		c.add(path+".match_type", "choose a match type")
	case !slices.Contains(MatchTypes, cd.MatchType) && c.schema.Words:
		c.add(path+".match_type", "%q is no way to compare: choose one from the list", cd.MatchType)
	case !slices.Contains(MatchTypes, cd.MatchType):
		c.add(path+".match_type", "%q is not a match type; use one of %s", cd.MatchType, join(MatchTypes))
	case known && !f.takes(cd.MatchType):
		c.add(path+".match_type", "%s", c.kindProblem(f, cd.MatchType))
	default:
		c.pattern(path+".pattern", f, cd, &k)
	}
	return k
}

// field finds the field a condition names and sets k to read it. A field
// it cannot find reads as a custom field, so that the pattern can still be
// checked. The stage change's fields are a stage mapping's only.
func (c *compiler) field(path, name string, k *cond) (Field, bool) {
	if i, ok := defIndex[name]; ok {
		k.get = defs[i].get
		if defs[i].Change && !c.stage {
			c.add(path, "%s", changeProblem(defs[i].Field, c.schema.Words))
		}
		return defs[i].Field, true
	}
	f, known := c.schema.known(name)
	if !known {
		switch custom, isCustom := strings.CutPrefix(name, CustomPrefix); {
		case strings.TrimSpace(name) == "":
			c.add(path, "choose a field")
		case isCustom && strings.TrimSpace(custom) == "":
			c.add(path, "write the form field's name after fields., like fields.budget")
		case isCustom && c.schema.suggest(name, c.stage) == "":
			c.add(path, "no lead has had a custom field %q yet; check its name against the form", custom)
		default:
			msg := fmt.Sprintf("unknown field %q", name)
			switch s := c.schema.suggest(name, c.stage); {
			case s != "" && c.schema.Words:
				msg += fmt.Sprintf("; did you mean %s (%s)?", labelOf(s), s)
			case s != "":
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			c.add(path, "%s", msg)
		}
		f = customOrUnknown(name)
	}
	custom := strings.TrimPrefix(f.Name, CustomPrefix)
	k.get = func(v *Lead) string { return v.field(custom) }
	return f, known
}

// kindProblem explains why a field of f's kind cannot take match type t.
func (c *compiler) kindProblem(f Field, t MatchType) string {
	if c.schema.Words {
		switch f.Kind {
		case Bool:
			if f.MayBeUnknown {
				return fmt.Sprintf("%s is yes or no: choose 'is' or 'is not', then yes or no, or 'is unknown'", f.Label)
			}
			return fmt.Sprintf("%s is yes or no: choose 'is' or 'is not', then yes or no", f.Label)
		case Number:
			return fmt.Sprintf("%s is a number: compare it with 'is greater than', 'is at least', 'is less than' or 'is at most'", f.Label)
		}
		return fmt.Sprintf("%s is text: %s compares numbers, which only form fields and number fields hold", f.Label, c.matchType(f, t))
	}
	switch f.Kind {
	case Bool:
		return fmt.Sprintf("%s is true or false: use equals or not_equals, with true or false, or is_empty for unknown", f.Name)
	case Number:
		return fmt.Sprintf("%s is a number: use gt, gte, lt, lte, is_empty or not_empty", f.Name)
	}
	return fmt.Sprintf("%s is text: %s compares numbers, which only custom form fields and number fields like fill_seconds hold", f.Name, t)
}

// pattern checks the condition's pattern for its match type and the
// field's kind, and compiles it into k.
func (c *compiler) pattern(path string, f Field, cd Condition, k *cond) {
	p, t := cd.Pattern, cd.MatchType
	trimmed := strings.TrimSpace(p)
	limit := MaxPatternLen
	if t == InList || t == NotInList {
		limit = MaxListLen
	}
	switch {
	case !t.TakesPattern():
		if trimmed != "" && c.schema.Words {
			c.add(path, "%s takes no value: leave it blank", c.matchType(f, t))
		} else if trimmed != "" {
			c.add(path, "%s takes no pattern: leave it blank", t)
		}
		return
	case trimmed == "" && c.schema.Words && f.Kind == Bool:
		c.add(path, "choose yes or no")
		return
	case trimmed == "" && c.schema.Words && (t == InList || t == NotInList):
		c.add(path, "%s needs at least one value: one per line, or separated by commas", c.matchType(f, t))
		return
	case trimmed == "" && c.schema.Words:
		c.add(path, "%s needs a value", c.matchType(f, t))
		return
	case trimmed == "":
		c.add(path, "%s needs a pattern", t)
		return
	case utf8.RuneCountInString(p) > limit:
		c.add(path, "use at most %d characters", limit)
		return
	}

	item := func(string) string { return "" }
	if i, ok := defIndex[f.Name]; ok && defs[i].item != nil {
		item = defs[i].item
	}
	switch {
	case t.Numeric():
		n, ok := number(trimmed)
		switch {
		case !ok && c.schema.Words:
			c.add(path, "%s needs a number, like 3 or 2.5, not %q", c.matchType(f, t), trimmed)
		case !ok:
			c.add(path, "%s needs a number, like 1000 or 2.5, not %q", t, trimmed)
		}
		k.num = n
	case t == Regex:
		re, size, msg := compileRegex(p)
		if msg != "" {
			c.add(path, "%s", msg)
		}
		k.re, k.cost = re, size
	case f.Kind == Bool:
		switch k.text = fold(trimmed); {
		case k.text == "true" || k.text == "false":
		case c.schema.Words:
			c.add(path, "%s is yes or no: choose yes or no, not %q", f.Label, trimmed)
		default:
			c.add(path, "%s is true or false: write true or false, not %q", f.Name, trimmed)
		}
	case t == InList || t == NotInList:
		items := listItems(p)
		switch {
		case len(items) == 0 && c.schema.Words:
			c.add(path, "%s needs at least one value: one per line, or separated by commas", c.matchType(f, t))
			return
		case len(items) == 0:
			c.add(path, "%s needs at least one value; separate values with commas or new lines", t)
			return
		case len(items) > MaxListItems:
			c.add(path, "use at most %d values, not %d", MaxListItems, len(items))
			return
		}
		k.list = make(map[string]struct{}, len(items))
		for _, it := range items {
			if msg := item(it); msg != "" {
				c.add(path, "%q: %s", it, msg)
				return
			}
			k.list[fold(it)] = struct{}{}
		}
	default:
		if t == Equals || t == NotEquals {
			if msg := item(trimmed); msg != "" {
				c.add(path, "%q: %s", trimmed, msg)
			}
		}
		k.text = fold(trimmed)
	}
}

// compileRegex compiles a condition's regular expression: Go's RE2 syntax,
// case-insensitive unless the pattern says (?-i). It returns the program's
// size (its cost per byte matched), or why the pattern cannot be used
// instead, in words for the rule form.
func compileRegex(p string) (*regexp.Regexp, int, string) {
	p = "(?i)" + norm.NFC.String(p)
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, 0, "this regular expression does not compile: " + se.Code.String()
		}
		return nil, 0, "this regular expression does not compile"
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil || len(prog.Inst) > MaxRegexSize {
		return nil, 0, "this regular expression is too complex: make it shorter, or split it into several conditions"
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, 0, "this regular expression does not compile"
	}
	return re, len(prog.Inst), ""
}

// fold prepares text for a caseless comparison: NFC with Unicode full case
// folding, so "ÉCOLE", "école" and "e\u0301cole" fold alike, and "Straße"
// like "STRASSE". Turkish dotted and dotless i fold as in other languages.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Canonical caseless matching (Unicode D145), NFC rather than
			// NFD at the end so that the folded text stays short.
			return norm.NFC.String(cases.Fold().String(norm.NFD.String(s)))
		}
	}
	return strings.ToLower(s) // ASCII folds to lower case; most values are ASCII
}

// number reads s as a plain decimal number: "12", "-3.5", "1e3". "$12",
// "1,000", "0x10", "NaN" and "Inf" are not numbers.
func number(s string) (float64, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// listItems splits an in_list pattern at commas and line breaks, trimming
// each value and dropping empty ones.
func listItems(p string) []string {
	var items []string
	for it := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == ',' || r == '\n' }) {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
