package google_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
)

func newClient(s *googletest.Server) *google.Client {
	return &google.Client{BaseURL: s.URL, TokenURL: s.TokenURL}
}

func target() destination.Target {
	return destination.Target{AccountID: googletest.OperatingAccount, OAuth: oauth}
}

// events are n prepared events of action, each of its own lead.
func events(t *testing.T, action string, n int) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, n)
	for i := range out {
		in := input(contact{email: fmt.Sprintf("lead%d@example.com", i), phone: "+1 415 555 0100"}, `{"gclid":"G`+fmt.Sprint(i)+`"}`)
		in.Event.EventID = fmt.Sprintf("ls_%s_%d", action, i)
		raw, err := google.Prepare(in, action)
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		out[i] = raw
	}
	return out
}

// A batch across two conversion actions goes as one request with two
// destinations; the access token is exchanged once for both sends.
func TestSendAccepted(t *testing.T) {
	s := googletest.New(t)
	c := newClient(s)
	tg := target()
	tg.LoginAccount = googletest.LoginAccount
	tg.ConsentAdUserData, tg.ConsentAdPersonalization = google.ConsentGranted, google.ConsentDenied
	batch := append(events(t, actionA, 3), events(t, actionB, 2)...)

	for range 2 {
		a, err := c.Send(t.Context(), tg, batch)
		if err != nil {
			t.Fatal(err)
		}
		if a.Verdict != destination.Accepted || a.Received != 5 || a.HTTPStatus != http.StatusOK || a.RequestID == "" || a.Message != "" {
			t.Fatalf("answer %+v; want 5 accepted with a request id", a)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 || s.EventsReceived() != 10 || s.Exchanges() != 1 {
		t.Fatalf("%d requests, %d events, %d exchanges; want 2, 10, 1", len(reqs), s.EventsReceived(), s.Exchanges())
	}
	r := reqs[0]
	if len(r.Destinations) != 2 || r.Destinations[0].ProductDestinationID != actionA || r.Destinations[1].Reference != actionB {
		t.Errorf("destinations %+v; want %s then %s", r.Destinations, actionA, actionB)
	}
	for _, d := range r.Destinations {
		if d.Reference != d.ProductDestinationID || d.OperatingAccount.AccountID != googletest.OperatingAccount ||
			d.LoginAccount == nil || d.LoginAccount.AccountID != googletest.LoginAccount {
			t.Errorf("destination %+v; want the operating account through the login account", d)
		}
	}
	if r.Encoding != "HEX" || r.ValidateOnly || r.Consent == nil ||
		*r.Consent != (googletest.Consent{AdUserData: google.ConsentGranted, AdPersonalization: google.ConsentDenied}) {
		t.Errorf("request encoding %q, validateOnly %v, consent %+v", r.Encoding, r.ValidateOnly, r.Consent)
	}
	if got := s.Events()[4].DestinationReferences; len(got) != 1 || got[0] != actionB {
		t.Errorf("fifth event goes to %q; want %s", got, actionB)
	}
}

// A test destination validates its batch and ingests nothing.
func TestSendValidateOnly(t *testing.T) {
	s := googletest.New(t)
	tg := target()
	tg.Test = true
	a, err := newClient(s).Send(t.Context(), tg, events(t, actionA, 2))
	if err != nil || a.Verdict != destination.Accepted || a.Received != 2 {
		t.Fatalf("Send = %+v, %v; want accepted", a, err)
	}
	if v := s.ValidateOnlyRequests(); len(v) != 1 || !v[0].ValidateOnly || len(s.Requests()) != 0 {
		t.Errorf("%d validateOnly requests, %d requests; want 1 and 0", len(v), len(s.Requests()))
	}
}

// A refresh token Google refuses pauses the destination with Google's
// words, and nothing is posted.
func TestSendTokenRefused(t *testing.T) {
	s := googletest.New(t)
	s.RevokeRefreshToken()
	a, err := newClient(s).Send(t.Context(), target(), events(t, actionA, 1))
	if err != nil || a.Verdict != destination.AuthRefused || !strings.Contains(a.Message, "invalid_grant: Token has been expired or revoked.") {
		t.Fatalf("Send = %+v, %v; want AuthRefused with Google's words", a, err)
	}
	if len(s.Requests()) != 0 {
		t.Error("an ingest request was sent")
	}
	s.FailTokenNext(1, http.StatusInternalServerError)
	if a, err := newClient(s).Send(t.Context(), target(), events(t, actionA, 1)); err != nil || a.Verdict != destination.Unavailable {
		t.Errorf("token endpoint 500: Send = %+v, %v; want Unavailable", a, err)
	}
}

// An access token Google revoked before it expired is exchanged again
// once, without pausing the destination.
func TestSendTokenRevokedEarly(t *testing.T) {
	s := googletest.New(t)
	c := newClient(s)
	if _, err := c.Send(t.Context(), target(), events(t, actionA, 1)); err != nil {
		t.Fatal(err)
	}
	s.ExpireAccessTokens()
	a, err := c.Send(t.Context(), target(), events(t, actionA, 1))
	if err != nil || a.Verdict != destination.Accepted || s.Exchanges() != 2 {
		t.Fatalf("Send = %+v, %v after %d exchanges; want accepted after 2", a, err, s.Exchanges())
	}
}

// Google's answers map to the dispatcher's verdicts.
func TestSendVerdicts(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		reason  string
		verdict destination.Verdict
		message string
	}{
		{"an invalid event", 400, "INVALID_SHA256_FORMAT", destination.EventRefused,
			"Google 400 INVALID_ARGUMENT (INVALID_SHA256_FORMAT): failed on demand"},
		{"an invalid argument", 400, "", destination.EventRefused, "Google 400 INVALID_ARGUMENT: failed on demand"},
		{"too many events", 400, "TOO_MANY_EVENTS", destination.Refused, "(TOO_MANY_EVENTS)"},
		{"a conversion action not the account's", 400, "INVALID_CONVERSION_ACTION_ID", destination.Refused, "INVALID_CONVERSION_ACTION_ID"},
		{"terms not signed", 400, "DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED", destination.Refused, "TERMS_NOT_SIGNED"},
		{"enhanced conversions for leads off", 403, "DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS",
			destination.Refused, "Google 403 PERMISSION_DENIED (DESTINATION_ACCOUNT_NOT_ENABLED"},
		{"permission denied", 403, "", destination.AuthRefused, "Google 403 PERMISSION_DENIED: failed on demand"},
		{"unauthenticated", 401, "", destination.AuthRefused, "Google 401 UNAUTHENTICATED"},
		{"throttled", 429, "", destination.Unavailable, "Google 429 RESOURCE_EXHAUSTED"},
		{"internal", 500, "", destination.Unavailable, "(INTERNAL_ERROR)"},
		{"unavailable", 503, "", destination.Unavailable, "Google 503 UNAVAILABLE: failed on demand"},
		{"deadline", 504, "", destination.Unavailable, "DEADLINE_EXCEEDED"},
		{"not found", 404, "", destination.Refused, "Google 404 NOT_FOUND"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := googletest.New(t)
			s.FailNextWith(1, tt.status, tt.reason)
			a, err := newClient(s).Send(t.Context(), target(), events(t, actionA, 2))
			if err != nil || a.HTTPStatus != tt.status || a.Verdict != tt.verdict || !strings.Contains(a.Message, tt.message) {
				t.Fatalf("Send = %+v, %v; want HTTP %d, verdict %d, a message with %q", a, err, tt.status, tt.verdict, tt.message)
			}
			if a.Received != 0 || len(a.Body) == 0 {
				t.Errorf("Received %d, body %q; want 0 and Google's body", a.Received, a.Body)
			}
		})
	}
}

