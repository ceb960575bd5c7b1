package destination

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// LogBody is what the send log may keep of a reply: no secret, valid UTF-8
// (Postgres text refuses anything else), at most MaxLoggedBody bytes, cut
// between characters.
func LogBody(raw []byte, secrets []string) []byte {
	s := strings.ToValidUTF8(Scrub(string(raw), secrets), "\uFFFD")
	if len(s) > MaxLoggedBody {
		cut := MaxLoggedBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return []byte(s)
}

// Redacted replaces secrets in error texts and logged bodies.
const Redacted = "[redacted]"

// Scrub replaces each secret in s, in every form a URL or a JSON body can
// write it, with Redacted.
func Scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		for _, form := range secretForms(sec) {
			s = strings.ReplaceAll(s, form, Redacted)
		}
	}
	return s
}

// secretForms are the ways a secret can be written in a URL or a JSON body:
// as is, URL-escaped, JSON-escaped (Go escapes &<>, PHP also writes / as \/).
func secretForms(sec string) []string {
	forms := []string{sec, url.QueryEscape(sec), url.PathEscape(sec)}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, html := range []bool{true, false} {
		b.Reset()
		enc.SetEscapeHTML(html)
		_ = enc.Encode(sec)
		j := strings.TrimSuffix(b.String(), "\n")
		j = j[1 : len(j)-1] // the quotes
		forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`))
	}
	// Longest first, so that a form containing another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return slices.Compact(forms)
}

// transportError is a failed request, its text scrubbed of secrets. It wraps
// the cause below *url.Error, whose own text would hold the full URL.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return e.msg }
func (e *transportError) Unwrap() error { return e.err }

// Scrubbed is err of the operation op (a request that got no answer) with
// no secret in its text: the cause below *url.Error, whose own text would
// hold the full URL, wrapped unless it names a secret itself.
func Scrubbed(op string, err error, secrets []string) error {
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	msg := cause.Error()
	if clean := Scrub(msg, secrets); clean != msg {
		// The cause itself names a secret: do not hand it out either.
		return &transportError{msg: op + ": " + clean}
	}
	return &transportError{msg: op + ": " + msg, err: cause}
}
