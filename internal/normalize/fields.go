package normalize

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/leadsignal/leadsignal/internal/country"
)

// Every normaliser below passes a value that already is a SHA-256 (64 hex
// digits) through, lowercased, and reports ok=false for an empty value.

// exported turns a normalizer's answer into the exported (value, ok) shape.
func exported(v, reason string) (string, bool) {
	if reason != "" || v == "" {
		return "", false
	}
	return v, true
}

// prehashed is the lowercased value when s already is a SHA-256.
func prehashed(s string) (string, bool) {
	if IsHashed(s) {
		return strings.ToLower(s), true
	}
	return "", false
}

// Email trims and lowercases an email address. ok is false unless it looks
// like local@domain.tld with no spaces.
func Email(s string) (string, bool) { return exported(email(s)) }

func email(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	s = strings.ToLower(s)
	if !validEmail(s) {
		return "", "not a valid email address"
	}
	return s, ""
}

// validEmail accepts local@domain where local is dot-separated atoms of
// RFC 5322 atext (or any non-ASCII letter) and domain has at least two
// labels of letters, digits and inner hyphens, the last one two or more long.
// Quoted local parts, comments and IP-literal domains are refused: a lead
// form never legitimately produces them, and guessing a fix (as the PHP SDK
// does) would hash an address nobody owns.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at != strings.LastIndexByte(s, '@') {
		return false
	}
	local, domain := s[:at], s[at+1:]
	for atom := range strings.SplitSeq(local, ".") {
		if atom == "" {
			return false
		}
		for _, r := range atom {
			if !isLocalRune(r) {
				return false
			}
		}
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 || len([]rune(labels[len(labels)-1])) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !isDomainRune(r) {
				return false
			}
		}
	}
	return true
}

// isDomainRune accepts what a domain label (or its IDN Unicode form) holds.
func isDomainRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || unicode.Is(unicode.Mn, r)
}

// isLocalRune accepts RFC 5322 atext and, as RFC 6531 allows, non-ASCII letters.
func isLocalRune(r rune) bool {
	if r > unicode.MaxASCII {
		return unicode.IsLetter(r)
	}
	c := byte(r)
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// Name normalises a first or last name: Unicode NFC, lowercase, and only
// letters, combining marks and digits kept, so whitespace, punctuation and
// symbols go ("Mary-Jane O'Neil" -> "maryjaneoneil", "José" -> "josé").
// ok is false when nothing is left.
func Name(s string) (string, bool) { return exported(name(s)) }

func name(s string) (string, string) {
	return cleaned(s, letterOrDigit, "no letters in the name")
}

// City normalises a city: NFC, lowercase, letters and combining marks only,
// so spaces, digits and punctuation go ("Menlo Park" -> "menlopark",
// "San José" -> "sanjosé").
func City(s string) (string, bool) { return exported(city(s)) }

func city(s string) (string, string) {
	return cleaned(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsMark(r) }, "no letters in the city")
}

// cleaned trims and cleans s; empty is the reason when nothing is kept.
func cleaned(s string, keep func(rune) bool, empty string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	s = clean(s, keep)
	if s == "" {
		return "", empty
	}
	return s, ""
}

// clean lowercases s, keeps only the runes keep accepts and composes the
// result to NFC last, so that a mark left next to a letter by a dropped rune
// is composed too and cleaning a cleaned value changes nothing.
func clean(s string, keep func(rune) bool) string {
	return norm.NFC.String(strings.Map(func(r rune) rune {
		if keep(r) {
			return r
		}
		return -1
	}, strings.ToLower(s)))
}

