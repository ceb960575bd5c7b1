package google

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/destination"
)

// expiryMargin is how long before Google says an access token expires the
// cache stops handing it out, so that a token is not used as it expires.
const expiryMargin = time.Minute

// maxTokenReply bounds how much of a token endpoint reply is read; Google's
// are a few hundred bytes.
const maxTokenReply = 64 << 10

// TokenSource exchanges an OAuth client's refresh token for an access token
// at Google's token endpoint and caches it per client and refresh token
// until a minute before it expires. It is safe for concurrent use, and one
// exchange at a time runs per client and refresh token. The zero value
// exchanges at DefaultTokenURL.
type TokenSource struct {
	// URL is the token endpoint; "" means DefaultTokenURL.
	URL string
	// HTTP is the client exchanges go through; nil means one with
	// DefaultTimeout. Redirects are never followed.
	HTTP *http.Client
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex
	// cache keeps one entry per client and refresh token ever used: a
	// process sees as many as there are Google destinations, and their
	// rotations.
	cache map[tokenKey]*cachedToken
}

type tokenKey struct{ clientID, refreshToken string }

type cachedToken struct {
	// mu is held during an exchange, so that senders of one destination
	// wait for its answer instead of each exchanging the refresh token.
	mu      sync.Mutex
	token   string
	expires time.Time
}

// TokenError is the token endpoint's refusal of a refresh token, or a
// reply with no access token.
type TokenError struct {
	HTTPStatus int
	// Code and Description are OAuth's error and error_description, such
	// as "invalid_grant" and "Token has been expired or revoked.";
	// scrubbed of secrets.
	Code, Description string
	// Body is the reply for the send log, scrubbed (destination.LogBody).
	Body []byte
}

func (e *TokenError) Error() string {
	return "google: token exchange: " + e.message()
}

// message is the error in Google's words, as an Answer's Message.
func (e *TokenError) message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Google OAuth %d", e.HTTPStatus)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	if e.Code == "" && e.Description == "" {
		b.WriteString(": no access token in the reply")
	}
	return b.String()
}

// Refused reports whether Google refused the credentials (invalid_grant:
// the refresh token expired or was revoked; invalid_client: the client id
// or secret is wrong; any other 4xx but 429), so that only a person saving
// new ones can help. Otherwise the endpoint failed and may answer later.
func (e *TokenError) Refused() bool {
	switch e.Code {
	case "invalid_grant", "invalid_client", "unauthorized_client":
		return true
	}
	return e.HTTPStatus >= 400 && e.HTTPStatus < 500 && e.HTTPStatus != http.StatusTooManyRequests
}

// Token is an access token for o: the cached one while it has more than a
// minute left, else a new one from the token endpoint. A refusal is a
// *TokenError; an exchange that got no answer is an error with no secret
// in its text.
func (s *TokenSource) Token(ctx context.Context, o destination.OAuth) (string, error) {
	tok, _, err := s.token(ctx, o)
	return tok, err
}

// token is Token and whether the token was exchanged just now.
func (s *TokenSource) token(ctx context.Context, o destination.OAuth) (tok string, fresh bool, err error) {
	c := s.entry(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && s.now().Before(c.expires) {
		return c.token, false, nil
	}
	c.token = ""
	start := s.now()
	tok, ttl, err := s.exchange(ctx, o)
	if err != nil {
		return "", false, err
	}
	c.token, c.expires = tok, start.Add(ttl-expiryMargin)
	return tok, true, nil
}

// forget drops o's cached access token when it is tok, one Google no
// longer takes; a token another sender got since then stays.
func (s *TokenSource) forget(o destination.OAuth, tok string) {
	c := s.entry(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == tok {
		c.token = ""
	}
}

func (s *TokenSource) entry(o destination.OAuth) *cachedToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[tokenKey]*cachedToken{}
	}
	k := tokenKey{o.ClientID, o.RefreshToken}
	c := s.cache[k]
	if c == nil {
		c = &cachedToken{}
		s.cache[k] = c
	}
	return c
}

func (s *TokenSource) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *TokenSource) endpoint() string {
	if s.URL != "" {
		return s.URL
	}
	return DefaultTokenURL
}

// exchange posts the refresh token grant (RFC 6749 section 6) and reads
// the access token and how long it lives.
func (s *TokenSource) exchange(ctx context.Context, o destination.OAuth) (string, time.Duration, error) {
	endpoint := s.endpoint()
	secrets := []string{o.ClientSecret, o.RefreshToken}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"client_id":     {o.ClientID},
		"client_secret": {o.ClientSecret},
		"refresh_token": {o.RefreshToken},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, destination.Scrubbed("google: token exchange at "+endpoint, err, secrets)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := destination.HTTPClient(s.HTTP).Do(req)
	if err != nil {
		return "", 0, destination.Scrubbed("google: token exchange at "+endpoint, err, secrets)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxTokenReply))
	if err != nil {
		return "", 0, destination.Scrubbed("google: read token reply of "+endpoint, err, secrets)
	}
	var body struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(raw, &body) // a reply that is not JSON is a TokenError below
	if res.StatusCode == http.StatusOK && body.AccessToken != "" {
		return body.AccessToken, time.Duration(body.ExpiresIn) * time.Second, nil
	}
	secrets = append(secrets, body.AccessToken)
	return "", 0, &TokenError{
		HTTPStatus:  res.StatusCode,
		Code:        destination.Scrub(body.Error, secrets),
		Description: destination.Scrub(body.Description, secrets),
		Body:        destination.LogBody(raw, secrets),
	}
}
