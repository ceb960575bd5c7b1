package setup

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
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
	switch {
	case d.PixelID == "":
		add(".pixel_id", "required: %s", platform.IDWant(d.Kind))
	case !platform.ValidID(d.Kind, d.PixelID):
		add(".pixel_id", "must be %s", platform.IDWant(d.Kind))
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
		if d.LoginAccount != "" && !platform.ValidID(models.KindGoogle, d.LoginAccount) {
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
