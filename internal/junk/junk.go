package junk

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Signal names one junk signal; the names are stable (stored, shown, used in
// rules).
type Signal string

// The junk signals.
const (
	TooFast         Signal = "too_fast"
	Honeypot        Signal = "honeypot"
	FakePhone       Signal = "fake_phone"
	VendorPitch     Signal = "vendor_pitch"
	JobApplication  Signal = "job_application"
	Duplicate       Signal = "duplicate"
	BadEmail        Signal = "bad_email"
	DisposableEmail Signal = "disposable_email"
)

// Signals lists all signals, in display order. Check reports in this order.
var Signals = []Signal{
	TooFast, Honeypot, FakePhone, VendorPitch, JobApplication, Duplicate, BadEmail, DisposableEmail,
}

// Default thresholds, used when a setting's Threshold is zero (unset).
const (
	DefaultTooFastSeconds  = 2 // too_fast: seconds
	DefaultDuplicateDays   = 7 // duplicate: days
	DefaultFakePhoneDigits = 6 // fake_phone: minimum national digits
)

// Limits that Validate enforces.
const (
	maxTooFastSeconds  = 60
	maxDuplicateDays   = 365
	maxFakePhoneDigits = 15 // E.164 numbers have at most 15 digits
	maxKeywords        = 500
	maxKeywordLen      = 100
)

const maxHoneypotEvidenceLen = 40

// Setting is one signal's per-account configuration.
type Setting struct {
	Enabled bool `json:"enabled"`
	// Threshold is, for too_fast, the seconds under which a form counts as
	// filled too fast (default 2); for duplicate, the window in days
	// (default 7); for fake_phone, the minimum number of national digits
	// (default 6). Zero means the default; other signals have none.
	Threshold float64 `json:"threshold,omitempty"`
	// Keywords replaces the built-in phrase list of vendor_pitch or
	// job_application when non-empty. Phrases match whole words,
	// ignoring case, accents and punctuation; a trailing * matches any
	// word ending ("bewerbung*" matches "Bewerbungsunterlagen").
	Keywords []string `json:"keywords,omitempty"`
}

// Settings maps every signal to its setting.
type Settings map[Signal]Setting

// Defaults returns every signal enabled with its default threshold and no
// keyword overrides.
func Defaults() Settings {
	s := make(Settings, len(Signals))
	for _, sig := range Signals {
		s[sig] = Setting{Enabled: true, Threshold: defaultThreshold(sig)}
	}
	return s
}

// With returns a copy of s in which every signal missing from s takes its
// setting from other, so that settings stored before a signal existed (or
// stored partially) still cover every signal: s.With(Defaults()).
func (s Settings) With(other Settings) Settings {
	out := make(Settings, len(s)+len(other))
	for sig, st := range other {
		out[sig] = st.clone()
	}
	for sig, st := range s {
		out[sig] = st.clone()
	}
	return out
}

func (st Setting) clone() Setting {
	if st.Keywords != nil {
		st.Keywords = append([]string(nil), st.Keywords...)
	}
	return st
}

// Validate returns a human error for each signal whose setting is wrong
// (unknown signal, negative or absurd threshold, a threshold or keywords on
// a signal that takes none, empty, too long or too many keywords), or nil
// when all are valid.
func (s Settings) Validate() map[Signal]string {
	var problems map[Signal]string
	for sig, st := range s {
		if msg := validate(sig, st); msg != "" {
			if problems == nil {
				problems = map[Signal]string{}
			}
			problems[sig] = msg
		}
	}
	return problems
}

func validate(sig Signal, st Setting) string {
	if !known(sig) {
		return fmt.Sprintf("unknown junk signal %q", string(sig))
	}
	var msgs []string
	if msg := validateThreshold(sig, st.Threshold); msg != "" {
		msgs = append(msgs, msg)
	}
	if msg := validateKeywords(sig, st.Keywords); msg != "" {
		msgs = append(msgs, msg)
	}
	return strings.Join(msgs, "; ")
}

func validateThreshold(sig Signal, t float64) string {
	if t == 0 {
		return ""
	}
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return "threshold must be a number"
	}
	if t < 0 {
		return "threshold must not be negative"
	}
	switch sig {
	case TooFast:
		if t > maxTooFastSeconds {
			return fmt.Sprintf("threshold must be at most %d seconds", maxTooFastSeconds)
		}
	case Duplicate:
		if t > maxDuplicateDays {
			return fmt.Sprintf("threshold must be at most %d days", maxDuplicateDays)
		}
	case FakePhone:
		if t != math.Trunc(t) {
			return "threshold must be a whole number of digits"
		}
		if t > maxFakePhoneDigits {
			return fmt.Sprintf("threshold must be at most %d digits", maxFakePhoneDigits)
		}
	default:
		return "this signal has no threshold"
	}
	return ""
}

func validateKeywords(sig Signal, kws []string) string {
	if len(kws) == 0 {
		return ""
	}
	if sig != VendorPitch && sig != JobApplication {
		return "this signal takes no keywords"
	}
	if len(kws) > maxKeywords {
		return fmt.Sprintf("at most %d keywords, got %d", maxKeywords, len(kws))
	}
	for i, kw := range kws {
		switch {
		case strings.TrimSpace(kw) == "":
			return fmt.Sprintf("keyword %d is empty", i+1)
		case utf8.RuneCountInString(kw) > maxKeywordLen:
			return fmt.Sprintf("keyword %d is longer than %d characters", i+1, maxKeywordLen)
		case compileKeyword(kw).pattern == "":
			return fmt.Sprintf("keyword %q has no letters or digits", kw)
		}
	}
	return ""
}

