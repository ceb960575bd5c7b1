package normalize

import "strings"

// Platform is an ad platform a lead's events go to. Each hashes a lead's
// email and phone by its own rules (docs/destinations.md, "Common
// model"): Meta, Pinterest and LinkedIn the email trimmed and lower-cased
// and the phone as E.164 digits without "+"; TikTok the phone with "+";
// Google the phone with "+" and a Gmail address without the dots and
// "+tag" of its local part. So a lead keeps one normalised value per key,
// and each platform's hash is made from it.
type Platform string

// The platforms.
const (
	Meta      Platform = "meta"
	TikTok    Platform = "tiktok"
	Google    Platform = "google"
	Pinterest Platform = "pinterest"
	LinkedIn  Platform = "linkedin"
)

// EmailHash is the SHA-256 of the lead's email as platform p normalises
// it, "" when the lead has none. An email that came hashed is passed on as
// it came: how it was normalised is its sender's doing.
func (k Keys) EmailHash(p Platform) string {
	e := k.Email
	if !e.Present() || IsHashed(e.Normalized) || p != Google {
		return e.Hash
	}
	return Hash(GoogleEmail(e.Normalized))
}

// GoogleEmail is a trimmed, lower-cased email as Google's Data Manager
// API hashes it: a gmail.com or googlemail.com address without the dots
// of its local part and without a "+" and what follows it; any other
// address as it is.
func GoogleEmail(email string) string {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return email
	}
	local, domain := email[:at], email[at+1:]
	if domain != "gmail.com" && domain != "googlemail.com" {
		return email
	}
	if plus := strings.IndexByte(local, '+'); plus >= 0 {
		local = local[:plus]
	}
	return strings.ReplaceAll(local, ".", "") + "@" + domain
}

// PhoneHash is the SHA-256 of the lead's phone as platform p normalises
// it, "" when it has none that p can take: TikTok and Google hash E.164
// with its "+", which a phone that came hashed cannot be given.
func (k Keys) PhoneHash(p Platform) string {
	ph := k.Phone
	if !ph.Present() || p != TikTok && p != Google {
		return ph.Hash
	}
	if IsHashed(ph.Normalized) {
		return ""
	}
	return Hash("+" + ph.Normalized)
}
