package crm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request is what Verify checks: a delivery as the CRM sent it.
type Request struct {
	Method string
	// URL is the full URL as the CRM called it, scheme://host/path?query:
	// HubSpot's v2 and v3 signatures cover it.
	URL    string
	Header http.Header
	// Body is the raw body, before any parsing.
	Body []byte
}

// Why Verify refuses a delivery. Each is wrapped with a short reason that
// is safe to log (it never holds the secret or a signature); all of them
// mean 401 to the sender.
var (
	// ErrNotSigned: the delivery carries no signature or credentials
	// of its kind.
	ErrNotSigned = errors.New("not signed")
	// ErrBadSignature: a signature is there but malformed, or not the
	// secret's.
	ErrBadSignature = errors.New("bad signature")
	// ErrBadCredentials: Basic Auth or a bearer secret is there but
	// malformed, or not the connection's.
	ErrBadCredentials = errors.New("bad credentials")
	// ErrStale: the signed timestamp is more than Tolerance away from now.
	ErrStale = errors.New("stale signature")
)

// Tolerance is how far a signed timestamp may be from now, either way.
const Tolerance = 5 * time.Minute

// PipedriveUser is the Basic Auth user name a Pipedrive webhook sends.
const PipedriveUser = "leadsignal"

// Header names of the signatures and credentials Verify reads.
const (
	hubspotV3Header        = "X-HubSpot-Signature-v3"
	hubspotTimestampHeader = "X-HubSpot-Request-Timestamp"
	hubspotHeader          = "X-HubSpot-Signature"
	hubspotVersionHeader   = "X-HubSpot-Signature-Version"
	// GenericHeader carries a generic delivery's signature (SignGeneric).
	GenericHeader = "X-Leadsignal-Signature"
)

// Verify checks that r comes from the CRM that holds secret, over the raw
// body and in constant time (docs/crm.md, "Authentication"):
//
//   - HubSpot: signature v3 when its header is present (no fallback),
//     else v2 or v1 by X-HubSpot-Signature-Version (v1 when absent);
//   - Pipedrive: Basic Auth, user PipedriveUser, password secret;
//   - Generic: X-Leadsignal-Signature (SignGeneric) when present, else
//     Authorization: Bearer secret.
//
// A signed timestamp must be within Tolerance of now.
func Verify(kind Kind, secret string, r Request, now time.Time) error {
	if secret == "" {
		// An empty secret would let anyone sign.
		return fmt.Errorf("%w: the connection has no secret", ErrBadCredentials)
	}
	switch kind {
	case HubSpot:
		return verifyHubSpot(secret, r, now)
	case Pipedrive:
		return verifyPipedrive(secret, r)
	case Generic:
		return verifyGeneric(secret, r, now)
	}
	return fmt.Errorf("%w: unknown kind %q", ErrNotSigned, kind)
}

func verifyHubSpot(secret string, r Request, now time.Time) error {
	if sig := r.Header.Get(hubspotV3Header); sig != "" {
		ts := r.Header.Get(hubspotTimestampHeader)
		ms, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: hubspot v3 without a timestamp in milliseconds", ErrBadSignature)
		}
		if !within(time.UnixMilli(ms), now) {
			return fmt.Errorf("%w: hubspot v3 timestamp more than 5 minutes from now", ErrStale)
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			return fmt.Errorf("%w: hubspot v3 signature is not base64", ErrBadSignature)
		}
		if !hmac.Equal(got, hubspotV3(secret, r.Method, r.URL, r.Body, ts)) {
			return fmt.Errorf("%w: hubspot v3 signature does not match", ErrBadSignature)
		}
		return nil
	}
	sig := r.Header.Get(hubspotHeader)
	if sig == "" {
		return fmt.Errorf("%w: no hubspot signature header", ErrNotSigned)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: hubspot signature is not hex", ErrBadSignature)
	}
	var want [sha256.Size]byte
	switch v := r.Header.Get(hubspotVersionHeader); v {
	case "", "v1":
		want = sha256.Sum256([]byte(secret + string(r.Body)))
	case "v2":
		want = sha256.Sum256([]byte(secret + r.Method + r.URL + string(r.Body)))
	default:
		return fmt.Errorf("%w: unknown hubspot signature version", ErrBadSignature)
	}
	if !hmac.Equal(got, want[:]) {
		return fmt.Errorf("%w: hubspot signature does not match", ErrBadSignature)
	}
	return nil
}

// hubspotV3 is the v3 signature's bytes (HubSpot's "Validating requests").
func hubspotV3(secret, method, url string, body []byte, ts string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method))
	m.Write([]byte(hubspotURI(url)))
	m.Write(body)
	m.Write([]byte(ts))
	return m.Sum(nil)
}