// The fake's own refusals: one bad event refuses the whole request; a
// conversion action or an account that is not the fake's refuses it too.
func TestSendRefusedByGoogle(t *testing.T) {
	bad := json.RawMessage(`{"destinationReferences":["` + actionA + `"],"transactionId":"x","eventTimestamp":"2026-12-01T09:00:00Z",` +
		`"userData":{"userIdentifiers":[{"emailAddress":"JANE@EXAMPLE.COM"}]}}`)
	for _, tt := range []struct {
		name    string
		account string
		batch   []json.RawMessage
		verdict destination.Verdict
		message string
	}{
		{"a plain email", googletest.OperatingAccount, append(events(t, actionA, 2), bad), destination.EventRefused, "(INVALID_SHA256_FORMAT)"},
		{"an unknown conversion action", googletest.OperatingAccount, events(t, "333333333", 1), destination.Refused, "(INVALID_CONVERSION_ACTION_ID)"},
		{"another account", "1111111111", events(t, actionA, 1), destination.AuthRefused, "PERMISSION_DENIED"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := googletest.New(t)
			tg := target()
			tg.AccountID = tt.account
			a, err := newClient(s).Send(t.Context(), tg, tt.batch)
			if err != nil || a.Verdict != tt.verdict || !strings.Contains(a.Message, tt.message) {
				t.Fatalf("Send = %+v, %v; want verdict %d, a message with %q", a, err, tt.verdict, tt.message)
			}
			if s.EventsReceived() != 0 {
				t.Errorf("%d events ingested; Google fails fast", s.EventsReceived())
			}
		})
	}
}

