package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// File is an account's setup as a JSON document.
type File struct {
	Account  AccountSpec   `json:"account"`
	Datasets []DatasetSpec `json:"datasets"`
	// Destinations are destinations of every kind, Meta's datasets
	// included, each with its kind (docs/destinations.md); Datasets are
	// Meta's. Both may be given; names differ across both.
	Destinations []DatasetSpec `json:"destinations,omitzero"`
	// Junk, when present, replaces the account's junk settings; signals it
	// leaves out use their defaults. Absent (nil), the settings are kept.
	Junk junk.Settings `json:"junk,omitempty"`
	// SendRules, when present (not nil), replaces the account's send rules,
	// in this order; an empty list deletes them all. Absent (nil), the
	// rules are kept. Stage mappings are not among them.
	SendRules []RuleSpec `json:"send_rules,omitzero"`
	// Stages, when present (not nil), is the account's stage list in its
	// order, with each stage's aliases and the booking stage; a stage the
	// list leaves out stays, after the listed ones (a setup file never
	// deletes a stage). Absent (nil), the stages are kept.
	Stages []StageSpec `json:"stages,omitzero"`
	// StageMappings, when present (not nil), replaces the account's stage
	// mappings (send rules of mode stage), in the order of their Order; an
	// empty list deletes them all. Absent (nil), the mappings are kept.
	StageMappings []MappingSpec `json:"stage_mappings,omitzero"`
	// Sequences, when present (not nil), replaces the account's
	// sequences; an empty list deletes them all. Absent (nil), the
	// sequences are kept.
	Sequences []SequenceSpec `json:"sequences,omitzero"`
	// CRMConnections, when present (not nil), replaces the account's CRM
	// connections; an empty list deletes them all. Absent (nil), the
	// connections are kept.
	CRMConnections []CRMSpec `json:"crm_connections,omitzero"`
	// SiteKeys, when present (not nil), are the account's live site keys,
	// by name, with their origins: a key left out is revoked. Absent (nil),
	// the keys are kept.
	SiteKeys []SiteKeySpec `json:"site_keys,omitzero"`
}

// AccountSpec is the account's settings. The slug identifies the account:
// apply creates it when no account has the slug yet.
type AccountSpec struct {
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	Timezone       string `json:"timezone"`
	DefaultCountry string `json:"default_country"`
	Currency       string `json:"currency"`
	CRMName        string `json:"crm_name"`
	// WebsiteURL is the event_source_url of website leads posted without
	// one; empty for none.
	WebsiteURL string `json:"website_url,omitempty"`
	// present names the keys the file gave: apply leaves the settings of
	// the others as they are.
	present map[string]bool
}

// has reports whether the file gave the account key (a File made in Go,
// not decoded, gives them all).
func (a AccountSpec) has(key string) bool { return a.present == nil || a.present[key] }

// DatasetSpec is one destination of the account, a Meta dataset unless
// its Kind says otherwise, found by its name (ignoring case). The access
// token and app secret are given as the names of the environment
// variables that hold them: for Google, its OAuth refresh token and client
// secret.
type DatasetSpec struct {
	// Kind is meta (the default), tiktok, pinterest or google.
	Kind models.Kind `json:"kind,omitempty"`
	Name string      `json:"name"`
	// PixelID is the platform's id of where events go: Meta's dataset id,
	// TikTok's pixel code or event set id, Pinterest's ad account id,
	// Google's customer id.
	PixelID        string `json:"pixel_id"`
	AccessTokenEnv string `json:"access_token_env,omitempty"`
	AppSecretEnv   string `json:"app_secret_env,omitempty"`
	TestEventCode  string `json:"test_event_code,omitempty"`
	// APIVersion is the Graph API version, like v24.0; empty means the
	// server's default (META_API_VERSION).
	APIVersion string      `json:"api_version,omitempty"`
	Mode       models.Mode `json:"mode"`
	// LDU is the Limited Data Use setting; empty means off.
	LDU models.LDU `json:"ldu"`
	// EventSource is TikTok's: web (the default), crm or offline.
	EventSource string `json:"event_source,omitempty"`
	// EventNames are the destination's own names of our events; Google's
	// are its conversion actions' ids.
	EventNames map[string]string `json:"event_names,omitempty"`
	// LoginAccount, ClientID and Consent are Google's: the manager
	// account, the OAuth client id, and granted, denied or none.
	LoginAccount string         `json:"login_account,omitempty"`
	ClientID     string         `json:"client_id,omitempty"`
	Consent      models.Consent `json:"consent,omitempty"`
	// path is where the spec is in the file, datasets[i] or
	// destinations[i], for its problems and changes.
	path string
}

