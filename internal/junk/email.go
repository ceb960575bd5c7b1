package junk

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// disposableList is the list of disposable email domains, one a line, with
// '#' comment lines; see update_disposable.sh.
//
//go:embed disposable_domains.txt
var disposableList string

// disposableDomains is the parsed list. The keys are substrings of the
// embedded text, so the map adds no copy of the names.
var disposableDomains = sync.OnceValue(func() map[string]struct{} {
	m := make(map[string]struct{}, strings.Count(disposableList, "\n"))
	for line := range strings.Lines(disposableList) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		m[line] = struct{}{}
	}
	return m
})

// Limits of RFC 5321.
const (
	maxLocalLen  = 64
	maxDomainLen = 253
	maxLabelLen  = 63
)

// badEmail reports why email cannot be a deliverable address, or "" when
// its syntax is fine. Plausible typos of real domains (gmial.com) are valid
// syntax and pass: that is not this signal's call.
func badEmail(email string) string {
	email = strings.TrimSpace(email)
	if email == "" {
		return ""
	}
	why := emailProblem(strings.ToLower(email))
	if why == "" {
		return ""
	}
	return fmt.Sprintf("email %q %s", truncate(email, 80), why)
}

func emailProblem(email string) string {
	at := strings.Count(email, "@")
	switch {
	case at == 0:
		return "has no @"
	case at > 1:
		return "has more than one @"
	case strings.ContainsFunc(email, unicode.IsSpace):
		return "contains a space"
	case strings.Contains(email, ".."):
		return "has two dots in a row"
	}
	local, domain, _ := strings.Cut(email, "@")
	switch {
	case local == "":
		return "has nothing before the @"
	case len(local) > maxLocalLen:
		return fmt.Sprintf("has more than %d characters before the @", maxLocalLen)
	case local[0] == '.' || local[len(local)-1] == '.':
		return "has a dot at the start or end of the part before the @"
	case strings.ContainsAny(local, `"(),:;<>[\]`) || strings.ContainsFunc(local, unicode.IsControl) || !utf8.ValidString(local):
		return "has a character that is not allowed before the @"
	case domain == "":
		return "has nothing after the @"
	case len(domain) > maxDomainLen:
		return fmt.Sprintf("has a domain longer than %d characters", maxDomainLen)
	case !strings.Contains(domain, "."):
		return "has no dot in its domain"
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if why := labelProblem(l); why != "" {
			return why
		}
	}
	if !validTLD(labels[len(labels)-1]) {
		return fmt.Sprintf("has no valid top-level domain (%q)", labels[len(labels)-1])
	}
	return ""
}

// labelProblem checks one domain label: letters (any script, for
// internationalised domains), digits and inner hyphens.
func labelProblem(l string) string {
	switch {
	case l == "":
		return "has an empty part in its domain"
	case len(l) > maxLabelLen:
		return fmt.Sprintf("has a domain part longer than %d characters", maxLabelLen)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Sprintf("has a domain part %q that starts or ends with a hyphen", l)
	}
	for _, r := range l {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return fmt.Sprintf("has a character %q that is not allowed in its domain", r)
		}
	}
	return ""
}

// validTLD wants at least two letters, or an IDNA "xn--" label.
func validTLD(tld string) bool {
	if strings.HasPrefix(tld, "xn--") && len(tld) > len("xn--") {
		return true
	}
	if utf8.RuneCountInString(tld) < 2 {
		return false
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// disposableEmail reports an email whose domain, or a parent domain of it,
// is on the disposable list.
func disposableEmail(email string) string {
	_, domain, ok := strings.Cut(strings.ToLower(strings.TrimSpace(email)), "@")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(domain, '@'); i >= 0 {
		domain = domain[i+1:]
	}
	domain = strings.TrimSuffix(domain, ".")
	listed := disposableDomain(domain)
	switch listed {
	case "":
		return ""
	case domain:
		return fmt.Sprintf("email domain %q is a disposable mailbox provider", domain)
	default:
		return fmt.Sprintf("email domain %q is under the disposable mailbox provider %q", truncate(domain, 80), listed)
	}
}

// disposableDomain returns the listed domain that domain is or is under,
// or "". It never looks up a bare top-level domain.
func disposableDomain(domain string) string {
	set := disposableDomains()
	for d := domain; strings.Contains(d, "."); d = d[strings.IndexByte(d, '.')+1:] {
		if _, ok := set[d]; ok {
			return d
		}
	}
	return ""
}
