package setup

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
)

var (
	// tiktokIDRE is a TikTok pixel code (letters and digits) or event set
	// id (digits).
	tiktokIDRE = regexp.MustCompile(`^[A-Za-z0-9]{5,40}$`)
	// googleAccountRE is a Google Ads customer id without its hyphens.
	googleAccountRE = regexp.MustCompile(`^[0-9]{10}$`)
)

// kindProblems says what is wrong with a destination for its kind: the
// kind itself, its id, and the settings only some kinds have. A
// destination of the account keeps its kind.
func kindProblems(d DatasetSpec, k *known) []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Path: d.path + field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case d.Kind == "":
		add(".kind", "required: meta, tiktok, pinterest or google")
		return ps
	case !slices.Contains(models.Kinds, d.Kind):
		add(".kind", "%q is not a kind of destination; use meta, tiktok, pinterest or google", d.Kind)
		return ps
	case strings.HasPrefix(d.path, "datasets[") && d.Kind != models.KindMeta:
		add(".kind", "datasets are Meta's: list a %s destination under destinations", platform.Name(d.Kind))
		return ps
	}
	if stored, ok := k.dataset(d.Name); ok && stored.Of() != d.Kind {
		add(".kind", "%q is a %s destination of the account; a destination's kind cannot change (connect a new one with another name)",
			d.Name, platform.Name(stored.Of()))
	}
	id := map[models.Kind]struct {
		ok   func(string) bool
		want string
	}{
		models.KindMeta:      {pixelIDRE.MatchString, "5 to 20 digits, as Events Manager shows the dataset id"},
		models.KindTikTok:    {tiktokIDRE.MatchString, "the pixel code or event set id: 5 to 40 letters and digits"},
		models.KindPinterest: {pixelIDRE.MatchString, "the ad account id: 5 to 20 digits"},
		models.KindGoogle:    {googleAccountRE.MatchString, "the Google Ads customer id: 10 digits, like 123-456-7890"},
	}[d.Kind]
	switch {
	case d.PixelID == "":
		add(".pixel_id", "required: %s", id.want)
	case !id.ok(d.PixelID):
		add(".pixel_id", "must be %s", id.want)
	}
	only := func(field string, set bool, kinds ...models.Kind) {
		if set && !slices.Contains(kinds, d.Kind) {
			add("."+field, "a %s destination has no %s", platform.Name(d.Kind), field)
		}
	}
	only("api_version", d.APIVersion != "", models.KindMeta)
	only("event_source", d.EventSource != "", models.KindTikTok)
	only("event_names", len(d.EventNames) > 0, models.KindTikTok, models.KindPinterest, models.KindGoogle)
	only("login_account", d.LoginAccount != "", models.KindGoogle)
	only("client_id", d.ClientID != "", models.KindGoogle)
	only("consent", d.Consent != "", models.KindGoogle)
	only("app_secret_env", d.AppSecretEnv != "", models.KindMeta, models.KindGoogle)
	if d.Kind == models.KindTikTok && d.EventSource != "web" && d.EventSource != "crm" && d.EventSource != "offline" {
		add(".event_source", "%q is not an event source; use web, crm or offline", d.EventSource)
	}
	if _, err := platform.EventNamesJSON(d.Kind, d.EventNames); err != nil {
		add(".event_names", "%s", err.Error())
	}
	if d.Kind == models.KindGoogle {
		if d.LoginAccount != "" && !googleAccountRE.MatchString(d.LoginAccount) {
			add(".login_account", "must be the manager's customer id: 10 digits, like 123-456-7890")
		}
		switch d.Consent {
		case models.ConsentNone, models.ConsentGranted, models.ConsentDenied:
		default:
			add(".consent", "%q is not a consent; use granted or denied, or leave it out", d.Consent)
		}
		if d.Mode != models.ModeDryRun && d.ClientID == "" {
			add(".client_id", "%s mode needs the OAuth client id (or use dry_run until you have one)", d.Mode)
		}
		if stored, ok := k.dataset(d.Name); d.Mode != models.ModeDryRun && d.AppSecretEnv == "" && (!ok || stored.AppSecretSealed == "") {
			add(".app_secret_env", "%s mode needs the OAuth client secret: name the environment variable that holds it (or use dry_run until you have one)", d.Mode)
		}
	}
	return ps
}
