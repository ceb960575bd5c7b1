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

// AllDigits reports whether s is one or more ASCII digits, as the
// platforms' ids are (Meta's lead ids, Google's accounts and actions).
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
