package pinterest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/destination"
)

// DefaultTimeout bounds one request of a Client without an HTTP client of
// its own: room for a 1000-event batch, while a hung connection still frees
// the dispatcher quickly. A resend after a timeout is harmless: Pinterest
// deduplicates on event_id.
const DefaultTimeout = destination.DefaultTimeout

// maxReadBody bounds how much of a reply is read: an answer to 1000 events
// lists each one's status and messages, a few hundred KB at most.
const maxReadBody = 4 << 20

// Codes of Pinterest's error bodies the Client reads.
const (
	// CodeSomeFailed comes with HTTP 422 when some or all events failed;
	// details lists each event's status.
	CodeSomeFailed = 953
)

// Client posts batches to Pinterest's Conversions API; it is a
// destination.Sender. The zero value is ready to use.
type Client struct {
	// BaseURL is where requests go; "" means DefaultBaseURL.
	BaseURL string
	// HTTP is the client requests go through; nil means one with
	// DefaultTimeout. Redirects are never followed (they would carry the
	// token elsewhere), whatever its CheckRedirect says.
	HTTP *http.Client
}

// endpoint is the events URL of t's ad account; it holds no secret, so it
// may be logged.
func (c *Client) endpoint(t destination.Target) string {
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u := base + "/v5/ad_accounts/" + url.PathEscape(strings.TrimSpace(t.AccountID)) + "/events"
	if t.Test {
		// Pinterest checks and answers test requests alike but records nothing.
		u += "?test=true"
	}
	return u
}

// Send POSTs one batch to {BaseURL}/v5/ad_accounts/{t.AccountID}/events
// (with ?test=true when t.Test) as {"data": [...]}, with t.Token as a
// Bearer token. Each event must be one JSON object, as Prepare gives.
//
// A request that got no answer (timeout, reset, cancelled ctx) returns an
// error that wraps the cause and never holds the token; so does a batch
// refused before sending (no account id or token, no events, more than
// MaxBatch, an event that is not a JSON object). Every answer, refusals
// included, is an Answer.
func (c *Client) Send(ctx context.Context, t destination.Target, events []json.RawMessage) (destination.Answer, error) {
	if err := checkBatch(t, events); err != nil {
		return destination.Answer{}, err
	}
	endpoint := c.endpoint(t)
	secrets := []string{t.Token}
	op := "pinterest: post " + endpoint
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(batchBody(events)))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed(op, err, secrets)
	}
	req.Header.Set("Authorization", "Bearer "+t.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := destination.HTTPClient(c.HTTP).Do(req)
	if err != nil {
		return destination.Answer{}, destination.Scrubbed(op, err, secrets)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxReadBody))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("pinterest: read reply of "+endpoint, err, secrets)
	}
	return answer(res, raw, len(events), secrets), nil
}

func checkBatch(t destination.Target, events []json.RawMessage) error {
	switch {
	case strings.TrimSpace(t.AccountID) == "":
		return &destination.Unsendable{Reason: "no ad account id"}
	}
	if err := destination.CheckToken("conversion token", t.Token); err != nil {
		return err
	}
	return destination.CheckBatch("pinterest", events, MaxBatch)
}

// batchBody writes the request body around the ready-made events, so a
// 1000-event batch is not decoded and encoded again.
func batchBody(events []json.RawMessage) []byte {
	n := len(`{"data":[]}`)
	for _, e := range events {
		n += len(e) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.WriteString(`{"data":`)
	destination.WriteEvents(b, events)
	b.WriteString(`}`)
	return b.Bytes()
}

// results is Pinterest's account of a batch: the body of a 200, the
// details of a 422. Events are in request order.
type results struct {
	NumEventsReceived int           `json:"num_events_received"`
	Events            []eventResult `json:"events"`
}

type eventResult struct {
	Status       string `json:"status"` // "processed" or "failed"
	ErrorMessage string `json:"error_message"`
}

// reply is any body Pinterest answers with: results, or an error's code
// and message (with results in details for code 953).
type reply struct {
	results
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details"`
}

// answer turns Pinterest's reply to a batch of n events into an Answer.
func answer(res *http.Response, raw []byte, n int, secrets []string) destination.Answer {
	a := destination.Answer{
		HTTPStatus: res.StatusCode,
		RequestID:  res.Header.Get("X-Pinterest-Rid"),
		Body:       destination.LogBody(raw, secrets),
	}
	var r reply
	_ = json.Unmarshal(raw, &r) // a body that is not Pinterest's (a proxy's page) leaves r empty
	switch status := res.StatusCode; {
	case status/100 == 2:
		a.Verdict = destination.Accepted
		a.Received = r.NumEventsReceived
		a.Refused = refused(r.Events, n, secrets)
		return a
	case status == http.StatusUnprocessableEntity:
		// Pinterest processed the events it could and lists each one's
		// status: the batch was taken, the failed events were refused.
		var d results
		if r.Code == CodeSomeFailed && json.Unmarshal(r.Details, &d) == nil && len(d.Events) > 0 {
			a.Verdict = destination.Accepted
			a.Received = d.NumEventsReceived
			a.Refused = refused(d.Events, n, secrets)
		} else {
			a.Verdict = destination.EventRefused
		}
	case status == http.StatusBadRequest:
		// Invalid data (code 4196): an event caused it, so the dispatcher
		// splits the batch until the bad event is alone.
		a.Verdict = destination.EventRefused
	case status == http.StatusUnauthorized:
		a.Verdict = destination.AuthRefused
	case status == http.StatusTooManyRequests, status == http.StatusRequestTimeout, status >= 500:
		// Throttling (code 8), the endpoint ramped down (503, code 4197),
		// any outage: the same batch may be taken later.
		a.Verdict = destination.Unavailable
	default:
		// No permission on the ad account (403, code 29), a wrong path, a
		// redirect: no event causes it, a person must look.
		a.Verdict = destination.Refused
	}
	a.Message = message(res.StatusCode, r, secrets)
	return a
}

// refused maps the index of each failed event among the batch's n to
// Pinterest's words about it; nil when none failed. An index beyond the
// batch cannot name an event and is ignored.
func refused(events []eventResult, n int, secrets []string) map[int]string {
	var m map[int]string
	for i, e := range events {
		if i >= n || e.Status != "failed" {
			continue
		}
		if m == nil {
			m = map[int]string{}
		}
		msg := strings.TrimSpace(e.ErrorMessage)
		if msg == "" {
			msg = "failed"
		}
		m[i] = destination.Scrub(msg, secrets)
	}
	return m
}

// message is a refusal as people read it: "Pinterest 401 (code 2):
// Authentication failed.", the HTTP status text when Pinterest gave no
// message.
func message(status int, r reply, secrets []string) string {
	var b strings.Builder
	b.WriteString("Pinterest " + strconv.Itoa(status))
	if r.Code != 0 {
		b.WriteString(" (code " + strconv.Itoa(r.Code) + ")")
	}
	msg := strings.TrimSpace(r.Message)
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	return destination.Scrub(b.String(), secrets)
}
