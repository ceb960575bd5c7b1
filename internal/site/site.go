// Package site holds what the browser capture snippet's keys are made of
// (DESIGN.md, "Browser capture"): the public site keys and the origins
// they are allowed from.
package site

import (
	"crypto/rand"
	"errors"
	"net"
	"net/url"
	"strings"
)

// KeyPrefix starts every site key, so it is never mistaken for a secret
// ingest key (lsk_).
const KeyPrefix = "pk_"

// NewKey is a new site key: KeyPrefix and 128 random bits.
func NewKey() string { return KeyPrefix + strings.ToLower(rand.Text()[:26]) }

// LooksLikeKey reports whether s has a site key's shape, so a request with
// anything else is refused before the database is asked.
func LooksLikeKey(s string) bool {
	if !strings.HasPrefix(s, KeyPrefix) || len(s) != len(KeyPrefix)+26 {
		return false
	}
	for _, r := range s[len(KeyPrefix):] {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

// MaxOrigins is how many origins one site key may be allowed from.
const MaxOrigins = 20

// ParseOrigin reads an origin as a person types it, a page's URL or its
// scheme and host ("https://www.example.com/contact" gives
// "https://www.example.com"), as browsers send it in Origin: the scheme
// and host in lower case, the port only when it is not the scheme's own.
// Only http and https are origins; a host is needed, and nothing but a
// path may follow it (no user name, password, query or fragment).
func ParseOrigin(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("type the website's address, like https://www.example.com")
	}
	if len(s) > 300 {
		return "", errors.New("an origin is at most 300 characters")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("an origin is http:// or https:// and a host, like https://www.example.com")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", errors.New("an origin is a scheme and host only, like https://www.example.com")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" || strings.ContainsAny(host, " %*") {
		return "", errors.New("the origin's host is not a host name, like www.example.com")
	}
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	origin := strings.ToLower(u.Scheme) + "://" + host
	if strings.Contains(host, ":") {
		origin = u.Scheme + "://[" + host + "]"
	}
	if port != "" {
		origin = u.Scheme + "://" + net.JoinHostPort(host, port)
	}
	return origin, nil
}
