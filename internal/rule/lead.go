package rule

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

// Lead is a lead as conditions read it. The derived fields (email domain,
// phone country, landing path, custom fields, ...) are worked out the first
// time a condition asks for them and kept, so a lead costs only what its
// rules read, each derived value at most once however many conditions and
// rules read it. A Lead is not safe for concurrent use.
type Lead struct {
	m    *models.Lead
	done derived

	domain, local string // of the email, lowercased; local without a +tag
	badEmail      bool
	disposable    bool
	keys          normalize.Keys // the lead's match keys, parsed
	keysErr       error
	validPhone    bool
	path          string
	utms          [len(utmParams)]string
	fields        []customField
	reasons       []storedReason
	change        *models.StageChange // SetChange's; nil for none
}

// customField is one custom form field of the lead.
type customField struct{ name, value string }

// derived is a set of the derived values a Lead has worked out.
type derived uint8

const (
	haveEmail derived = 1 << iota
	haveEmailChecks
	haveKeys
	havePhoneValid
	haveURL
	haveFields
	haveReasons
)

// storedReason is the part of a junk.Reason in models.Lead.JunkReasons
// that rules read.
type storedReason struct {
	Signal junk.Signal `json:"signal"`
}

// NewLead returns l as conditions read it. l must not change while the
// Lead is in use.
func NewLead(l *models.Lead) *Lead {
	v := new(Lead)
	v.Reset(l)
	return v
}

// Reset makes v read l, forgetting what it worked out for the previous
// lead, and its stage change, but keeping its buffers: the preview reuses
// one Lead for every row it streams.
func (v *Lead) Reset(l *models.Lead) {
	clear(v.fields) // drop the previous lead's strings
	*v = Lead{m: l, fields: v.fields[:0], reasons: v.reasons[:0]}
}

// todo reports whether d is still to be worked out, and marks it done: the
// caller works it out now.
func (v *Lead) todo(d derived) bool {
	if v.done&d != 0 {
		return false
	}
	v.done |= d
	return true
}

// email splits the email address into its domain and its local part,
// lowercased, the local part without a +tag (jane+ads@ is jane@).
func (v *Lead) email() {
	if !v.todo(haveEmail) {
		return
	}
	e := strings.ToLower(strings.TrimSpace(v.m.Email))
	at := strings.LastIndexByte(e, '@')
	if at < 0 {
		return
	}
	v.local, v.domain = e[:at], strings.TrimSuffix(e[at+1:], ".")
	if i := strings.IndexByte(v.local, '+'); i >= 0 {
		v.local = v.local[:i]
	}
}

func (v *Lead) emailDomain() string {
	v.email()
	return v.domain
}

// hasEmail reports whether the lead has an address to derive the email
// fields from: without one they are unknown.
func (v *Lead) hasEmail() bool {
	v.email()
	return v.domain != ""
}

func (v *Lead) emailFree() (value, known bool) {
	known = v.hasEmail()
	_, ok := freeDomains[v.domain]
	return ok, known
}

func (v *Lead) emailRole() (value, known bool) {
	known = v.hasEmail()
	_, ok := roleLocals[v.local]
	return ok, known
}

// emailSignals are the junk signals that judge an address on its own. The
// derived email fields ask them rather than keep a second list, so a rule
// and the junk verdict never disagree on what is disposable.
var emailSignals = junk.Settings{
	junk.BadEmail:        {Enabled: true},
	junk.DisposableEmail: {Enabled: true},
}

func (v *Lead) emailChecks() {
	if !v.todo(haveEmailChecks) {
		return
	}
	in := junk.Input{Email: strings.ToLower(strings.TrimSpace(v.m.Email))}
	for _, r := range junk.Check(in, emailSignals) {
		switch r.Signal {
		case junk.BadEmail:
			v.badEmail = true
		case junk.DisposableEmail:
			v.disposable = true
		}
	}
}

func (v *Lead) emailDisposable() (value, known bool) {
	v.emailChecks()
	return v.disposable, v.hasEmail()
}

// emailWork is an address that can receive mail at a domain that is
// neither a free nor a disposable mailbox provider.
func (v *Lead) emailWork() (value, known bool) {
	v.emailChecks()
	free, known := v.emailFree()
	return !v.badEmail && !v.disposable && !free, known
}

// phoneCountry is the region capture found for the phone number, taking
// the lead's or the account's country into account (its PhoneCountry);
// "" when the phone did not parse. A lead captured before migration 0016
// has no PhoneCountry until the backfill after start reaches it
// (docs/operations.md, "Migrations"): until then its match keys say it,
// as they did to capture.
func (v *Lead) phoneCountry() string {
	if v.m.PhoneCountry != "" || v.m.PhoneE164 == "" {
		return v.m.PhoneCountry
	}
	if keys, err := v.Keys(); err == nil {
		return keys.PhoneRegion()
	}
	return ""
}

// Keys is the lead's match keys (models.Lead.MatchKeys), parsed the first
// time a condition, the preview's check or an event asks for them: once
// per lead.
func (v *Lead) Keys() (normalize.Keys, error) {
	if v.todo(haveKeys) {
		v.keys, v.keysErr = normalize.ParseKeys([]byte(v.m.MatchKeys))
	}
	return v.keys, v.keysErr
}

