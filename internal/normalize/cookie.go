package normalize

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// FBC is the fbc key of a lead: a well-formed _fbc cookie unchanged, else,
// when an fbclid was captured, fb.1.<capturedAt in Unix ms>.<fbclid> with
// rebuilt set. The fbclid is used exactly as given, case kept: Meta flags a
// modified one. ok is false when there is neither a usable cookie nor a
// usable fbclid (or no capture time to rebuild with).
//
// A well-formed cookie is fb.<subdomain index>.<creation time ms>.<fbclid>,
// optionally followed by the appendix Meta's param builder adds: one of its
// 2-character language tokens or 8 base64url characters.
func FBC(cookie, fbclid string, capturedAt time.Time) (value string, rebuilt bool, ok bool) {
	if cookie = strings.TrimSpace(cookie); cookie != "" && validFBC(cookie) {
		return cookie, false, true
	}
	v, _ := rebuildFBC(fbclid, capturedAt)
	return v, v != "", v != ""
}

// rebuildFBC builds fbc from an fbclid, or says why it cannot; both results
// are "" when there is no fbclid.
func rebuildFBC(fbclid string, capturedAt time.Time) (string, string) {
	fbclid = strings.TrimSpace(fbclid)
	switch {
	case fbclid == "":
		return "", ""
	case !validClickID(fbclid):
		return "", "malformed fbclid"
	case capturedAt.UnixMilli() <= 0:
		return "", "no capture time to rebuild fbc from fbclid"
	}
	return "fb.1." + strconv.FormatInt(capturedAt.UnixMilli(), 10) + "." + fbclid, ""
}

// FBP is a well-formed _fbp cookie (fb.<subdomain index>.<creation time
// ms>.<random>, with an optional appendix as for fbc), unchanged. fbp is
// never invented: ok is false for an empty or malformed cookie.
func FBP(cookie string) (string, bool) { return exported(fbp(cookie)) }

func fbp(s string) (string, string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", ""
	case !validFBP(s):
		return "", "malformed _fbp cookie"
	}
	return s, ""
}

// appendixTokens are the 2-character language tokens of older param builder
// appendixes (capi-param-builder Constants).
var appendixTokens = map[string]bool{"AQ": true, "Ag": true, "Aw": true, "BA": true, "BQ": true, "Bg": true}

// cookieParts splits fb.<digits>.<digits>.<payload>[.<appendix>] and checks
// everything but the payload.
func cookieParts(s string) (payload string, ok bool) {
	p := strings.Split(s, ".")
	if len(p) != 4 && len(p) != 5 {
		return "", false
	}
	if p[0] != "fb" || !AllDigits(p[1]) || !AllDigits(p[2]) {
		return "", false
	}
	if len(p) == 5 && !validAppendix(p[4]) {
		return "", false
	}
	return p[3], true
}

func validAppendix(s string) bool {
	return appendixTokens[s] || len(s) == 8 && isBase64URL(s)
}

func validFBC(s string) bool {
	clid, ok := cookieParts(s)
	return ok && validClickID(clid)
}

func validFBP(s string) bool {
	random, ok := cookieParts(s)
	return ok && random != "" && isBase64URL(random)
}

// validClickID accepts a non-empty fbclid of printable ASCII without dots (a
// dot would make it a cookie segment). Real ones are base64url, but Meta
// asks for them untouched, so percent signs and the like are let through.
func validClickID(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if c := s[i]; c <= ' ' || c > '~' || c == '.' {
			return false
		}
	}
	return true
}

func isBase64URL(s string) bool {
	for i := range len(s) {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ClientIP validates the visitor's IP address, sent unhashed as
// client_ip_address, and writes it canonically (an IPv4-mapped IPv6 address
// as IPv4, no zone). A port, as in some X-Forwarded-For values, is dropped.
// ok is false for an invalid address and for one that cannot be a visitor's
// on the internet (private, loopback, link-local, multicast, unspecified):
// such an address is the caller's own network, not the lead's.
func ClientIP(s string) (string, bool) { return exported(clientIP(s)) }

func clientIP(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return "", "not an IP address"
		}
		addr = ap.Addr()
	}
	addr = addr.Unmap().WithZone("")
	if !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return "", "not a public IP address"
	}
	return addr.String(), ""
}
