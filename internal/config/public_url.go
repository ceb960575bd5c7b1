package config

import (
	"errors"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// maxPublicURL bounds a public address as typed.
const maxPublicURL = 300

// hostnameRE is a DNS name as hook URLs carry it: ASCII labels of letters,
// digits and inner hyphens (an international domain in its xn-- form).
var hostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// PublicURL checks a public address, the address CRMs reach leadsignal at
// (LEADSIGNAL_PUBLIC_URL, or what an administrator typed on the server
// settings page), and returns it as hook URLs are made with it: its scheme
// and host in lower case, without the trailing "/". An empty address stays
// empty (unset). It takes http or https, a host and an optional port, and
// nothing else: no path beyond "/" (hook URLs add their own), no query or
// fragment, no user name or password. Its error says what to change.
func PublicURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case len(s) > maxPublicURL:
		return "", errors.New("the address is too long: at most 300 characters, like https://leads.example.com")
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return "", errors.New("write the address in plain ASCII without spaces, like https://leads.example.com (an international domain in its xn-- form)")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("write a whole address, like https://leads.example.com")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "https" && scheme != "http":
		return "", errors.New("the address starts with https:// (or http://), like https://leads.example.com")
	case u.Opaque != "":
		return "", errors.New("write a whole address, with // after the colon, like https://leads.example.com")
	case u.User != nil:
		return "", errors.New("the address carries no user name or password")
	case u.Host == "":
		return "", errors.New("the address needs a host, like https://leads.example.com")
	case u.Path != "" && u.Path != "/":
		return "", errors.New("write the address alone, without a path: hook URLs add their own")
	case u.RawQuery != "" || u.ForceQuery:
		return "", errors.New("write the address alone, without a query (?…)")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", errors.New("write the address alone, without a fragment (#…)")
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip == nil && !hostnameRE.MatchString(host) {
		return "", errors.New("the host is not a domain or an IP address, like leads.example.com")
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("write the port after the colon, like https://leads.example.com:8443, or leave the colon out")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", errors.New("the port is a number from 1 to 65535")
		}
	}
	return scheme + "://" + strings.ToLower(u.Host), nil
}