// destinations are the file's datasets and destinations, each with its
// path in the file and its kind (Meta's when it names none).
func (f File) destinations() []DatasetSpec {
	out := make([]DatasetSpec, 0, len(f.Datasets)+len(f.Destinations))
	for i, d := range f.Datasets {
		d.path = fmt.Sprintf("datasets[%d]", i)
		out = append(out, d)
	}
	for i, d := range f.Destinations {
		d.path = fmt.Sprintf("destinations[%d]", i)
		out = append(out, d)
	}
	return out
}

// RuleSpec is one send rule of the account, found by its name (ignoring
// case). Its destinations are named too, each one of the file or of the
// account: Dataset for one, or Destinations for a list of any kinds.
type RuleSpec struct {
	Name    string `json:"name"`
	Dataset string `json:"dataset,omitempty"`
	// Destinations, when present (not nil), are the rule's destinations
	// in order, instead of Dataset.
	Destinations []string `json:"destinations,omitempty"`
	// Mode is when the rule sends; empty means automatic_completed.
	Mode      rule.Mode `json:"mode"`
	EventName string    `json:"event_name"`
	// ActionSource, when set, replaces the action_source the lead's source
	// gives (one of capi.ActionSources).
	ActionSource string `json:"action_source,omitempty"`
	// Combinator joins the conditions and groups; empty means and.
	Combinator rule.Combinator  `json:"combinator"`
	Conditions []rule.Condition `json:"conditions"`
	// Groups are conditions joined by their own combinator, beside or
	// instead of Conditions (a plain conditions list is one group).
	Groups []rule.Group `json:"groups,omitempty"`
	// Value and Currency are nil when the rule sets none (no value; the
	// account's currency).
	Value    *ValueSpec    `json:"value,omitempty"`
	Currency *CurrencySpec `json:"currency,omitempty"`
	// TestEventCode, when set, sends this rule's events to Meta's Test
	// Events tool, whatever the dataset's mode.
	TestEventCode string `json:"test_event_code,omitempty"`
	// Enabled is true unless the file says false.
	Enabled bool `json:"enabled"`
}

// Problem is one thing wrong with a setup file, at a JSON path such as
// datasets[1].pixel_id.
type Problem struct {
	Path    string
	Message string
}

// String is "path: message", or the message alone for the whole file.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// maxFileSize bounds what Decode reads; a real setup is a few KiB.
const maxFileSize = 10 << 20

// later names the top-level sections that later versions add, so a file
// written for them is refused with a clear word instead of half-applied.
var later = map[string]bool{}

// bom is the UTF-8 byte-order mark some editors write at the start of a
// file.
var bom = []byte("\xef\xbb\xbf")

