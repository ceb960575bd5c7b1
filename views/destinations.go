package views

import "github.com/leadsignal/leadsignal/models"

// The words of the destinations' pages that differ by platform.

// testModeLabel says where a destination's test mode sends.
func testModeLabel(k models.Kind) string {
	switch k {
	case models.KindTikTok:
		return "TikTok's Test Events only"
	case models.KindPinterest:
		return "Pinterest's test mode, nothing recorded"
	case models.KindGoogle:
		return "Google validates only, nothing recorded"
	}
	return "Test Events tool only"
}

// testEventNote says where a destination's test event goes.
func testEventNote(k models.Kind) string {
	switch k {
	case models.KindTikTok:
		return "One Lead event with the test event code: it shows in TikTok's Events Manager → Test events and nowhere else."
	case models.KindPinterest:
		return "One Lead event in Pinterest's test mode: Pinterest checks it and records nothing."
	case models.KindGoogle:
		return "One event for the first conversion action, validated by Google and not recorded."
	}
	return "One Lead event with the test event code: it shows in Events Manager's Test Events tab and nowhere else."
}

// heldBackExample says why a rule's matches would be held back before
// they are sent to a destination of kind k, with the platform's commonest
// reason.
func heldBackExample(k models.Kind) string {
	switch k {
	case models.KindTikTok:
		return "The others would be held back with the reason, as TikTok would refuse them (a lead with no email, phone, external id, click id or IP address, say)."
	case models.KindPinterest:
		return "The others would be held back with the reason, as Pinterest would refuse them (a lead with neither an email nor both its IP address and browser, say)."
	case models.KindGoogle:
		return "The others would be held back with the reason, as Google would refuse them (an event with no conversion action, or a lead with no email, phone or Google click id, say)."
	}
	return "The others would be held back with the reason, as Meta would refuse them (a website lead without its visitor's browser, say)."
}
