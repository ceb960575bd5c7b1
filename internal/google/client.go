package google

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
)

// DefaultTimeout bounds one request of a Client or TokenSource with no
// HTTP client of its own: room for a 2,000-event batch while a hung
// connection still frees the dispatcher. A resend after a timeout is
// harmless: Google deduplicates on transactionId.
const DefaultTimeout = destination.DefaultTimeout

// maxReply bounds how much of an ingest reply is read; Google's are small.
const maxReply = 1 << 20

// Consent values of a Target (Data Manager's ConsentStatus).
const (
	ConsentGranted = "CONSENT_GRANTED"
	ConsentDenied  = "CONSENT_DENIED"
)

// Client posts batches of prepared events to the Data Manager API. The
// zero value is ready to use; set its fields before the first Send and do
// not copy it after.
type Client struct {
	// BaseURL is the API's; "" means DefaultBaseURL.
	BaseURL string
	// TokenURL is the OAuth token endpoint; "" means DefaultTokenURL.
	TokenURL string
	// HTTP is the client requests go through; nil means one with
	// DefaultTimeout. Redirects are never followed (they would carry the
	// access token elsewhere), whatever its CheckRedirect says.
	HTTP *http.Client
	// Now is the clock of the access token cache; nil means time.Now.
	Now func() time.Time

	once   sync.Once
	tokens *TokenSource
}

var _ destination.Sender = (*Client)(nil)

func (c *Client) tokenSource() *TokenSource {
	c.once.Do(func() { c.tokens = &TokenSource{URL: c.TokenURL, HTTP: c.HTTP, Now: c.Now} })
	return c.tokens
}

// Send posts one batch to {BaseURL}/v1/events:ingest with t's access token:
// the events as Prepare made them, one destination per conversion action
// they name (t.AccountID's, through t.LoginAccount when set), HEX encoding,
// t's consent when set, and validateOnly when t.Test. A refused refresh
// token answers AuthRefused and posts nothing. The error is for a batch
// refused before sending (no account, no OAuth, too many events or
// conversion actions) or a request that got no answer; it never holds a
// secret.
func (c *Client) Send(ctx context.Context, t destination.Target, events []json.RawMessage) (destination.Answer, error) {
	if err := checkTarget(t, len(events)); err != nil {
		return destination.Answer{}, err
	}
	dests, err := destinations(t, events)
	if err != nil {
		return destination.Answer{}, err
	}
	body, err := requestBody(t, dests, events)
	if err != nil {
		return destination.Answer{}, err
	}
	ts := c.tokenSource()
	for try := 0; ; try++ {
		tok, fresh, err := ts.token(ctx, t.OAuth)
		var te *TokenError
		if errors.As(err, &te) {
			return tokenAnswer(te), nil
		}
		if err != nil {
			return destination.Answer{}, err
		}
		a, err := c.post(ctx, body, tok, len(events), []string{t.OAuth.ClientSecret, t.OAuth.RefreshToken, tok})
		if err != nil || a.HTTPStatus != http.StatusUnauthorized {
			return a, err
		}
		ts.forget(t.OAuth, tok)
		if fresh || try > 0 {
			return a, nil
		}
		// Google may revoke an access token before it expires: try once
		// more with a new one before the destination pauses.
	}
}

func (c *Client) post(ctx context.Context, body []byte, token string, n int, secrets []string) (destination.Answer, error) {
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	endpoint := base + "/v1/events:ingest"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("google: post "+endpoint, err, secrets)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := destination.HTTPClient(c.HTTP).Do(req)
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("google: post "+endpoint, err, secrets)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxReply))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("google: read reply of "+endpoint, err, secrets)
	}
	return answer(res.StatusCode, raw, n, secrets), nil
}