// Decode reads a setup file strictly: unknown fields, fields given twice,
// values of the wrong type and text that is not valid UTF-8 are problems,
// each with its JSON path. A UTF-8 byte-order mark at the start is
// skipped. The File is only meaningful when there are no problems.
func Decode(r io.Reader) (File, []Problem) {
	var f File
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return f, []Problem{{Message: fmt.Sprintf("cannot read the file: %v", err)}}
	}
	if len(data) > maxFileSize {
		return f, []Problem{{Message: fmt.Sprintf("the file is larger than %d MiB", maxFileSize>>20)}}
	}
	data = bytes.TrimPrefix(data, bom)
	if p, ok := checkSyntax(data); !ok {
		return f, []Problem{p}
	}
	d := decoder{}
	top, ok := d.object("", data, `must be one JSON object, like {"account": {...}, "datasets": [...]}`)
	if !ok {
		return f, d.problems
	}
	for _, m := range top {
		switch m.key {
		case "account":
			d.account(m.key, m.value, &f.Account)
		case "datasets":
			f.Datasets = d.datasets(m.key, m.value)
		case "destinations":
			f.Destinations = d.datasets(m.key, m.value)
		case "junk":
			f.Junk = d.junk(m.key, m.value)
		case "send_rules":
			f.SendRules = d.rules(m.key, m.value)
		case "stages":
			f.Stages = d.stages(m.key, m.value)
		case "stage_mappings":
			f.StageMappings = d.mappings(m.key, m.value)
		case "sequences":
			f.Sequences = d.sequences(m.key, m.value)
		case "crm_connections":
			f.CRMConnections = d.crmConnections(m.key, m.value)
		case "site_keys":
			f.SiteKeys = d.siteKeys(m.key, m.value)
		default:
			if later[m.key] {
				d.add(m.key, "not supported by this version of leadsignal yet")
			} else {
				d.add(m.key, "unknown field; the file has account, datasets, destinations, junk, send_rules, stages, stage_mappings, sequences, crm_connections and site_keys")
			}
		}
	}
	return f, d.problems
}

// checkSyntax reports malformed JSON with its line and column, and
// anything after the top-level value.
func checkSyntax(data []byte) (Problem, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	if errors.Is(err, io.EOF) {
		return Problem{Message: "the file is empty"}, false
	}
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return Problem{Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))}, false
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Problem{Message: "invalid JSON: the file ends in the middle of a value"}, false
		}
		return Problem{Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := position(data, dec.InputOffset())
		return Problem{Message: fmt.Sprintf("invalid JSON at line %d, column %d: more data after the top-level object", line, col)}, false
	}
	return Problem{}, true
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// member is one key and its raw value, in file order.
type member struct {
	key   string
	value json.RawMessage
}

// field is a known key of an object and where its value goes.
type field struct {
	name string
	dst  any    // pointer to a string kind, bool, float64 or []string
	want string // "a string", "true or false", ...
}

// decoder collects problems while it walks the document.
type decoder struct {
	problems []Problem
}

func (d *decoder) add(path, msg string) {
	d.problems = append(d.problems, Problem{Path: path, Message: msg})
}

// object splits a JSON object into its members; notObject is the problem
// when raw is something else. null is an empty object.
func (d *decoder) object(path string, raw json.RawMessage, notObject string) ([]member, bool) {
	if isNull(raw) {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		d.add(path, notObject+", not "+kind(raw))
		return nil, false
	}
	var ms []member
	seen := map[string]bool{}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			d.add(path, "invalid JSON object")
			return nil, false
		}
		key, _ := tok.(string)
		// The decoder turns what is not UTF-8 into U+FFFD silently.
		badKey := mangled(raw[start:dec.InputOffset()], key)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			d.add(join(path, key), "invalid JSON value")
			return nil, false
		}
		if badKey {
			d.add(path, "a key "+notUTF8)
			continue
		}
		if seen[key] {
			d.add(join(path, key), "given twice")
			continue
		}
		seen[key] = true
		ms = append(ms, member{key: key, value: v})
	}
	return ms, true
}

// fields decodes an object whose keys are all known.
func (d *decoder) fields(path string, raw json.RawMessage, notObject string, fs []field) map[string]bool {
	ms, ok := d.object(path, raw, notObject)
	if !ok {
		return nil
	}
	present := map[string]bool{}
	for _, m := range ms {
		i := -1
		for j, f := range fs {
			if f.name == m.key {
				i = j
			}
		}
		p := join(path, m.key)
		if i < 0 {
			d.add(p, "unknown field; known fields are "+names(fs))
			continue
		}
		present[m.key] = true
		if err := json.Unmarshal(m.value, fs[i].dst); err != nil {
			d.add(p, "must be "+fs[i].want+", not "+kind(m.value))
			continue
		}
		if _, ok := fs[i].dst.(*json.RawMessage); ok {
			continue // decoded, and checked, by the caller
		}
		if _, ok := fs[i].dst.(*[]json.RawMessage); ok {
			continue
		}
		ss := decodedStrings(fs[i].dst)
		if mangled(m.value, ss...) {
			d.add(p, notUTF8)
		} else if slices.ContainsFunc(ss, func(s string) bool { return strings.ContainsRune(s, 0) }) {
			// No setting takes one, and Postgres cannot store it.
			d.add(p, `contains a NUL character (\u0000); remove it`)
		}
	}
	return present
}

