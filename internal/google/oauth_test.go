package google_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
)

var oauth = destination.OAuth{ClientID: googletest.ClientID, ClientSecret: googletest.ClientSecret, RefreshToken: googletest.RefreshToken}

// clock is a settable clock for the token cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// An access token is exchanged once and served from the cache until a
// minute before Google says it expires.
func TestTokenSourceCaches(t *testing.T) {
	s := googletest.New(t)
	c := &clock{t: eventTime}
	ts := &google.TokenSource{URL: s.TokenURL, Now: c.Now}
	first, err := ts.Token(t.Context(), oauth)
	if err != nil || first == "" {
		t.Fatalf("Token = %q, %v", first, err)
	}
	lifetime := googletest.ExpiresIn * time.Second
	for _, tt := range []struct {
		name      string
		advance   time.Duration
		same      bool
		exchanges int
	}{
		{"at once", 0, true, 1},
		{"just before the margin", lifetime - time.Minute - time.Second, true, 1},
		{"within a minute of expiry", time.Second, false, 2},
	} {
		c.Add(tt.advance)
		got, err := ts.Token(t.Context(), oauth)
		if err != nil {
			t.Fatalf("%s: Token: %v", tt.name, err)
		}
		if (got == first) != tt.same || s.Exchanges() != tt.exchanges {
			t.Errorf("%s: token %q (first %q), %d exchanges; want same=%v, %d exchanges",
				tt.name, got, first, s.Exchanges(), tt.same, tt.exchanges)
		}
	}
	// Another refresh token is another cache entry.
	other := oauth
	other.RefreshToken = "another"
	if _, err := ts.Token(t.Context(), other); err == nil || s.Exchanges() != 3 {
		t.Errorf("another refresh token: %v after %d exchanges; want its own, refused exchange", err, s.Exchanges())
	}
}

// Senders of one destination wait for one exchange.
func TestTokenSourceConcurrent(t *testing.T) {
	s := googletest.New(t)
	ts := &google.TokenSource{URL: s.TokenURL}
	var wg sync.WaitGroup
	tokens := make([]string, 20)
	for i := range tokens {
		wg.Go(func() {
			tok, err := ts.Token(t.Context(), oauth)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range tokens {
		if tok != tokens[0] {
			t.Fatalf("tokens %q; want one", tokens)
		}
	}
	if n := s.Exchanges(); n != 1 {
		t.Errorf("%d exchanges; want 1", n)
	}
}

// The token endpoint's refusals are TokenErrors: refused credentials are
// for a person to fix, a failing endpoint is not. No secret shows.
func TestTokenSourceRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		setup   func(*googletest.Server)
		oauth   destination.OAuth
		status  int
		code    string
		refused bool
	}{
		{"revoked refresh token", func(s *googletest.Server) { s.RevokeRefreshToken() }, oauth,
			http.StatusBadRequest, "invalid_grant", true},
		{"wrong refresh token", nil, destination.OAuth{ClientID: oauth.ClientID, ClientSecret: oauth.ClientSecret, RefreshToken: "1//nope"},
			http.StatusBadRequest, "invalid_grant", true},
		{"wrong client secret", nil, destination.OAuth{ClientID: oauth.ClientID, ClientSecret: "nope/secret", RefreshToken: oauth.RefreshToken},
			http.StatusUnauthorized, "invalid_client", true},
		{"endpoint failing", func(s *googletest.Server) { s.FailTokenNext(1, http.StatusServiceUnavailable) }, oauth,
			http.StatusServiceUnavailable, "internal_failure", false},
		{"throttled", func(s *googletest.Server) { s.FailTokenNext(1, http.StatusTooManyRequests) }, oauth,
			http.StatusTooManyRequests, "internal_failure", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := googletest.New(t)
			s.EchoSecrets()
			if tt.setup != nil {
				tt.setup(s)
			}
			ts := &google.TokenSource{URL: s.TokenURL}
			tok, err := ts.Token(t.Context(), tt.oauth)
			var te *google.TokenError
			if !errors.As(err, &te) || te.HTTPStatus != tt.status || te.Code != tt.code || te.Refused() != tt.refused {
				t.Fatalf("Token = %q, %#v; want HTTP %d %s, refused %v", tok, err, tt.status, tt.code, tt.refused)
			}
			assertNoSecret(t, "error", err.Error(), tt.oauth)
			assertNoSecret(t, "body", string(te.Body), tt.oauth)
			if !strings.Contains(string(te.Body), destination.Redacted) {
				t.Errorf("body %s; want the echoed secrets redacted", te.Body)
			}
		})
	}
}

// An exchange that gets no answer is an error without a secret, and the
// token endpoint's redirect is not followed.
func TestTokenSourceNoAnswer(t *testing.T) {
	s := googletest.New(t)
	redirect := httptest.NewServer(http.RedirectHandler(s.TokenURL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	ts := &google.TokenSource{URL: closed.URL + "/token"}
	if _, err := ts.Token(t.Context(), oauth); err == nil {
		t.Error("Token from a closed server: no error")
	} else {
		assertNoSecret(t, "error", err.Error(), oauth)
	}
	ts = &google.TokenSource{URL: redirect.URL}
	var te *google.TokenError
	if _, err := ts.Token(t.Context(), oauth); !errors.As(err, &te) || te.HTTPStatus != http.StatusTemporaryRedirect {
		t.Errorf("Token through a redirect: %v; want the 307 as a TokenError", err)
	}
	if n := s.Exchanges(); n != 0 {
		t.Errorf("the redirect was followed: %d exchanges", n)
	}
}

// assertNoSecret fails when text holds a secret of o, or an access token
// the fake gave.
func assertNoSecret(t *testing.T, what, text string, o destination.OAuth) {
	t.Helper()
	for _, sec := range []string{o.ClientSecret, o.RefreshToken, googletest.ClientSecret, googletest.RefreshToken, "ya29.googletest-access"} {
		for _, form := range []string{sec, strings.ReplaceAll(sec, "&", `\u0026`)} {
			if strings.Contains(text, form) {
				t.Errorf("%s %q holds the secret %q", what, text, sec)
			}
		}
	}
}
