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
)

// MaxBody is the largest delivery Parse reads; the hook refuses larger
// ones before (413).
const MaxBody = 1 << 20

// Parse splits a delivery's body into the stage changes it carries
// (docs/crm.md, "What a delivery carries"), and counts the events it
// acknowledges but ignores (not stage changes). fields is a generic
// connection's mapping (CheckFields); the other kinds ignore it. An error
// means the body is not JSON of the kind's shape: the hook answers 400.
func Parse(kind Kind, body []byte, fields map[string]string) (changes []Change, ignored int, err error) {
	if len(body) > MaxBody {
		return nil, 0, fmt.Errorf("the body is over %d bytes", MaxBody)
	}
	if !json.Valid(body) {
		return nil, 0, errors.New("the body is not JSON")
	}
	switch kind {
	case HubSpot:
		return parseHubSpot(body)
	case Pipedrive:
		return parsePipedrive(body)
	case Generic:
		return parseGeneric(body, fields)
	}
	return nil, 0, fmt.Errorf("unknown kind %q", kind)
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