func (d *decoder) account(path string, raw json.RawMessage, a *AccountSpec) {
	a.present = d.fields(path, raw, `must be an object like {"slug": "acme", "name": "Acme"}`, []field{
		{"slug", &a.Slug, "a string"},
		{"name", &a.Name, "a string"},
		{"timezone", &a.Timezone, "a string"},
		{"default_country", &a.DefaultCountry, "a string"},
		{"currency", &a.Currency, "a string"},
		{"crm_name", &a.CRMName, "a string"},
		{"website_url", &a.WebsiteURL, "a string: a URL like https://www.example.com/contact"},
	})
}

func (d *decoder) datasets(path string, raw json.RawMessage) []DatasetSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of datasets, not "+kind(raw))
		return nil
	}
	out := make([]DatasetSpec, len(items))
	for i, item := range items {
		ds := &out[i]
		d.fields(fmt.Sprintf("%s[%d]", path, i), item, `must be an object like {"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}`, []field{
			{"name", &ds.Name, "a string"},
			{"pixel_id", &ds.PixelID, "a string of digits"},
			{"access_token_env", &ds.AccessTokenEnv, "a string: the name of an environment variable"},
			{"app_secret_env", &ds.AppSecretEnv, "a string: the name of an environment variable"},
			{"test_event_code", &ds.TestEventCode, "a string"},
			{"api_version", &ds.APIVersion, "a string like v24.0"},
			{"mode", &ds.Mode, "a string: live, test or dry_run"},
			{"ldu", &ds.LDU, "a string: off, california or always"},
			{"kind", &ds.Kind, "a string: meta, tiktok, pinterest or google"},
			{"event_source", &ds.EventSource, "a string: web, crm or offline"},
			{"event_names", &ds.EventNames, `an object of our event names to the platform's, like {"QualifiedLead": "ApplicationApproval"}`},
			{"login_account", &ds.LoginAccount, "a string: a Google Ads customer id"},
			{"client_id", &ds.ClientID, "a string: an OAuth client id"},
			{"consent", &ds.Consent, "a string: granted or denied"},
		})
	}
	return out
}

func (d *decoder) junk(path string, raw json.RawMessage) junk.Settings {
	ms, ok := d.object(path, raw, `must be an object of signals, like {"too_fast": {"enabled": true, "threshold": 2}}`)
	if !ok {
		return nil
	}
	out := junk.Settings{}
	for _, m := range ms {
		var st junk.Setting
		p := join(path, m.key)
		present := d.fields(p, m.value, `must be an object like {"enabled": true}`, []field{
			{"enabled", &st.Enabled, "true or false"},
			{"threshold", &st.Threshold, "a number"},
			{"keywords", &st.Keywords, "a list of strings"},
		})
		if present != nil && !present["enabled"] {
			d.add(join(p, "enabled"), "required: true or false")
		}
		out[junk.Signal(m.key)] = st
	}
	return out
}

// maxRules bounds the send rules of one file; the rule list of a real
// account is a few dozen at most.
const maxRules = 200