func letterOrDigit(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// State normalises a state or province. For the US (country "US", a name of
// it, or "") a state's full name or code becomes its lowercase 2-letter USPS
// code ("California" -> "ca", "CA" -> "ca"); otherwise, and for a US value
// that is no state name, it is lowercased with only letters and digits kept.
func State(s, country string) (string, bool) { return exported(state(s, rulesCountry(country, ""))) }

// state takes the already resolved upper-case country code ("" for none).
func state(s, cc string) (string, string) {
	v, why := cleaned(s, letterOrDigit, "no letters in the state")
	if why != "" || v == "" || IsHashed(v) {
		return v, why
	}
	if cc == "" || cc == "US" {
		if code, ok := usStates[v]; ok {
			return code, ""
		}
	}
	return v, ""
}

// Zip normalises a postal code: lowercase, only letters and digits, and only
// the part before the first '-' ("98121-4892" -> "98121", "NR9 5AL" ->
// "nr95al"). For the US (or no country) a 9-digit ZIP+4 written without the
// dash also keeps its first 5 digits. ok is false for fewer than 2 characters.
func Zip(s, country string) (string, bool) { return exported(zip(s, rulesCountry(country, ""))) }

func zip(s, cc string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	s, _, _ = strings.Cut(s, "-")
	s = clean(s, letterOrDigit)
	if (cc == "" || cc == "US") && len(s) == 9 && AllDigits(s) {
		s = s[:5]
	}
	if len([]rune(s)) < 2 {
		return "", "too short for a postal code"
	}
	return s, ""
}

// Country normalises a country to its lowercase ISO 3166-1 alpha-2 code,
// from a code ("US", "us") or an English name ("United States", "USA",
// "Germany"). ok is false for anything else.
func Country(s string) (string, bool) { return exported(countryKey(s)) }

func countryKey(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	if cc := countryCode(s); cc != "" {
		return strings.ToLower(cc), ""
	}
	return "", "not a known country"
}

// rulesCountry is the country whose state and zip rules apply to a lead: its
// own, else the account's default. "" means none was given (US rules
// apply); "ZZ" means one was given but is unknown (no country's rules apply).
func rulesCountry(leadCountry, defaultCountry string) string {
	for _, c := range []string{leadCountry, defaultCountry} {
		if cc := countryCode(c); cc != "" {
			return cc
		}
	}
	if strings.TrimSpace(leadCountry) != "" {
		return "ZZ"
	}
	return ""
}

// countryCode is the upper-case alpha-2 code of a country code or English
// name, or "". Stray punctuation is forgiven ("US!", "U.S.A.").
func countryCode(s string) string {
	// country.Code ignores case, accents, punctuation and spacing itself.
	cc, _ := country.Code(s)
	return cc
}

// genders maps the spellings a form may post to Meta's m and f. Besides
// English it knows Spanish, Portuguese, German, French and Turkish basics.
// Single letters other than m and f are left out on purpose: "h" (hombre,
// homme) and "m" (mujer) would contradict each other; "w" (weiblich, from
// the German m/w/d) is the exception, as nothing else uses it.
var genders = map[string]string{
	"m": "m", "male": "m", "man": "m", "boy": "m", "mr": "m", "masculine": "m",
	"masculino": "m", "hombre": "m", "varón": "m", "homem": "m",
	"männlich": "m", "maennlich": "m", "mannlich": "m", "mann": "m", "herr": "m",
	"homme": "m", "masculin": "m", "monsieur": "m",
	"erkek": "m", "bay": "m",

	"f": "f", "female": "f", "woman": "f", "girl": "f", "mrs": "f", "ms": "f", "miss": "f", "feminine": "f",
	"femenino": "f", "mujer": "f", "feminino": "f", "mulher": "f",
	"weiblich": "f", "w": "f", "frau": "f",
	"femme": "f", "féminin": "f", "feminin": "f", "madame": "f",
	"kadın": "f", "kadin": "f", "bayan": "f",
}

// Gender normalises a gender to "m" or "f" from m/male/man, f/female/woman
// and a few synonyms in English, Spanish, Portuguese, German, French and
// Turkish, any case. ok is false for anything else.
func Gender(s string) (string, bool) { return exported(gender(s)) }

func gender(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	v := strings.TrimFunc(strings.ToLower(norm.NFC.String(s)), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r)
	})
	if g, ok := genders[v]; ok {
		return g, ""
	}
	return "", "not a known gender (m or f)"
}

