package destination_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/destination"
)

func TestCustomFields(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"", map[string]string{}},
		{"not json", map[string]string{}},
		{`{"gclid":" G1 ","n":3,"ttclid":"T"}`, map[string]string{"gclid": "G1", "ttclid": "T"}},
	}
	for _, tt := range tests {
		got := destination.CustomFields(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("CustomFields(%q) = %v; want %v", tt.in, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("CustomFields(%q)[%s] = %q; want %q", tt.in, k, got[k], v)
			}
		}
	}
}

// TestScrub: a secret goes in every form a URL or JSON body writes it,
// and a logged body is valid UTF-8 cut between characters.
func TestScrub(t *testing.T) {
	const secret = "to/ken+&<x>"
	body := `{"error":"bad token ` + secret + ` ` + url.QueryEscape(secret) + ` to\/ken+\u0026\u003cx\u003e"}`
	if got := destination.Scrub(body, []string{secret}); strings.Contains(got, "to/ken") || strings.Contains(got, "ken%2B") || strings.Contains(got, `to\/ken`) {
		t.Errorf("Scrub left the secret: %s", got)
	}
	long := strings.Repeat("é", destination.MaxLoggedBody)
	got := destination.LogBody([]byte(long+"\xff"), nil)
	if len(got) > destination.MaxLoggedBody || !utf8.Valid(got) {
		t.Errorf("LogBody: %d bytes, valid %v; want at most %d, valid UTF-8", len(got), utf8.Valid(got), destination.MaxLoggedBody)
	}
	err := destination.Scrubbed("post", &url.Error{Op: "Post", URL: "https://x/?token=" + secret, Err: errors.New("refused " + secret)}, []string{secret})
	if strings.Contains(err.Error(), secret) || !strings.HasPrefix(err.Error(), "post: refused") {
		t.Errorf("Scrubbed = %v; want the cause without the secret", err)
	}
}

func TestEvents(t *testing.T) {
	if err := destination.CheckEvents([]json.RawMessage{json.RawMessage(` {"a":1} `), json.RawMessage(`[1]`)}); err == nil || err.Error() != "event 1 is not a JSON object" {
		t.Errorf("CheckEvents = %v; want event 1 named", err)
	}
	var b bytes.Buffer
	destination.WriteEvents(&b, []json.RawMessage{json.RawMessage(` {"a":1}`), json.RawMessage(`{"b":2} `)})
	if b.String() != `[{"a":1},{"b":2}]` {
		t.Errorf("WriteEvents wrote %s", b.String())
	}
}
