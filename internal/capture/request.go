// Package capture turns one posted lead into a stored lead: it decodes and
// validates the request, normalises the match keys, runs the junk signals
// and writes the lead (and, later, its queued events) in one transaction.
package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
)

// MaxBody is the largest request body the ingest API reads.
const MaxBody = 64 << 10

// Request is the body of POST /api/v1/leads (docs/api.md, "Fields").
type Request struct {
	ExternalID  *string `json:"external_id"`
	Email       string  `json:"email"`
	Phone       string  `json:"phone"`
	FirstName   string  `json:"first_name"`
	LastName    string  `json:"last_name"`
	City        string  `json:"city"`
	State       string  `json:"state"`
	Zip         string  `json:"zip"`
	Country     string  `json:"country"`
	Gender      string  `json:"gender"`
	DateOfBirth string  `json:"date_of_birth"`
	Message     string  `json:"message"`
	FBCLID      string  `json:"fbclid"`
	FBC         string  `json:"fbc"`
	FBP         string  `json:"fbp"`
	// Click ids of other platforms, kept as the lead's custom fields of
	// the same names (ClickIDs).
	GCLID           string         `json:"gclid"`
	GBRAID          string         `json:"gbraid"`
	WBRAID          string         `json:"wbraid"`
	TTCLID          string         `json:"ttclid"`
	TTP             string         `json:"ttp"`
	EPIK            string         `json:"epik"`
	LiFatID         string         `json:"li_fat_id"`
	MSCLKID         string         `json:"msclkid"`
	ClientIP        string         `json:"client_ip_address"`
	ClientUserAgent string         `json:"client_user_agent"`
	EventSourceURL  string         `json:"event_source_url"`
	FillSeconds     *float64       `json:"fill_seconds"`
	Honeypot        string         `json:"honeypot"`
	Partial         bool           `json:"partial"`
	MetaLeadID      string         `json:"meta_lead_id"`
	Source          string         `json:"source"`
	CreatedAt       string         `json:"created_at"`
	Fields          map[string]any `json:"fields"`
}

// Error is a request the API refuses, in the API's error shape (docs/api.md,
// "Errors").
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

func badRequest(code, field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_field", Field: field, Message: fmt.Sprintf(format, args...)}
}

// Decode reads one JSON lead. It refuses, with 400, bodies over MaxBody,
// malformed JSON, values of the wrong type, unknown top-level keys (named,
// so an integration's typo shows at once) and trailing data.
func Decode(r io.Reader) (Request, *Error) {
	var req Request
	if err := decodeJSON(r, &req); err != nil {
		return Request{}, err
	}
	return req, nil
}

// decodeJSON reads one JSON object of an ingest API call into v, as
// Decode describes.
func decodeJSON(r io.Reader, v any) *Error {
	body, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return badRequest("unreadable_body", "", "the request body could not be read")
	}
	if len(body) > MaxBody {
		return badRequest("body_too_large", "", "the request body is larger than %d KiB", MaxBody>>10)
	}
	// A UTF-8 byte order mark, which some Windows tools write before a
	// file's JSON, is ignored, as RFC 8259 (section 8.1) allows.
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	start := bytes.TrimSpace(body)
	if len(start) == 0 {
		return badRequest("empty_body", "", "the request body is empty; send a JSON object")
	}
	if start[0] != '{' && start[0] != '[' {
		// A form's key=value pairs, XML, plain text: not JSON at all, said
		// so rather than as the decoder's first invalid character.
		return badRequest("malformed_json", "", "the body must be one JSON object, {...}, not text starting %q", name.Cut(string(start), 20))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return badRequest("malformed_json", "", "the body must hold one JSON object and nothing after it")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("malformed_json", "", "the body must hold one JSON object and nothing after it")
	}
	return nil
}

var unknownFieldRE = regexp.MustCompile(`^json: unknown field "(.*)"$`)

func decodeError(err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("malformed_json", "", "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return badRequest("malformed_json", "", "the body must be a JSON object")
		}
		if n, ok := strings.CutPrefix(typ.Value, "number "); ok {
			// A JSON number the field's type cannot hold.
			n = name.Cut(n, 40)
			switch typ.Type.Kind() {
			case reflect.Float64, reflect.Float32:
				return badRequest("wrong_type", field, "%s is out of range: %s", field, n)
			case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
				return badRequest("wrong_type", field, "%s must be a whole number up to %d, not %s", field,
					int64(1)<<(typ.Type.Bits()-1)-1, n)
			}
		}
		return badRequest("wrong_type", field, "%s must be a JSON %s, not %s", field, jsonType(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed_json", "", "the JSON ends too early")
	}
	if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
		return badRequest("unknown_field", m[1], "unknown field %q; see the ingest API's field list", m[1])
	}
	return badRequest("malformed_json", "", "malformed JSON: %s", err.Error())
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float64", "float32", "int", "int64":
		return "number"
	case "map", "struct":
		return "object"
	case "ptr":
		return "string or null"
	}
	return kind
}

