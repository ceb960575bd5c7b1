package crm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxBody is the largest delivery Parse reads; the hook refuses larger
// ones before (413).
const MaxBody = 1 << 20

// Parse splits a delivery's body into the stage changes it carries
// (docs/crm.md, "What a delivery carries"), and counts the events it
// acknowledges but ignores (not stage changes). fields is a generic
// connection's mapping (CheckFields); the other kinds ignore it. An error
// means the body is not JSON: the hook answers 400. A body that is JSON
// but cannot become a stage change, whole or in part, gives changes whose
// Problem says why: they are stored and need a person's attention, never
// refused (a CRM does not retry a 4xx, and the change would be lost).
func Parse(kind Kind, body []byte, fields map[string]string) (changes []Change, ignored int, err error) {
	if len(body) > MaxBody {
		return nil, 0, fmt.Errorf("the body is over %d bytes", MaxBody)
	}
	// A byte order mark is no part of the JSON (RFC 8259 lets a reader
	// ignore it); some senders write one.
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !json.Valid(body) {
		return nil, 0, errors.New("the body is not JSON")
	}
	switch kind {
	case HubSpot:
		changes, ignored = parseHubSpot(body)
	case Pipedrive:
		changes, ignored = parsePipedrive(body)
	case Generic:
		changes = parseGeneric(body, fields)
	default:
		return nil, 0, fmt.Errorf("unknown kind %q", kind)
	}
	var good, odd []Change
	for i, ch := range changes {
		// Postgres keeps no NUL character in text: a change whose ids
		// hold one is kept without them, for a person to look at.
		if strings.ContainsRune(ch.Key+ch.ObjectID+ch.StageID+ch.ChangeID+ch.Currency+ch.PersonID, 0) {
			ch = attention(ch.Body, "a stage, deal, person or change id holds a NUL character (\\u0000)")
			changes[i] = ch
		}
		if ch.Problem != "" {
			odd = append(odd, ch)
		} else {
			good = append(good, ch)
		}
	}
	if len(odd) > maxAttention {
		// One row for the body, not one for each of its odd events.
		odd = []Change{attention(body, "%d of its %d events cannot become stage changes; the first: %s", len(odd), len(changes), odd[0].Problem)}
		changes = append(good, odd...)
	}
	return changes, ignored, nil
}

// maxAttention bounds the changes needing attention that one body makes
// (HubSpot sends at most 100 events a request): past it, the body is kept
// whole, once.
const maxAttention = 100

// attention is a change that cannot be made of body, and why: it is kept
// as it came, keyed by its content, so that a redelivery is stored once.
func attention(body []byte, format string, args ...any) Change {
	body = bytes.TrimSpace(body)
	problem := fmt.Sprintf(format, args...)
	if len(problem) > maxProblem {
		// A sender's field quoted in it may be as long as the body.
		n := maxProblem
		for n > 0 && !utf8.RuneStart(problem[n]) {
			n--
		}
		problem = problem[:n] + "…"
	}
	return Change{Key: "attention:" + bodyHash(body), Body: bytes.Clone(body), Problem: problem}
}

// maxProblem bounds a Problem, in bytes.
const maxProblem = 500

// quote is s quoted for a reason a person reads, cut to 80 bytes: a
// sender's field may be as long as the body.
func quote(s string) string {
	if len(s) > 80 {
		n := 80
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return strconv.Quote(s[:n]) + "…"
	}
	return strconv.Quote(s)
}

// members is raw's members when raw is a JSON object, else nil.
func members(raw json.RawMessage) map[string]json.RawMessage {
	if !isObject(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// get is m's member key read as a scalar: "" when it is absent, null, or
// neither a string nor a number (nor {"value": x}). Senders' fields are
// read one by one, so that one of an odd type costs only itself.
func get(m map[string]json.RawMessage, key string) scalar {
	raw, ok := m[key]
	if !ok {
		return ""
	}
	var s scalar
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// elements is body's array elements, or body itself when it is one object.
func elements(body []byte) ([]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '{' {
		return []json.RawMessage{bytes.Clone(body)}, nil
	}
	var els []json.RawMessage
	if err := json.Unmarshal(body, &els); err != nil {
		return nil, errors.New("the body is not a JSON object or an array of objects")
	}
	for i, el := range els {
		if len(el) == 0 || el[0] != '{' {
			return nil, fmt.Errorf("element %d is not an object", i)
		}
	}
	return els, nil
}

// scalar is a JSON string or number read as its text, so that an id
// written either way is the same, and a 17-digit id keeps every digit
// (never a float64). null and absent are "".
type scalar string

// UnmarshalJSON reads a string or a number; an object {"value": x} (how
// Pipedrive's v1 API nests a deal's person) reads as x.
func (s *scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = ""
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = scalar(strings.TrimSpace(v))
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		*s = scalar(b)
	case len(b) > 0 && b[0] == '{':
		var v struct {
			Value scalar `json:"value"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = v.Value
	default:
		return fmt.Errorf("%s is not a string or a number", b)
	}
	return nil
}

// parseTime reads a time of change: RFC 3339 (or "2006-01-02 15:04:05" in
// UTC), or Unix seconds, or milliseconds when over 1e11 (a number or a
// numeric string).
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	// Pipedrive's v1 objects write times so, in UTC.
	if t, err := time.Parse(time.DateTime, s); err == nil {
		return t, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f > 1e14 {
		return time.Time{}, fmt.Errorf("time %q is not RFC 3339 or Unix seconds or milliseconds", s)
	}
	if f > 1e11 {
		return time.UnixMilli(int64(f)).UTC(), nil
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// parseValue reads an amount written as a number or a numeric string; ""
// is none.
func parseValue(s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("value %q is not a number", s)
	}
	return &f, nil
}
