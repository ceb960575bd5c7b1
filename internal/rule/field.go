package rule

import (
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/models"
)

// Kind is the type of a field's value; it decides the match types a
// condition on the field may use (Field.MatchTypes).
type Kind string

// Kinds of fields. A Bool field reads "true" or "false", or "" when
// unknown (a derived email field of a lead without an email); a Number
// field reads as a decimal number, or "" when unknown.
const (
	Text   Kind = "text"
	Number Kind = "number"
	Bool   Kind = "bool"
)

// Prefixes of the field names that are families rather than single fields.
const (
	// CustomPrefix starts the name of a custom form field: "fields.budget"
	// is the lead's custom field "budget".
	CustomPrefix = "fields."
	// JunkReasonPrefix starts the name of a junk signal's field:
	// "junk_reason.too_fast" is true when that signal fired at capture.
	JunkReasonPrefix = "junk_reason."
)

// Field is one field a condition can name.
type Field struct {
	Name  string // as conditions name it: "email_domain", "fields.budget"
	Label string // for the field picker and for Condition.String
	Kind  Kind
	// Values lists every value the field can have, when there are few
	// (source); nil otherwise.
	Values []string
	// MayBeUnknown: a Bool field derived from something a lead may lack,
	// which is then neither true nor false (see derivedFlag).
	MayBeUnknown bool
	// Change: a field of the stage change (ChangePrefix), which only
	// stage mappings read; Schema.Fields leaves it out.
	Change bool
}

// MatchTypes lists the match types a condition on f may use. Custom form
// fields take them all, number comparisons included, because a form field
// holds whatever the form sent ("5000").
func (f Field) MatchTypes() []MatchType {
	switch {
	case f.Kind == Bool && f.MayBeUnknown:
		return []MatchType{Equals, NotEquals, IsEmpty, NotEmpty}
	case f.Kind == Bool:
		return []MatchType{Equals, NotEquals}
	case f.Kind == Number:
		return []MatchType{GT, GTE, LT, LTE, IsEmpty, NotEmpty}
	case strings.HasPrefix(f.Name, CustomPrefix):
		return MatchTypes
	}
	return MatchTypes[:len(MatchTypes)-4] // all but gt, lt, gte and lte
}

func (f Field) takes(t MatchType) bool { return slices.Contains(f.MatchTypes(), t) }

// Schema is what a rule's conditions may name: the built-in fields and the
// account's custom form fields.
type Schema struct {
	// Custom are the custom field names seen in the account's leads,
	// without the "fields." prefix. Names are case-sensitive, as the leads'
	// JSON keeps them.
	Custom []string
	// Open accepts a fields.<name> that is not in Custom: a rule written
	// before the form that sends the field goes live, or a setup file
	// applied to an account without leads. When false, such a name is a
	// typo until a lead has carried it.
	Open bool
	// Words makes problems speak to a person at a form: fields by their
	// labels, match types and modes as the form's selects name them
	// ("'is greater than' needs a number"). Without it they name them as a
	// setup file does ("gt needs a number"), for the file's author.
	Words bool
}

// Fields lists the fields a rule may name, for the rule form's picker:
// the built-in ones, then a fields.<name> for each custom field, sorted.
// The stage change's fields are not among them (ChangeFields).
func (s Schema) Fields() []Field {
	out := make([]Field, 0, len(defs)+len(s.Custom))
	for _, d := range defs {
		if !d.Change {
			out = append(out, d.Field)
		}
	}
	custom := slices.Clone(s.Custom)
	slices.Sort(custom)
	for _, name := range slices.Compact(custom) {
		if name != "" {
			out = append(out, formField(name))
		}
	}
	return out
}

// known reports whether name is a built-in field of the lead or one of
// the custom fields the schema accepts.
func (s Schema) known(name string) (Field, bool) {
	if f, ok := builtin(name); ok && !f.Change {
		return f, true
	}
	custom, ok := strings.CutPrefix(name, CustomPrefix)
	if !ok || custom == "" || !(s.Open || slices.Contains(s.Custom, custom)) {
		return Field{}, false
	}
	return formField(custom), true
}