// Limits on single values; the body limit bounds the total.
const (
	maxShort   = 500
	maxMessage = 20000
	maxFields  = 100
)

var metaLeadIDRE = regexp.MustCompile(`^[0-9]{15,17}$`)

// Validated is a request that passed validation, with its parsed values.
type Validated struct {
	Request
	Source    models.Source
	CreatedAt time.Time
	// Fields are the custom fields as strings, the way rules read them.
	Fields map[string]string
	// Test marks a test lead (models.Lead.Test): the site snippet
	// section's "Send a test lead" sets it; no request body can.
	Test bool
}

// Validate checks the values of a decoded request. A bad created_at or a
// NUL character is a 400 (a malformed value); the rest are 422 with the
// field named. The Validated request holds its text cleaned (see clean), so
// the stored lead, its pages, the CSV export and its events see clean text.
func (r Request) Validate(now time.Time) (Validated, *Error) {
	if err := r.checkCharacters(); err != nil {
		return Validated{Request: r}, err
	}
	r = r.clean()
	v := Validated{Request: r, Source: models.SourceWebsite, CreatedAt: now.UTC()}
	if r.CreatedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, r.CreatedAt)
		if err != nil {
			return v, badRequest("invalid_created_at", "created_at", "created_at must be an RFC 3339 time like 2026-12-01T14:03:00Z")
		}
		if t.After(now.Add(5 * time.Minute)) {
			return v, invalid("created_at", "created_at is in the future")
		}
		v.CreatedAt = t.UTC()
	}
	if r.Source != "" {
		v.Source = models.Source(r.Source)
		if !v.Source.Valid() {
			return v, invalid("source", "source must be one of website, instant_form, crm, whatsapp, phone")
		}
	}
	if r.ExternalID != nil {
		id := strings.TrimSpace(*r.ExternalID)
		if id == "" {
			return v, invalid("external_id", "external_id must not be empty; leave it out instead")
		}
		v.ExternalID = &id
	}
	if r.MetaLeadID != "" && !metaLeadIDRE.MatchString(r.MetaLeadID) {
		return v, invalid("meta_lead_id", "meta_lead_id must be Meta's 15 to 17 digit lead id")
	}
	if r.FillSeconds != nil && *r.FillSeconds < 0 {
		return v, invalid("fill_seconds", "fill_seconds must not be negative")
	}
	for _, f := range v.texts() {
		if len(*f.value) > f.max {
			return v, invalid(f.name, "%s is longer than %d bytes", f.name, f.max)
		}
	}
	if r.EventSourceURL != "" && !pageURL(r.EventSourceURL) {
		return v, invalid("event_source_url", "event_source_url must be an absolute http or https URL with a host and no user name or password, like https://example.com/quote")
	}
	if len(r.Fields) > maxFields {
		return v, invalid("fields", "at most %d custom fields", maxFields)
	}
	v.Fields = make(map[string]string, len(r.Fields))
	for rawKey, val := range r.Fields {
		k := cleanLine(rawKey)
		if strings.TrimSpace(k) == "" || len(k) > 100 {
			return v, invalid("fields", "custom field names must be 1 to 100 characters")
		}
		if _, taken := v.Fields[k]; taken {
			return v, invalid("fields", "custom field names %q are the same once control characters are removed", k)
		}
		s, ok := scalar(val)
		if !ok {
			return v, invalid("fields."+k, "custom field %q must be a string, number, boolean or null", k)
		}
		s = cleanLine(s)
		if len(s) > maxShort*4 {
			return v, invalid("fields."+k, "custom field %q is longer than %d bytes", k, maxShort*4)
		}
		v.Fields[k] = s
	}
	if err := v.takeClickIDs(); err != nil {
		return v, err
	}
	if strings.TrimSpace(r.Email) == "" && strings.TrimSpace(r.Phone) == "" && strings.TrimSpace(r.FBC) == "" &&
		strings.TrimSpace(v.FBCLID) == "" && r.MetaLeadID == "" && v.ExternalID == nil {
		return v, &Error{Status: http.StatusUnprocessableEntity, Code: "no_contact_key",
			Message: "a lead needs at least one of email, phone, fbc, fbclid, meta_lead_id or external_id"}
	}
	return v, nil
}

