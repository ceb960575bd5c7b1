// Package destination holds what the senders of every ad platform other
// than Meta share with the dispatcher: where a batch goes (Target) and the
// platform's answer as the dispatcher acts on it (Answer). Each platform's
// package (internal/tiktok, internal/pinterest, internal/google) builds its
// events' JSON and implements Sender; the dispatcher keeps one shape of
// claims, batches, holds, pauses and splits for all of them (docs/destinations.md).
package destination

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Target is where a destination's batch goes and with which credentials,
// as the dispatcher opens them from the destination's sealed secrets.
type Target struct {
	// AccountID is the platform's id of where events go: TikTok's pixel
	// code or event set id, Pinterest's ad account id, Google's operating
	// account (10 digits).
	AccountID string
	// Token is the access token: TikTok's Access-Token, Pinterest's
	// conversion token. Google's is made from OAuth.
	Token string
	// Test sends to the platform's test mode: TikTok's test_event_code
	// (TestEventCode), Pinterest's ?test=true, Google's validateOnly.
	Test          bool
	TestEventCode string
	// EventSource is TikTok's event_source: web, crm or offline.
	EventSource string
	// LoginAccount is Google's manager account, when the operating account
	// is reached through one; "" otherwise.
	LoginAccount string
	// OAuth is Google's client and refresh token.
	OAuth OAuth
	// Consent is Google's request-level consent: "CONSENT_GRANTED" or
	// "CONSENT_DENIED" for ad user data and personalisation; "" sends none.
	ConsentAdUserData        string
	ConsentAdPersonalization string
}

// OAuth is an OAuth 2.0 client and the refresh token it was granted.
type OAuth struct {
	ClientID     string
	ClientSecret string
	RefreshToken string
}

// Verdict is what the dispatcher does after a platform's answer.
type Verdict int

// The verdicts.
const (
	// Accepted: the platform took the request. Events listed in
	// Answer.Refused were refused one by one (Pinterest answers per event);
	// the others were taken.
	Accepted Verdict = iota
	// Unavailable: the platform or the network failed, not an event
	// (throttling, 5xx, an outage): the destination is held and the batch
	// waits without spending an attempt.
	Unavailable
	// AuthRefused: the credentials were refused: the destination pauses
	// until a person saves new ones.
	AuthRefused
	// EventRefused: an event made the platform refuse the whole batch: the
	// dispatcher splits it until the bad events are alone.
	EventRefused
	// Refused: refused for a reason no event causes (a wrong account id,
	// no permission): the destination pauses and a person is told.
	Refused
)

// Answer is a platform's answer to one request.
type Answer struct {
	HTTPStatus int
	Verdict    Verdict
	// Received is how many events the platform says it took.
	Received int
	// RequestID is the platform's id of the request, for its support.
	RequestID string
	// Message is the platform's words when it refused something, "" when
	// it took all; never a secret.
	Message string
	// Refused maps the index of each event the platform refused alone to
	// its words, when Verdict is Accepted.
	Refused map[int]string
	// Body is the raw reply for the send log: secrets scrubbed, valid
	// UTF-8, at most MaxLoggedBody bytes.
	Body []byte
}

// MaxLoggedBody is how much of a reply Answer.Body keeps.
const MaxLoggedBody = 4 << 10

// Unsendable is a Sender's error for a batch it sent nothing of because
// the destination's settings cannot make a request (no token, an account
// id the platform cannot take): the dispatcher pauses the destination with
// the reason, where it holds one for any other error (the network).
type Unsendable struct {
	Reason string
}

func (e *Unsendable) Error() string { return e.Reason }

// Sender posts one batch of events, each as its platform's JSON, to a
// platform. The error is for a request that got no answer (the network);
// every answer, refusals included, is an Answer.
type Sender interface {
	Send(ctx context.Context, t Target, events []json.RawMessage) (Answer, error)
}

// DefaultTimeout bounds one request of a platform's client without an HTTP
// client of its own, as capi's does Meta's: a batch of events is about a
// megabyte to upload and process, and a hung connection must still free
// the dispatcher soon. A resend after a timeout is harmless: the platforms
// deduplicate on the event ids.
const DefaultTimeout = 15 * time.Second

var defaultHTTP = &http.Client{Timeout: DefaultTimeout}

// HTTPClient is h, or one with DefaultTimeout when nil, that never follows
// a redirect: it would carry the token elsewhere.
func HTTPClient(h *http.Client) *http.Client {
	if h == nil {
		h = defaultHTTP
	}
	cp := *h
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}