// checkTarget refuses what Google would refuse of every batch of t, and
// what no request can be made of.
func checkTarget(t destination.Target, n int) error {
	switch {
	case t.AccountID == "":
		return &destination.Unsendable{Reason: "no Google Ads account id"}
	case len(t.AccountID) != 10 || !normalize.AllDigits(t.AccountID):
		return &destination.Unsendable{Reason: fmt.Sprintf("the Google Ads account id %q is not 10 digits", t.AccountID)}
	case t.LoginAccount != "" && (len(t.LoginAccount) != 10 || !normalize.AllDigits(t.LoginAccount)):
		return &destination.Unsendable{Reason: fmt.Sprintf("the manager account id %q is not 10 digits", t.LoginAccount)}
	case t.OAuth.ClientID == "" || t.OAuth.ClientSecret == "" || t.OAuth.RefreshToken == "":
		return &destination.Unsendable{Reason: "no OAuth client id, client secret or refresh token"}
	case !validConsent(t.ConsentAdUserData) || !validConsent(t.ConsentAdPersonalization):
		return fmt.Errorf("google: consent %q, %q: want %s, %s or none",
			t.ConsentAdUserData, t.ConsentAdPersonalization, ConsentGranted, ConsentDenied)
	case n == 0:
		return errors.New("google: no events to send")
	case n > MaxBatch:
		return fmt.Errorf("google: %d events in one batch, at most %d", n, MaxBatch)
	}
	return nil
}

func validConsent(s string) bool { return s == "" || s == ConsentGranted || s == ConsentDenied }

// productAccount is Data Manager's ProductAccount.
type productAccount struct {
	AccountType string `json:"accountType"`
	AccountID   string `json:"accountId"`
}

// destinationJSON is one conversion action of t's operating account;
// events name it by its reference, the conversion action's id.
type destinationJSON struct {
	Reference            string          `json:"reference"`
	OperatingAccount     productAccount  `json:"operatingAccount"`
	LoginAccount         *productAccount `json:"loginAccount,omitempty"`
	ProductDestinationID string          `json:"productDestinationId"`
}

// destinations are the conversion actions the events name in their
// destinationReferences, in the order they first appear. An event that
// names none would go to every destination of the request, so it is an
// error, as is one that is not a JSON object.
func destinations(t destination.Target, events []json.RawMessage) ([]destinationJSON, error) {
	var out []destinationJSON
	seen := map[string]bool{}
	for i, raw := range events {
		var e struct {
			DestinationReferences []string `json:"destinationReferences"`
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil {
			return nil, fmt.Errorf("google: event %d is not a JSON object", i)
		}
		if len(e.DestinationReferences) == 0 {
			return nil, fmt.Errorf("google: event %d names no conversion action", i)
		}
		for _, ref := range e.DestinationReferences {
			if !normalize.AllDigits(ref) {
				return nil, fmt.Errorf("google: event %d names conversion action %q, not digits", i, ref)
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			d := destinationJSON{Reference: ref, ProductDestinationID: ref,
				OperatingAccount: productAccount{AccountType: "GOOGLE_ADS", AccountID: t.AccountID}}
			if t.LoginAccount != "" {
				d.LoginAccount = &productAccount{AccountType: "GOOGLE_ADS", AccountID: t.LoginAccount}
			}
			out = append(out, d)
		}
	}
	if len(out) > MaxDestinations {
		return nil, &destination.Unsendable{Reason: fmt.Sprintf("%d conversion actions in one batch, at most %d", len(out), MaxDestinations)}
	}
	return out, nil
}

type consent struct {
	AdUserData        string `json:"adUserData,omitempty"`
	AdPersonalization string `json:"adPersonalization,omitempty"`
}

// requestHead is the ingest request but its events.
type requestHead struct {
	Destinations []destinationJSON `json:"destinations"`
	Encoding     string            `json:"encoding"`
	Consent      *consent          `json:"consent,omitempty"`
	ValidateOnly bool              `json:"validateOnly,omitempty"`
}

// requestBody writes the ingest request around the ready-made events, so
// a 2,000-event batch is not decoded and encoded again.
func requestBody(t destination.Target, dests []destinationJSON, events []json.RawMessage) ([]byte, error) {
	h := requestHead{Destinations: dests, Encoding: "HEX", ValidateOnly: t.Test}
	if t.ConsentAdUserData != "" || t.ConsentAdPersonalization != "" {
		h.Consent = &consent{AdUserData: t.ConsentAdUserData, AdPersonalization: t.ConsentAdPersonalization}
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	n := len(head) + 16
	for _, e := range events {
		n += len(e) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.Write(head[:len(head)-1]) // without its closing brace
	b.WriteString(`,"events":[`)
	for i, e := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(e))
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// tokenAnswer is the Answer to a batch whose refresh token could not be
// exchanged: nothing was posted.
func tokenAnswer(e *TokenError) destination.Answer {
	a := destination.Answer{HTTPStatus: e.HTTPStatus, Verdict: destination.Unavailable, Message: e.message(), Body: e.Body}
	if e.Refused() {
		a.Verdict = destination.AuthRefused
	}
	return a
}