func (d *decoder) rules(path string, raw json.RawMessage) []RuleSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of send rules, not "+kind(raw))
		return nil
	}
	if len(items) > maxRules {
		d.add(path, fmt.Sprintf("use at most %d send rules, not %d", maxRules, len(items)))
		return nil
	}
	out := make([]RuleSpec, len(items))
	for i, item := range items {
		r := &out[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		var conditions, groups, dests []json.RawMessage
		var value, currency json.RawMessage
		var enabled *bool
		d.fields(p, item, `must be an object like {"name": "Qualified leads", "dataset": "Main", "mode": "automatic_match", "event_name": "Lead", ...}`, []field{
			{"name", &r.Name, "a string"},
			{"dataset", &r.Dataset, "a string: the name of a dataset"},
			{"destinations", &dests, destinationsWant},
			{"mode", &r.Mode, "a string: " + joinModes()},
			{"event_name", &r.EventName, "a string like Lead or QualifiedLead"},
			{"action_source", &r.ActionSource, "a string like website or system_generated"},
			{"combinator", &r.Combinator, "a string: and or or"},
			{"conditions", &conditions, "a list of conditions"},
			{"groups", &groups, `a list of groups like {"combinator": "or", "conditions": [...]}`},
			{"value", &value, "a number"},
			{"currency", &currency, "a string"},
			{"test_event_code", &r.TestEventCode, "a string"},
			{"enabled", &enabled, "true or false"},
		})
		r.Enabled = enabled == nil || *enabled
		r.Destinations = d.destinationNames(join(p, "destinations"), dests)
		r.Conditions = d.conditions(join(p, "conditions"), conditions)
		r.Groups = d.groups(join(p, "groups"), groups)
		r.Value = d.value(join(p, "value"), value, false)
		r.Currency = d.currency(join(p, "currency"), currency, false)
	}
	return out
}

func joinModes() string {
	s := make([]string, len(rule.Modes))
	for i, m := range rule.Modes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func (d *decoder) conditions(path string, items []json.RawMessage) []rule.Condition {
	out := make([]rule.Condition, len(items))
	for i, item := range items {
		c := &out[i]
		d.fields(fmt.Sprintf("%s[%d]", path, i), item, `must be an object like {"field": "email_domain", "match_type": "equals", "pattern": "acme.com"}`, []field{
			{"field", &c.Field, "a string: a lead field like email_domain, or fields.<name> for a custom form field"},
			{"match_type", &c.MatchType, "a string like equals or contains"},
			{"pattern", &c.Pattern, "a string (numbers too: \"5000\")"},
		})
	}
	return out
}

// groups reads a rule's groups: each {"combinator", "conditions"}.
func (d *decoder) groups(path string, items []json.RawMessage) []rule.Group {
	if items == nil {
		return nil
	}
	out := make([]rule.Group, len(items))
	for i, item := range items {
		g := &out[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		var conditions []json.RawMessage
		d.fields(p, item, `must be an object like {"combinator": "or", "conditions": [{"field": "utm_campaign", "match_type": "equals", "pattern": "spring"}]}`, []field{
			{"combinator", &g.Combinator, "a string: and or or"},
			{"conditions", &conditions, "a list of conditions"},
		})
		g.Conditions = d.conditions(join(p, "conditions"), conditions)
	}
	return out
}

// notUTF8 is the problem of text that is not valid UTF-8.
const notUTF8 = "is not valid UTF-8 text; save the file as UTF-8"

// decodedStrings lists what a decoded value holds as text: a string, or
// the strings of a list; nothing for other values.
func decodedStrings(dst any) []string {
	v := reflect.Indirect(reflect.ValueOf(dst))
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			if e := v.Index(i); e.Kind() == reflect.String {
				out = append(out, e.String())
			}
		}
		return out
	case reflect.Map:
		var out []string
		for it := v.MapRange(); it.Next(); {
			if it.Key().Kind() == reflect.String && it.Value().Kind() == reflect.String {
				out = append(out, it.Key().String(), it.Value().String())
			}
		}
		return out
	}
	return nil
}

// mangled reports whether decoding the JSON raw into the strings ss
// replaced something with U+FFFD, as encoding/json does silently with
// bytes that are not UTF-8 and with \u escapes of half a surrogate pair:
// the strings hold more U+FFFD than raw writes, as itself or as \ufffd.
func mangled(raw []byte, ss ...string) bool {
	if !utf8.Valid(raw) {
		return true
	}
	n := 0
	for _, s := range ss {
		n += strings.Count(s, "\ufffd")
	}
	if n == 0 {
		return false
	}
	return n > bytes.Count(raw, []byte("\ufffd"))+bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func names(fs []field) string {
	ns := make([]string, len(fs))
	for i, f := range fs {
		ns[i] = f.name
	}
	return strings.Join(ns, ", ")
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// kind names the JSON type of a value for messages; it never shows the
// value, which might be a secret pasted in the wrong place.
func kind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}
