package destination

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CheckEvents is nil when each event of a batch is one JSON object, as
// the platforms take them in their lists; else it names the first that is
// not.
func CheckEvents(events []json.RawMessage) error {
	for i, e := range events {
		e = bytes.TrimSpace(e)
		if len(e) < 2 || e[0] != '{' || e[len(e)-1] != '}' {
			return fmt.Errorf("event %d is not a JSON object", i)
		}
	}
	return nil
}

// CheckBatch is nil when a batch holds 1 to max events, each one JSON
// object (CheckEvents); else it says what is wrong, after pkg, the
// client's name.
func CheckBatch(pkg string, events []json.RawMessage, max int) error {
	switch {
	case len(events) == 0:
		return fmt.Errorf("%s: no events to send", pkg)
	case len(events) > max:
		return fmt.Errorf("%s: %d events in one batch, at most %d", pkg, len(events), max)
	}
	if err := CheckEvents(events); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return nil
}

// CheckToken is nil when token can go in a request header; else it is
// Unsendable, what naming the token: empty, or with a control character
// (a NUL, a line break), which no header takes and no retry mends.
func CheckToken(what, token string) error {
	if token == "" {
		return &Unsendable{Reason: "no " + what}
	}
	for i := range len(token) {
		if token[i] < 0x20 || token[i] == 0x7f {
			return &Unsendable{Reason: "the " + what + " has a control character; save it again"}
		}
	}
	return nil
}

// WriteEvents writes ready-made events as a JSON array, so a batch of a
// thousand is not decoded and encoded again.
func WriteEvents(b *bytes.Buffer, events []json.RawMessage) {
	b.WriteByte('[')
	for i, e := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(e))
	}
	b.WriteByte(']')
}