// textField is one free-text value of a request, by its API name, with
// the most bytes it may hold.
type textField struct {
	name  string
	value *string
	max   int
}

// texts are the request's free-text values, pointing into r, but for the
// custom fields. message may hold lines; event_source_url must be a URL and
// is kept as sent; the rest are one line each.
func (r *Request) texts() []textField {
	t := []textField{
		{"email", &r.Email, maxShort}, {"phone", &r.Phone, maxShort}, {"first_name", &r.FirstName, maxShort},
		{"last_name", &r.LastName, maxShort}, {"city", &r.City, maxShort}, {"state", &r.State, maxShort},
		{"zip", &r.Zip, maxShort}, {"country", &r.Country, maxShort}, {"gender", &r.Gender, maxShort},
		{"date_of_birth", &r.DateOfBirth, maxShort}, {"message", &r.Message, maxMessage},
		{"fbclid", &r.FBCLID, maxShort}, {"fbc", &r.FBC, maxShort}, {"fbp", &r.FBP, maxShort},
		{"client_ip_address", &r.ClientIP, maxShort}, {"client_user_agent", &r.ClientUserAgent, 2000},
		{"event_source_url", &r.EventSourceURL, 4000}, {"honeypot", &r.Honeypot, maxShort},
		{"meta_lead_id", &r.MetaLeadID, maxShort}, {"source", &r.Source, maxShort}, {"created_at", &r.CreatedAt, maxShort},
	}
	for _, c := range r.clickIDs() {
		t = append(t, textField{c.name, c.value, maxShort})
	}
	if r.ExternalID != nil {
		t = append(t, textField{"external_id", r.ExternalID, maxShort})
	}
	return t
}

// checkCharacters refuses text that is not UTF-8 (422) and text with a NUL
// character (400): Postgres cannot store NUL in text at all, and no form
// sends one, so it is a broken client rather than a person's typing.
func (r Request) checkCharacters() *Error {
	for _, f := range r.texts() {
		if err := checkText(f.name, f.name, *f.value); err != nil {
			return err
		}
	}
	for k, val := range r.Fields {
		if err := checkText("fields", "a custom field name", k); err != nil {
			return err
		}
		if s, ok := val.(string); ok {
			if err := checkText("fields."+k, fmt.Sprintf("custom field %q", k), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText refuses text that is not UTF-8 (422) and text with a NUL
// character (400), what naming the value in the message.
func checkText(field, what, value string) *Error {
	if !utf8.ValidString(value) {
		return invalid(field, "%s is not valid UTF-8", what)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return badRequest("invalid_character", field, "%s contains a NUL character (\\u0000), which cannot be stored", what)
	}
	return nil
}

// clean returns r with its text cleaned: message by cleanMessage,
// event_source_url untouched (pageURL refuses what cleaning would hide), the
// rest by cleanLine. The custom fields are cleaned where Validate reads them.
func (r Request) clean() Request {
	if r.ExternalID != nil {
		id := *r.ExternalID // the caller's string stays as it was
		r.ExternalID = &id
	}
	for _, f := range r.texts() {
		switch f.name {
		case "message":
			*f.value = cleanMessage(*f.value)
		case "event_source_url":
		default:
			*f.value = cleanLine(*f.value)
		}
	}
	return r
}

// Invisible reports whether r is a control character (C0, DEL, C1) or a
// format character (Unicode's Cf: bidi marks, embeddings, overrides and
// isolates, zero-width spaces, the byte-order mark, soft hyphens, tag
// characters). They are invisible, and written raw into a page or a CSV
// file they garble it or disguise text: a right-to-left override shows
// "gpj.exe" as "exe.jpg", tag characters smuggle hidden text. The joiners
// U+200C and U+200D stay: Persian words and emoji need them.
func Invisible(r rune) bool {
	if r == '\u200c' || r == '\u200d' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// The Unicode line and paragraph separators are line breaks that most
// software does not show as one.
const (
	lineSep = '\u2028'
	paraSep = '\u2029'
)

// cleanLine removes the invisible characters from a one-line value. A tab
// or a line break becomes a space rather than nothing, so that the words
// either side stay apart ("New\nYork" is "New York").
func cleanLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == lineSep || r == paraSep:
			return ' '
		case Invisible(r):
			return -1
		}
		return r
	}, s)
}

// cleanMessage removes the invisible characters from a message but for
// tabs and line breaks, and writes every line break as \n: \r\n (Windows),
// a lone \r (old Macs) and U+2028 and U+2029 too.
func cleanMessage(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r' || r == lineSep || r == paraSep:
			return '\n'
		case r == '\t' || r == '\n':
			return r
		case Invisible(r):
			return -1
		}
		return r
	}, s)
}