// phoneValid is stricter than what capture needs to hash a phone: the
// number must be in a range its country assigns (libphonenumber's
// IsValidNumber), which fictional numbers like 555-0100 are not. It is
// unknown for a lead without a phone.
func (v *Lead) phoneValid() (value, known bool) {
	if v.todo(havePhoneValid) && digits(v.m.PhoneE164) {
		num, err := phonenumbers.Parse("+"+v.m.PhoneE164, "")
		v.validPhone = err == nil && phonenumbers.IsValidNumber(num)
	}
	return v.validPhone, strings.TrimSpace(v.m.Phone) != "" || v.m.PhoneE164 != ""
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// utmParams are the query parameters of the page URL that rules read.
var utmParams = [...]string{"utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term"}

// pageURL reads the path of the page the lead was captured on, and the
// first value of each of utmParams in its query, as url.Values.Get would
// (without building the map of every parameter).
func (v *Lead) pageURL() {
	if !v.todo(haveURL) {
		return
	}
	u, err := url.Parse(strings.TrimSpace(v.m.EventSourceURL))
	if err != nil {
		return
	}
	v.path = u.Path
	if v.path == "" && u.Host != "" {
		v.path = "/"
	}
	var seen [len(utmParams)]bool
	for q := u.RawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		if key, err = url.QueryUnescape(key); err != nil || strings.Contains(key, ";") {
			continue
		}
		i := slices.Index(utmParams[:], key)
		if i < 0 || seen[i] {
			continue
		}
		if value, err = url.QueryUnescape(value); err == nil {
			v.utms[i], seen[i] = value, true
		}
	}
}

// landingPath is the decoded path of the page URL: "/quote" of
// https://example.com/quote?utm_source=fb.
func (v *Lead) landingPath() string {
	v.pageURL()
	return v.path
}

// utm is the value of utmParams[i] in the page URL.
func (v *Lead) utm(i int) string {
	v.pageURL()
	return v.utms[i]
}

// field is the custom form field name; "" when the lead has none.
func (v *Lead) field(name string) string {
	if v.todo(haveFields) && len(v.m.Fields) > len("{}") {
		v.fields = parseFields(v.m.Fields, v.fields)
	}
	// From the end, as encoding/json keeps the last of repeated names.
	for i := len(v.fields) - 1; i >= 0; i-- {
		if v.fields[i].name == name {
			return v.fields[i].value
		}
	}
	return ""
}

// parseFields appends the custom fields of the stored JSON to dst[:0]. The
// JSON is what capture writes: a compact object of strings, json.Marshal's
// output, which parseFields reads in place, the values being substrings of
// s. Anything else (escapes, spaces) goes to encoding/json, and a value of
// another type than string reads as "".
func parseFields(s string, dst []customField) []customField {
	dst = dst[:0]
	if fields, ok := scanFields(s, dst); ok {
		return fields
	}
	var m map[string]string
	_ = json.Unmarshal([]byte(s), &m)
	for name, value := range m {
		dst = append(dst, customField{name, value})
	}
	return dst
}

func scanFields(s string, dst []customField) ([]customField, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || !utf8.ValidString(s) {
		return dst, false
	}
	for rest := s[1 : len(s)-1]; rest != ""; {
		name, r, ok := plainString(rest)
		if !ok || !strings.HasPrefix(r, ":") {
			return dst, false
		}
		value, r, ok := plainString(r[1:])
		if !ok {
			return dst, false
		}
		dst = append(dst, customField{name, value})
		if r == "" {
			break
		}
		if rest, ok = strings.CutPrefix(r, ","); !ok || rest == "" {
			return dst, false
		}
	}
	return dst, true
}

// plainString reads a JSON string without escapes at the start of s, and
// returns it with the rest of s.
func plainString(s string) (str, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], s[i+1:], true
		case c == '\\' || c < 0x20:
			return "", "", false
		}
	}
	return "", "", false
}

// junkReason reports whether sig fired when the lead was captured. The
// reasons stay when a person overrides the verdict; junk is the verdict in
// force.
func (v *Lead) junkReason(sig junk.Signal) bool {
	if v.todo(haveReasons) && len(v.m.JunkReasons) > len("[]") {
		if err := json.Unmarshal([]byte(v.m.JunkReasons), &v.reasons); err != nil {
			v.reasons = v.reasons[:0]
		}
	}
	for _, r := range v.reasons {
		if r.Signal == sig {
			return true
		}
	}
	return false
}

// Value is the value of the field name as a condition reads it: a built-in
// field's, or a custom field's ("fields.<name>"); "" for a field that is
// neither. A send rule reads its value and currency from a lead this way.
func (v *Lead) Value(name string) string {
	if i, ok := defIndex[name]; ok {
		return defs[i].get(v)
	}
	if custom, ok := strings.CutPrefix(name, CustomPrefix); ok {
		return v.field(custom)
	}
	return ""
}

// ValueProblem says what is wrong with name as the field a send rule reads
// its value or currency from, or "" when it can be one: a built-in field
// or a custom field of schema.
func (s Schema) ValueProblem(name string) string {
	if _, ok := s.known(name); ok {
		return ""
	}
	if f, ok := builtin(name); ok && f.Change {
		return fmt.Sprintf("%s is the stage change's, not a lead field: a stage mapping takes the change's value and currency "+
			"from the change instead", name)
	}
	if msg := s.suggest(name, false); msg != "" {
		return fmt.Sprintf("unknown field %q; did you mean %s?", name, msg)
	}
	return fmt.Sprintf("unknown field %q", name)
}