// Field finds the field a rule's condition names, for the rule form: a
// built-in field of the lead, or a form field (fields.<name>) whether or
// not a lead has had it lately; false for none.
func (s Schema) Field(name string) (Field, bool) {
	s.Open = true
	return s.known(name)
}

func formField(name string) Field {
	return Field{Name: CustomPrefix + name, Label: "Form field " + name, Kind: Text}
}

// customOrUnknown describes a field that is not built in, for
// Condition.String: a custom field, or an unknown name as it is.
func customOrUnknown(name string) Field {
	if custom, ok := strings.CutPrefix(name, CustomPrefix); ok {
		return formField(custom)
	}
	return Field{Name: name, Label: name, Kind: Text}
}

// def is a built-in field with the way it reads a lead.
type def struct {
	Field
	get func(*Lead) string
	// item says what is wrong with one value of an equals or in_list
	// pattern, for fields whose values have a known form; "" when fine.
	item func(string) string
}

// defs are the built-in fields, in the picker's order: the lead's own
// fields, the derived ones, one per junk signal, then the stage change's.
var defs = builtinDefs()

// defIndex finds a def by name.
var defIndex = func() map[string]int {
	m := make(map[string]int, len(defs))
	for i, d := range defs {
		m[d.Name] = i
	}
	return m
}()

func builtin(name string) (Field, bool) {
	if i, ok := defIndex[name]; ok {
		return defs[i].Field, true
	}
	return Field{}, false
}

func text(name, label string, get func(*Lead) string) def {
	return def{Field: Field{Name: name, Label: label, Kind: Text}, get: get}
}

func flag(name, label string, get func(*Lead) bool) def {
	return def{Field: Field{Name: name, Label: label, Kind: Bool}, get: func(v *Lead) string { return strconv.FormatBool(get(v)) }}
}

// derivedFlag is a Bool field that is unknown ("") when the lead lacks
// what it is derived from: a lead without an email is neither a free nor
// a work address, so it fails both "equals true" and "equals false", and
// passes is_empty.
func derivedFlag(name, label string, get func(*Lead) (value, known bool)) def {
	return def{Field: Field{Name: name, Label: label, Kind: Bool, MayBeUnknown: true}, get: func(v *Lead) string {
		if b, ok := get(v); ok {
			return strconv.FormatBool(b)
		}
		return ""
	}}
}