// What Google would refuse of every batch is refused before anything is
// sent, the token exchange included.
func TestSendLocalErrors(t *testing.T) {
	s := googletest.New(t)
	one := events(t, actionA, 1)
	eleven := make([]json.RawMessage, 11)
	for i := range eleven {
		eleven[i] = events(t, fmt.Sprint(100000000+i), 1)[0]
	}
	with := func(f func(*destination.Target)) destination.Target {
		tg := target()
		f(&tg)
		return tg
	}
	for _, tt := range []struct {
		name   string
		target destination.Target
		batch  []json.RawMessage
		want   string
	}{
		{"no account", with(func(t *destination.Target) { t.AccountID = "" }), one, "no Google Ads account id"},
		{"a hyphenated account", with(func(t *destination.Target) { t.AccountID = "123-456-7890" }), one, "not 10 digits"},
		{"a short account", with(func(t *destination.Target) { t.AccountID = "123456789" }), one, "not 10 digits"},
		{"a bad login account", with(func(t *destination.Target) { t.LoginAccount = "98-76" }), one, "manager account id"},
		{"no OAuth", with(func(t *destination.Target) { t.OAuth = destination.OAuth{} }), one, "no OAuth"},
		{"no refresh token", with(func(t *destination.Target) { t.OAuth.RefreshToken = "" }), one, "no OAuth"},
		{"a bad consent", with(func(t *destination.Target) { t.ConsentAdUserData = "GRANTED" }), one, "consent"},
		{"no events", target(), nil, "no events"},
		{"too many events", target(), make([]json.RawMessage, google.MaxBatch+1), "2001 events"},
		{"too many conversion actions", target(), eleven, "11 conversion actions"},
		{"an event of no conversion action", target(), []json.RawMessage{json.RawMessage(`{"transactionId":"x"}`)}, "names no conversion action"},
		{"an event that is not JSON", target(), []json.RawMessage{json.RawMessage(`[1]`)}, "not a JSON object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newClient(s).Send(t.Context(), tt.target, tt.batch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Send = %+v, %v; want an error with %q", a, err, tt.want)
			}
		})
	}
	if s.Exchanges() != 0 || len(s.Requests()) != 0 {
		t.Errorf("%d exchanges, %d requests; want none", s.Exchanges(), len(s.Requests()))
	}
}

// Secrets never appear in an Answer's Message or Body, nor in errors, even
// when Google's answer quotes them.
func TestSendScrubsSecrets(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(*googletest.Server)
		fresh bool // a new client, with no cached access token
	}{
		{"an ingest refusal", func(s *googletest.Server) { s.FailNext(1, http.StatusBadRequest) }, false},
		{"an access token Google refuses", func(s *googletest.Server) { s.ExpireAccessTokens(); s.RevokeRefreshToken() }, false},
		{"a token refusal", func(s *googletest.Server) { s.RevokeRefreshToken() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := googletest.New(t)
			c := newClient(s)
			if _, err := c.Send(t.Context(), target(), events(t, actionA, 1)); err != nil {
				t.Fatal(err)
			}
			s.EchoSecrets()
			tt.setup(s)
			if tt.fresh {
				c = newClient(s)
			}
			a, err := c.Send(t.Context(), target(), events(t, actionA, 1))
			if err != nil || a.Verdict == destination.Accepted {
				t.Fatalf("Send = %+v, %v; want a refusal", a, err)
			}
			assertNoSecret(t, "message", a.Message, oauth)
			assertNoSecret(t, "body", string(a.Body), oauth)
			if !strings.Contains(string(a.Body), destination.Redacted) {
				t.Errorf("body %s; want the echoed secrets redacted", a.Body)
			}
		})
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	s := googletest.New(t)
	_, err := (&google.Client{BaseURL: closed.URL, TokenURL: s.TokenURL}).Send(t.Context(), target(), events(t, actionA, 1))
	if err == nil {
		t.Fatal("Send to a closed server: no error")
	}
	assertNoSecret(t, "error", err.Error(), oauth)
}

// A redirect is never followed: it would carry the access token elsewhere.
func TestSendNoRedirect(t *testing.T) {
	s := googletest.New(t)
	redirect := httptest.NewServer(http.RedirectHandler(s.URL+"/v1/events:ingest", http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	a, err := (&google.Client{BaseURL: redirect.URL, TokenURL: s.TokenURL}).Send(t.Context(), target(), events(t, actionA, 1))
	if err != nil || a.Verdict != destination.Refused || a.HTTPStatus != http.StatusTemporaryRedirect {
		t.Fatalf("Send = %+v, %v; want the 307 refused", a, err)
	}
	if len(s.Requests()) != 0 {
		t.Error("the redirect was followed")
	}
}

// Concurrent sends of one destination share one token exchange.
func TestSendConcurrent(t *testing.T) {
	s := googletest.New(t)
	c := newClient(s)
	batch := events(t, actionA, 3)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if a, err := c.Send(t.Context(), target(), batch); err != nil || a.Verdict != destination.Accepted {
				t.Errorf("Send = %+v, %v", a, err)
			}
		})
	}
	wg.Wait()
	if s.Exchanges() != 1 || s.EventsReceived() != 30 {
		t.Errorf("%d exchanges, %d events; want 1, 30", s.Exchanges(), s.EventsReceived())
	}
}