// hubspotDecoded are the only escapes HubSpot decodes in the URI it signs
// with v3; every other one stays as sent.
var hubspotDecoded = map[string]string{
	"3A": ":", "2F": "/", "3F": "?", "40": "@", "21": "!", "24": "$",
	"27": "'", "28": "(", "29": ")", "2A": "*", "2C": ",", "3B": ";",
}

// hubspotURI decodes the escapes of hubspotDecoded in u, in either case.
func hubspotURI(u string) string {
	if !strings.Contains(u, "%") {
		return u
	}
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		if u[i] == '%' && i+2 < len(u) {
			if c, ok := hubspotDecoded[strings.ToUpper(u[i+1:i+3])]; ok {
				b.WriteString(c)
				i += 2
				continue
			}
		}
		b.WriteByte(u[i])
	}
	return b.String()
}

// SignHubSpotV3 is the X-HubSpot-Signature-v3 header HubSpot sends for a
// request to url with body at the timestamp ts (Unix milliseconds, as the
// X-HubSpot-Request-Timestamp header carries it).
func SignHubSpotV3(secret, method, url string, body []byte, ts string) string {
	return base64.StdEncoding.EncodeToString(hubspotV3(secret, method, url, body, ts))
}

func verifyPipedrive(secret string, r Request) error {
	user, password, err := basicAuth(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	// Both compared, always: which one was wrong is not told by timing.
	okUser := equal(user, PipedriveUser)
	okPassword := equal(password, secret)
	if !okUser || !okPassword {
		return fmt.Errorf("%w: basic auth user or password is not the connection's", ErrBadCredentials)
	}
	return nil
}

// basicAuth reads an Authorization: Basic header; the password is what
// follows the first ':'.
func basicAuth(h string) (user, password string, err error) {
	scheme, cred, _ := strings.Cut(h, " ")
	if h == "" || !strings.EqualFold(scheme, "Basic") {
		return "", "", fmt.Errorf("%w: no basic auth", ErrNotSigned)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", "", fmt.Errorf("%w: basic auth is not base64", ErrBadCredentials)
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", fmt.Errorf("%w: basic auth has no password", ErrBadCredentials)
	}
	return user, password, nil
}

func verifyGeneric(secret string, r Request, now time.Time) error {
	if h := r.Header.Get(GenericHeader); h != "" {
		t, sigs, err := parseGenericHeader(h)
		if err != nil {
			return err
		}
		if !within(time.Unix(t, 0), now) {
			return fmt.Errorf("%w: timestamp more than 5 minutes from now", ErrStale)
		}
		want := genericMAC(secret, t, r.Body)
		for _, sig := range sigs {
			if hmac.Equal(sig, want) {
				return nil
			}
		}
		return fmt.Errorf("%w: no v1 signature matches", ErrBadSignature)
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return fmt.Errorf("%w: no %s header and no bearer secret", ErrNotSigned, GenericHeader)
	}
	if !equal(strings.TrimSpace(token), secret) {
		return fmt.Errorf("%w: bearer secret is not the connection's", ErrBadCredentials)
	}
	return nil
}

// parseGenericHeader reads "t=<unix s>,v1=<hex>[,v1=<hex>...]"; schemes
// other than t and v1 are skipped, as a newer sender may add some.
func parseGenericHeader(h string) (t int64, sigs [][]byte, err error) {
	seenT := false
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			if seenT {
				return 0, nil, fmt.Errorf("%w: %s has two timestamps", ErrBadSignature, GenericHeader)
			}
			seenT = true
			if t, err = strconv.ParseInt(v, 10, 64); err != nil {
				return 0, nil, fmt.Errorf("%w: %s timestamp is not Unix seconds", ErrBadSignature, GenericHeader)
			}
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if !seenT {
		return 0, nil, fmt.Errorf("%w: %s has no timestamp", ErrBadSignature, GenericHeader)
	}
	if len(sigs) == 0 {
		return 0, nil, fmt.Errorf("%w: %s has no hex v1 signature", ErrBadSignature, GenericHeader)
	}
	return t, sigs, nil
}

func genericMAC(secret string, t int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(t, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SignGeneric is the X-Leadsignal-Signature header value a generic sender
// sends with body at t: "t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<body>">".
func SignGeneric(secret string, t time.Time, body []byte) string {
	return fmt.Sprintf("t=%d,v1=%x", t.Unix(), genericMAC(secret, t.Unix(), body))
}

// within reports whether t is at most Tolerance from now, either way.
func within(t, now time.Time) bool {
	d := now.Sub(t)
	return d <= Tolerance && d >= -Tolerance
}

// equal compares two secrets in constant time, their lengths included
// (subtle.ConstantTimeCompare returns early on different lengths).
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return hmac.Equal(ha[:], hb[:])
}
