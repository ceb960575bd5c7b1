package junk

import (
	"fmt"
	"strings"
)

// minPatternDigits is the shortest number the repeated and sequential
// checks look at; shorter ones are left to the digit-count threshold.
const minPatternDigits = 6

// fakePhone reports a phone that is too short, one digit repeated, one
// run of sequential digits, or a North American fictional number. It
// looks at the national number when the phone parsed, so the country code
// does not hide "+44 7777 777777".
func fakePhone(phone, national string, minDigits int) string {
	if strings.TrimSpace(phone) == "" && strings.TrimSpace(national) == "" {
		return ""
	}
	d := digits(national)
	if d == "" {
		d = digits(phone)
	}
	switch {
	case len(d) < minDigits:
		shown := d
		if shown == "" {
			shown = truncate(strings.TrimSpace(phone), 30)
		}
		return fmt.Sprintf("phone %q has %s (under %d)", shown, plural(float64(len(d)), "digit"), minDigits)
	case len(d) >= minPatternDigits && strings.Count(d, d[:1]) == len(d):
		return fmt.Sprintf("phone %q is one digit repeated", d)
	case len(d) >= minPatternDigits && sequential(d):
		return fmt.Sprintf("phone %q is a run of sequential digits", d)
	}
	if n := nanpNational(phone, national); n != "" && fictional555(n) {
		return fmt.Sprintf("phone %q is a 555-01xx number reserved for fiction", n)
	}
	return ""
}

// digits keeps the ASCII digits of s.
func digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sequential reports whether d counts up (1234567890, with 0 allowed as
// the digit after a final 9) or down (9876543210, with 0 allowed as the
// digit before a first 9) in steps of one. A wrap in the middle
// (678901234) is a plausible real number and does not count.
func sequential(d string) bool {
	up, down := true, true
	for i := 1; i < len(d); i++ {
		prev, cur := d[i-1], d[i]
		if cur != prev+1 && (prev != '9' || cur != '0' || i != len(d)-1) {
			up = false
		}
		if cur != prev-1 && (prev != '0' || cur != '9' || i != 1) {
			down = false
		}
	}
	return up || down
}

// nanpNational returns the 10-digit national number when the phone is
// (or, unparsed, looks like) a North American Numbering Plan number, else
// "".
func nanpNational(phone, national string) string {
	p := digits(phone)
	if national != "" {
		n := digits(national)
		if len(n) == 10 && p == "1"+n {
			return n
		}
		return ""
	}
	// Unparsed: "+1 212 555 0123", "1-212-555-0123" or "(212) 555-0123".
	switch {
	case len(p) == 11 && p[0] == '1':
		p = p[1:]
	case len(p) == 10 && !strings.HasPrefix(strings.TrimSpace(phone), "+"):
	default:
		return ""
	}
	// NPA and NXX both start with 2-9.
	if p[0] < '2' || p[3] < '2' {
		return ""
	}
	return p
}

// fictional555 reports whether a 10-digit NANP number is in the block
// 555-0100 to 555-0199 that the NANPA reserves for fictional use in every
// area code. Other 555 lines (555-1212 is directory assistance) can be
// real, so they do not count.
func fictional555(n string) bool {
	return len(n) == 10 && n[3:6] == "555" && n[6:8] == "01"
}