// DateOfBirth normalises a date of birth to YYYYMMDD. It accepts
// YYYY-MM-DD (also with a time after it, as in RFC 3339), YYYY/MM/DD,
// YYYY.MM.DD, YYYYMMDD, and day and month before the year (DD/MM/YYYY or
// MM/DD/YYYY, separated by / - . or space) only when the order cannot be
// wrong: one of the two is over 12, or both are equal. 03/04/1990 is
// refused rather than guessed, since a wrong date hashes to a key that
// matches nobody. The date must exist and the year lie in 1900-2100.
func DateOfBirth(s string) (string, bool) { return exported(dateOfBirth(s)) }

// dateOfBirthAt is dateOfBirth that also refuses a date after the capture time.
func dateOfBirthAt(s string, capturedAt time.Time) (string, string) {
	v, why := dateOfBirth(s)
	if why == "" && v != "" && !IsHashed(v) && !capturedAt.IsZero() && v > capturedAt.UTC().Format("20060102") {
		return "", "date of birth is after the lead was captured"
	}
	return v, why
}

func dateOfBirth(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	const bad = "not a date (use YYYY-MM-DD)"
	// An RFC 3339 timestamp: keep the date as written, never shift its zone.
	if len(s) > 10 && (s[10] == 'T' || s[10] == ' ') && s[4] == '-' && s[7] == '-' {
		s = s[:10]
	}
	if len(s) == 8 && AllDigits(s) {
		return ymd(s[:4], s[4:6], s[6:])
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '/' || r == '.' || r == ' ' })
	if len(parts) != 3 {
		return "", bad
	}
	for _, p := range parts {
		if !AllDigits(p) {
			return "", bad
		}
	}
	a, b, c := parts[0], parts[1], parts[2]
	switch {
	case len(a) == 4 && len(b) <= 2 && len(c) <= 2:
		return ymd(a, b, c)
	case len(c) == 4 && len(a) <= 2 && len(b) <= 2:
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		switch {
		case x == y, x > 12 && y <= 12: // DD/MM/YYYY
			return ymd(c, b, a)
		case y > 12 && x <= 12: // MM/DD/YYYY
			return ymd(c, a, b)
		case x > 12 && y > 12:
			return "", bad
		}
		return "", "ambiguous date: day and month could be either way round (use YYYY-MM-DD)"
	}
	return "", bad
}

// ymd checks a calendar date given as digit strings and formats it YYYYMMDD.
func ymd(y, m, d string) (string, string) {
	year, _ := strconv.Atoi(y)
	month, _ := strconv.Atoi(m)
	day, _ := strconv.Atoi(d)
	if year < 1900 || year > 2100 {
		return "", "year out of range for a date of birth"
	}
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if month < 1 || month > 12 || day < 1 || t.Day() != day || int(t.Month()) != month {
		return "", "no such date"
	}
	return t.Format("20060102"), ""
}

// AllDigits reports whether s is one or more ASCII digits, as a US ZIP
// code and the platforms' ids are (Meta's lead ids, Google's accounts and
// conversion actions).
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ExternalID normalises the advertiser's own id of the lead for the
// external_id match key, which leadsignal always hashes: trimmed, lowercased
// and with all whitespace removed, as Meta's capi-param-builder does (and so
// the current Node SDK). Meta asks for the same external_id on every
// channel and the param builder is its library for exactly that; the case or
// spacing of an id rarely carries meaning, while a mismatch between channels
// silently loses the match. This is only the user_data key: the event id is
// computed elsewhere from the raw id, case kept.
func ExternalID(s string) (string, bool) { return exported(externalID(s)) }

func externalID(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if h, ok := prehashed(s); ok {
		return h, ""
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToLower(s)), ""
}