func known(sig Signal) bool {
	for _, s := range Signals {
		if s == sig {
			return true
		}
	}
	return false
}

func defaultThreshold(sig Signal) float64 {
	switch sig {
	case TooFast:
		return DefaultTooFastSeconds
	case Duplicate:
		return DefaultDuplicateDays
	case FakePhone:
		return DefaultFakePhoneDigits
	}
	return 0
}

// threshold is st's threshold, or the signal's default when unset or
// unusable.
func (st Setting) threshold(sig Signal) float64 {
	t := st.Threshold
	if t <= 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return defaultThreshold(sig)
	}
	return t
}

// Describe returns a short label and a one-sentence explanation of sig for
// the settings page; an unknown signal gets its name and no help.
func Describe(sig Signal) (label, help string) {
	switch sig {
	case TooFast:
		return "Filled too fast", "The form was sent faster than a person can fill it in: under the threshold in seconds (default 2)."
	case Honeypot:
		return "Honeypot filled", "A hidden form field that people never see was filled in, which only bots do."
	case FakePhone:
		return "Fake phone", "The phone number has fewer digits than the threshold (default 6), repeats one digit, runs through sequential digits or is a 555-01xx fictional number."
	case VendorPitch:
		return "Vendor pitch", "The message reads like a sales pitch (SEO, web design, lead generation, outsourcing) rather than an enquiry; edit the phrases if you sell these services yourself."
	case JobApplication:
		return "Job application", "The message reads like someone applying for a job or sending a CV rather than an enquiry."
	case Duplicate:
		return "Duplicate", "The same email or phone already wrote in within the threshold in days (default 7)."
	case BadEmail:
		return "Invalid email", "The email address cannot receive mail because its syntax is broken."
	case DisposableEmail:
		return "Disposable email", "The email address belongs to a throwaway mailbox provider such as mailinator.com."
	}
	return string(sig), ""
}

// Input is what the signals look at. The caller fills Duplicate (it needs
// the database).
type Input struct {
	// FillSeconds is how long the visitor took to fill the form; nil when
	// unknown.
	FillSeconds *float64
	// Honeypot is the value of the hidden honeypot field.
	Honeypot string
	// Phone is the E.164 digits without '+' when the number parsed, else
	// the raw phone as typed; "" when none.
	Phone string
	// PhoneNational is the national significant number's digits when the
	// phone parsed (for pattern checks), else "".
	PhoneNational string
	// Email is the email address, trimmed and lowercased; "" when none.
	Email string
	// Message is the free text of the form.
	Message string
	// Duplicate is whether the same email or phone hash wrote in to the
	// account within the duplicate window (decided by the caller).
	Duplicate bool
}

// Reason is one signal that fired, with a human explanation naming the
// evidence.
type Reason struct {
	Signal  Signal `json:"signal"`
	Message string `json:"message"`
}

// Check runs every enabled signal of s on in and returns the ones that
// fired, in Signals order; nil when none did. Signals missing from s are
// off: fill them with s.With(Defaults()) first.
func Check(in Input, s Settings) []Reason {
	var reasons []Reason
	c := checker{in: in}
	for _, sig := range Signals {
		st, ok := s[sig]
		if !ok || !st.Enabled {
			continue
		}
		if msg := c.check(sig, st); msg != "" {
			reasons = append(reasons, Reason{Signal: sig, Message: msg})
		}
	}
	return reasons
}

// checker runs the signals on one input, folding the message at most once.
type checker struct {
	in     Input
	text   string // the folded message
	folded bool
}

// check returns why sig fires, or "" when it does not.
func (c *checker) check(sig Signal, st Setting) string {
	in := c.in
	switch sig {
	case TooFast:
		return tooFast(in.FillSeconds, st.threshold(sig))
	case Honeypot:
		return honeypot(in.Honeypot)
	case FakePhone:
		return fakePhone(in.Phone, in.PhoneNational, int(st.threshold(sig)))
	case VendorPitch, JobApplication:
		if !c.folded {
			c.text, c.folded = fold(in.Message), true
		}
		return mentions(c.text, st.Keywords, sig)
	case Duplicate:
		if in.Duplicate {
			return fmt.Sprintf("the same email or phone wrote in within the last %s", plural(st.threshold(sig), "day"))
		}
	case BadEmail:
		return badEmail(in.Email)
	case DisposableEmail:
		return disposableEmail(in.Email)
	}
	return ""
}

// tooFast ignores negative and non-finite times: a broken client timer is
// not evidence of a bot.
func tooFast(seconds *float64, limit float64) string {
	if seconds == nil {
		return ""
	}
	f := *seconds
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f >= limit {
		return ""
	}
	return fmt.Sprintf("form filled in %s s (under %s s)", number(f), number(limit))
}

func honeypot(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	return fmt.Sprintf("hidden honeypot field filled in with %q", truncate(v, maxHoneypotEvidenceLen))
}

// number formats f with at most one decimal: 0.8, 2, 12.5.
func number(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

func plural(n float64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return number(n) + " " + unit + "s"
}

// truncate shortens s to at most n runes, marking the cut with "...".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}
