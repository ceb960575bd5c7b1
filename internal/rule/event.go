package rule

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// StandardEvents are Meta's standard event names, as its Pixel reference
// lists them, for the rule form's event picker.
var StandardEvents = []string{
	"AddPaymentInfo", "AddToCart", "AddToWishlist", "CompleteRegistration", "Contact",
	"CustomizeProduct", "Donate", "FindLocation", "InitiateCheckout", "Lead", "PageView",
	"Purchase", "Schedule", "Search", "StartTrial", "SubmitApplication", "Subscribe", "ViewContent",
}

// MaxEventNameLen is the longest custom event name, in characters. Meta
// publishes no limit for the Conversions API; 40 keeps well inside the 50
// its Pixel reference gives for custom events.
const MaxEventNameLen = 40

// IsStandardEvent reports whether name is one of StandardEvents, exactly:
// Meta's event names are case-sensitive.
func IsStandardEvent(name string) bool {
	for _, s := range StandardEvents {
		if name == s {
			return true
		}
	}
	return false
}

// EventNameProblem says what is wrong with name as an event name, or ""
// when it is one of StandardEvents or a custom name Meta accepts: 1 to
// MaxEventNameLen ASCII letters, digits, underscores, hyphens and inner
// spaces. A custom name that differs from a standard one only in case is
// refused, because Meta would count it as a separate custom event.
func EventNameProblem(name string) string {
	if IsStandardEvent(name) {
		return ""
	}
	switch {
	case strings.TrimSpace(name) == "":
		return "choose an event, like Lead, or write a custom event name"
	case utf8.RuneCountInString(name) > MaxEventNameLen:
		return fmt.Sprintf("use at most %d characters", MaxEventNameLen)
	case strings.TrimSpace(name) != name:
		return "remove the spaces at the start or end"
	}
	for _, r := range name {
		if !eventNameRune(r) {
			return fmt.Sprintf("%q is not allowed in an event name: use letters, digits, _, - and spaces", r)
		}
	}
	for _, s := range StandardEvents {
		if strings.EqualFold(name, s) {
			return fmt.Sprintf("write %s for Meta's standard event: event names are case-sensitive, and %q would be a separate custom event", s, name)
		}
	}
	return ""
}

func eventNameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == ' '
}
