package normalize

import (
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// Phone turns a phone number into E.164 digits without the '+' (the form
// Meta hashes) and the region it belongs to. A number written without a
// country code takes the lead's country (a code or an English name), else
// the account's default country; a number starting with + or 00 keeps its
// own. ok is false for an empty value, for a number without any country to
// use, and for one that is not a possible number for its country.
func Phone(raw, leadCountry, defaultCountry string) (e164Digits, region string, ok bool) {
	v, region, why := phone(raw, leadCountry, defaultCountry)
	if why != "" || v == "" {
		return "", region, false
	}
	return v, region, true
}

func phone(raw, leadCountry, defaultCountry string) (digits, region, reason string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", "", ""
	}
	if IsHashed(s) {
		return strings.ToLower(s), "", ""
	}
	region = countryCode(leadCountry)
	if region == "" {
		region = countryCode(defaultCountry)
	}

	// Where the number proper starts: the first '+' or digit.
	i := strings.IndexFunc(s, func(r rune) bool { return r == '+' || r == '＋' || unicode.IsDigit(r) })
	if i < 0 {
		return "", region, "not a phone number"
	}
	intl := false
	switch rest := s[i:]; {
	case strings.HasPrefix(rest, "+"), strings.HasPrefix(rest, "＋"):
		intl = true
	case strings.HasPrefix(rest, "00"):
		// 00 is the international prefix almost everywhere; libphonenumber
		// only knows it for regions whose IDD it is (not US, where it is 011).
		s, intl = "+"+rest[2:], true
	}
	if !intl && region == "" {
		return "", "", "no country code and no default country"
	}

	num, err := phonenumbers.Parse(s, region)
	if (err != nil || !phonenumbers.IsPossibleNumber(num)) && strings.IndexFunc(s, unicode.IsLetter) >= 0 {
		// libphonenumber reads letters as a vanity number (1-800-FLOWERS)
		// or an extension ("ext. 12"); a lead's letters are more often a
		// note ("(mobile)", "cell"), which it would turn into digits. Try
		// again without them, as the PHP SDK always does.
		if n, err2 := phonenumbers.Parse(strings.Map(dropLetters, s), region); err2 == nil && phonenumbers.IsPossibleNumber(n) {
			num, err = n, nil
		}
	}
	if err != nil {
		return "", region, parseReason(err)
	}
	region = regionOf(num, region)
	if !phonenumbers.IsPossibleNumber(num) {
		where := region
		if where == "" {
			where = "+" + strconv.Itoa(int(num.GetCountryCode()))
		}
		return "", region, "not a possible phone number for " + where
	}
	return strings.TrimPrefix(phonenumbers.Format(num, phonenumbers.E164), "+"), region, ""
}

func parseReason(err error) string {
	switch {
	case errors.Is(err, phonenumbers.ErrInvalidCountryCode):
		return "unknown country calling code"
	case errors.Is(err, phonenumbers.ErrTooShortNSN), errors.Is(err, phonenumbers.ErrTooShortAfterIDD):
		return "too short for a phone number"
	case errors.Is(err, phonenumbers.ErrNumTooLong):
		return "too long for a phone number"
	}
	return "not a phone number"
}

// regionOf is the region a parsed number belongs to. libphonenumber leaves it
// empty for a number it cannot validate under a shared calling code (+1, +7,
// +44...); then the region we parsed with is used when it has that code, else
// the code's main region.
func regionOf(num *phonenumbers.PhoneNumber, parsedWith string) string {
	r := phonenumbers.GetRegionCodeForNumber(num)
	if r != "" && r != "ZZ" && r != "001" {
		return r
	}
	cc := int(num.GetCountryCode())
	if parsedWith != "" && phonenumbers.GetCountryCodeForRegion(parsedWith) == cc {
		return parsedWith
	}
	if r := phonenumbers.GetRegionCodeForCountryCode(cc); r != "ZZ" && r != "001" {
		return r
	}
	return ""
}

func dropLetters(r rune) rune {
	if unicode.IsLetter(r) {
		return -1
	}
	return r
}