// pageURL reports whether s can be the page a lead was captured on: an
// absolute http or https URL with a host and no user name or password.
// event_source_url goes to Meta as the event's page and is shown with the
// lead, so anything else (javascript:alert(1), a relative path, text with
// spaces or control characters) is refused rather than passed on.
func pageURL(s string) bool {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || Invisible(r) }) >= 0 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.User == nil
}

func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case nil:
		return "", true
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	}
	return "", false
}

// ClickIDs are the query parameters of a landing page's URL that carry an
// ad platform's click id (DESIGN.md, "Ingest API"): Meta's first, whose
// fbclid the lead keeps in its own column; the others are kept as the
// lead's custom fields of the same names.
var ClickIDs = []string{"fbclid", "gclid", "gbraid", "wbraid", "ttclid", "ttp", "epik", "li_fat_id", "msclkid"}

// clickIDs are the request's click id values by their API names, in
// ClickIDs' order, pointing into r.
func (r *Request) clickIDs() []textField {
	return []textField{{"gclid", &r.GCLID, maxShort}, {"gbraid", &r.GBRAID, maxShort}, {"wbraid", &r.WBRAID, maxShort},
		{"ttclid", &r.TTCLID, maxShort}, {"ttp", &r.TTP, maxShort}, {"epik", &r.EPIK, maxShort},
		{"li_fat_id", &r.LiFatID, maxShort}, {"msclkid", &r.MSCLKID, maxShort}}
}

// takeClickIDs fills each click id the request lacks from its
// event_source_url's query, as a landing page carries them, and keeps the
// ones other than fbclid as custom fields, unless a custom field of that
// name was sent.
func (v *Validated) takeClickIDs() *Error {
	var q url.Values
	if u, err := url.Parse(v.EventSourceURL); err == nil && v.EventSourceURL != "" {
		q = u.Query()
	}
	fromURL := func(name string, value *string) {
		if strings.TrimSpace(*value) == "" {
			*value = cleanLine(q.Get(name))
		}
	}
	fromURL("fbclid", &v.FBCLID)
	if len(v.FBCLID) > maxShort {
		return invalid("event_source_url", "the fbclid of event_source_url is longer than %d bytes", maxShort)
	}
	for _, c := range v.clickIDs() {
		fromURL(c.name, c.value)
		if *c.value == "" {
			continue
		}
		if len(*c.value) > c.max {
			return invalid("event_source_url", "the %s of event_source_url is longer than %d bytes", c.name, c.max)
		}
		if _, sent := v.Fields[c.name]; !sent {
			if len(v.Fields) >= maxFields {
				return invalid("fields", "at most %d custom fields, the click ids of other platforms included", maxFields)
			}
			v.Fields[c.name] = *c.value
		}
	}
	return nil
}

// MaxCollectBody bounds a body of the collect API (DecodeCollect): a
// form's lead is a few hundred bytes.
const MaxCollectBody = 16 << 10

// browserSet are the fields of the leads API that a browser may not set
// through the collect API: the request itself gives the visitor's address
// and user agent, and a site's lead is a website's, captured now.
var browserSet = []string{"client_ip_address", "client_user_agent", "source", "created_at"}

// DecodeCollect reads and validates a lead that a site's snippet posts
// from a visitor's browser (docs/capture-js.md): the leads API's body, at
// most MaxCollectBody (else 413), without the fields a browser may not set
// (400 not_allowed), with ip and userAgent, the request's own, as the
// visitor's.
func DecodeCollect(r io.Reader, ip, userAgent string, now time.Time) (Validated, *Error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxCollectBody+1))
	if err != nil {
		return Validated{}, badRequest("unreadable_body", "", "the request body could not be read")
	}
	if len(body) > MaxCollectBody {
		return Validated{}, &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: fmt.Sprintf("the request body is larger than %d KiB", MaxCollectBody>>10)}
	}
	req, derr := Decode(bytes.NewReader(body))
	if derr != nil {
		return Validated{}, derr
	}
	for _, f := range req.texts() {
		if slices.Contains(browserSet, f.name) && *f.value != "" {
			return Validated{}, badRequest("not_allowed", f.name, "%s is taken from the request itself; leave it out", f.name)
		}
	}
	req.ClientIP, req.ClientUserAgent = ip, userAgent
	return req.Validate(now)
}