func builtinDefs() []def {
	sources := make([]string, len(models.Sources))
	for i, s := range models.Sources {
		sources[i] = string(s)
	}
	ds := []def{
		{Field: Field{Name: "source", Label: "Source", Kind: Text, Values: sources},
			get: func(v *Lead) string { return string(v.m.Source) }, item: oneOf(sources)},
		flag("partial", "Partial lead", func(v *Lead) bool { return v.m.Partial }),
		flag("junk", "Junk", func(v *Lead) bool { return v.m.Junk }),
		text("stage", "CRM stage", func(v *Lead) string { return v.m.Stage }),
		text("external_id", "External ID", func(v *Lead) string { return deref(v.m.ExternalID) }),
		text("email", "Email", func(v *Lead) string { return v.m.Email }),
		text("phone", "Phone", func(v *Lead) string { return v.m.Phone }),
		text("phone_e164", "Phone (E.164 digits)", func(v *Lead) string { return v.m.PhoneE164 }),
		text("first_name", "First name", func(v *Lead) string { return v.m.FirstName }),
		text("last_name", "Last name", func(v *Lead) string { return v.m.LastName }),
		text("city", "City", func(v *Lead) string { return v.m.City }),
		text("state", "State", func(v *Lead) string { return v.m.State }),
		text("zip", "ZIP or postal code", func(v *Lead) string { return v.m.Zip }),
		text("country", "Country", func(v *Lead) string { return v.m.Country }),
		text("gender", "Gender", func(v *Lead) string { return v.m.Gender }),
		text("date_of_birth", "Date of birth", func(v *Lead) string { return v.m.DateOfBirth }),
		text("message", "Message", func(v *Lead) string { return v.m.Message }),
		text("fbclid", "Facebook click ID (fbclid)", func(v *Lead) string { return v.m.FBCLID }),
		text("fbc", "Click cookie (fbc)", func(v *Lead) string { return v.m.FBC }),
		text("fbp", "Browser cookie (fbp)", func(v *Lead) string { return v.m.FBP }),
		text("client_ip_address", "Visitor IP address", func(v *Lead) string { return v.m.ClientIP }),
		text("client_user_agent", "Visitor user agent", func(v *Lead) string { return v.m.ClientUserAgent }),
		text("event_source_url", "Page URL", func(v *Lead) string { return v.m.EventSourceURL }),
		{Field: Field{Name: "fill_seconds", Label: "Seconds to fill the form", Kind: Number}, get: fillSeconds},
		text("honeypot", "Honeypot field", func(v *Lead) string { return v.m.Honeypot }),
		text("meta_lead_id", "Meta lead ID", func(v *Lead) string { return v.m.MetaLeadID }),

		text("email_domain", "Email domain", (*Lead).emailDomain),
		derivedFlag("email_is_free", "Free email provider (gmail.com, ...)", (*Lead).emailFree),
		derivedFlag("email_is_role", "Role address (info@, sales@, ...)", (*Lead).emailRole),
		derivedFlag("email_is_disposable", "Disposable email", (*Lead).emailDisposable),
		derivedFlag("email_is_work", "Work email", (*Lead).emailWork),
		{Field: Field{Name: "phone_country", Label: "Phone country", Kind: Text}, get: (*Lead).phoneCountry, item: countryItem},
		derivedFlag("phone_valid", "Valid phone number", (*Lead).phoneValid),
		text("landing_path", "Landing page path", (*Lead).landingPath),
	}
	for i, p := range utmParams {
		ds = append(ds, text(p, "UTM "+strings.TrimPrefix(p, "utm_"), func(v *Lead) string { return v.utm(i) }))
	}
	for _, sig := range junk.Signals {
		label, _ := junk.Describe(sig)
		ds = append(ds, flag(JunkReasonPrefix+string(sig), "Junk signal: "+label, func(v *Lead) bool { return v.junkReason(sig) }))
	}
	return append(ds, changeDefs()...)
}

func fillSeconds(v *Lead) string {
	if v.m.FillSeconds == nil {
		return ""
	}
	return strconv.FormatFloat(*v.m.FillSeconds, 'g', -1, 64)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// countryItem wants an ISO 3166-1 alpha-2 code, the form phone_country has.
func countryItem(s string) string {
	if !country.Valid(s) {
		return "write a 2-letter country code, like US or DE"
	}
	return ""
}

// oneOf wants one of vs, ignoring case.
func oneOf(vs []string) func(string) string {
	return func(s string) string {
		if slices.ContainsFunc(vs, func(v string) bool { return strings.EqualFold(v, s) }) {
			return ""
		}
		return "use one of " + strings.Join(vs, ", ")
	}
}

// suggest returns the known field name closest to an unknown one, or ""
// when none is close enough to be the likely intent. The stage change's
// fields are among the candidates only for a stage mapping (change).
func (s Schema) suggest(name string, change bool) string {
	if len(name) > maxSuggestLen {
		return ""
	}
	best, bestDist := "", len(name)/3+1
	try := func(candidate string) {
		if d := distance(strings.ToLower(name), strings.ToLower(candidate)); d < bestDist {
			best, bestDist = candidate, d
		}
	}
	for _, d := range defs {
		if change || !d.Change {
			try(d.Name)
		}
	}
	for _, c := range s.Custom {
		try(CustomPrefix + c)
	}
	return best
}

// maxSuggestLen bounds the names suggest compares: no field name is longer.
const maxSuggestLen = len(CustomPrefix) + 100

// distance is the number of single-byte edits (insert, delete, replace,
// swap two neighbours) that turn a into b; field names are mostly ASCII.
func distance(a, b string) int {
	// rows i-2, i-1 and i of the optimal string alignment table.
	before, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}
