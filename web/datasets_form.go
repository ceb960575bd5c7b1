package web

import (
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/views"
)

var (
	apiVersionRE = regexp.MustCompile(`^v[0-9]{1,3}\.[0-9]$`)
	// oauthClientIDRE is a Google OAuth client id, as Google Cloud shows it.
	oauthClientIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{5,200}$`)
)

// datasetForm is the form of destination d with its platform's fields,
// labels and hints; canSecrets shows the secrets' inputs.
func (h *Handler) datasetForm(d models.Dataset, canSecrets bool) views.DatasetForm {
	version := d.APIVersion
	if version == "" {
		version = h.apiVersion
	}
	f := views.DatasetForm{
		ID:            d.ID,
		Kind:          d.Of(),
		Platform:      platform.Name(d.Of()),
		Name:          views.Field{Name: "name", Label: "Name", Required: true, Value: d.Name, Hint: "Referred to by send rules and setup files."},
		PixelID:       views.Field{Name: "pixel_id", Label: "Dataset id", Required: true, Value: d.PixelID, Hint: "Events Manager → Data sources → the dataset's id (digits)."},
		Token:         views.Field{Name: "access_token", Label: "Access token", Type: "password", Autocomplete: "off", Hint: tokenHint(d)},
		AppSecret:     views.Field{Name: "app_secret", Label: "App secret (optional)", Type: "password", Autocomplete: "off", Hint: appSecretHint(d)},
		TestEventCode: views.Field{Name: "test_event_code", Label: "Test event code", Value: d.TestEventCode, Hint: "From Events Manager → Test events, e.g. TEST12345."},
		APIVersion:    views.Field{Name: "api_version", Label: "Graph API version", Value: version},
		Mode:          views.Field{Name: "mode", Label: "Mode", Value: string(d.Mode)},
		LDU:           views.Field{Name: "ldu", Label: "Limited Data Use", Value: string(d.LDU)},
		EventSource:   views.Field{Name: "event_source", Label: "Event source", Value: d.EventSource, Hint: "What the id above is: a pixel for website leads, a CRM event set for CRM stages."},
		EventNames: views.Field{Name: "event_names", Label: "Own event names (optional)", Value: platform.EventNamesText(d.EventNames),
			Hint: "One a line, like QualifiedLead = ApplicationApproval: our event, then the platform's name for it. Others keep their default names."},
		TokenLast4:    d.TokenLast4,
		HasAppSecret:  d.AppSecretSealed != "",
		CanSetSecrets: canSecrets,
	}
	switch d.Of() {
	case models.KindTikTok:
		f.PixelID.Label, f.PixelID.Hint = "Pixel code or event set id", "Events Manager → the pixel's code (web) or the CRM event set's id."
		f.Token.Hint = "An Events API access token generated for this pixel or event set. Stored encrypted; never shown again."
		f.TestEventCode.Hint = "From Events Manager → Test events, e.g. TEST12345; test mode sends with it."
		if f.EventSource.Value == "" {
			f.EventSource.Value = "web"
		}
	case models.KindPinterest:
		f.PixelID.Label, f.PixelID.Hint = "Ad account id", "Ads Manager → the ad account's id (digits)."
		f.Token.Label, f.Token.Hint = "Conversion token", "Ads Manager → Conversions → the Conversions API token. Stored encrypted; never shown again."
	case models.KindGoogle:
		f.PixelID.Label, f.PixelID.Hint = "Google Ads account", "The customer id of the account that owns the conversion actions, like 123-456-7890."
		f.Token.Label, f.Token.Hint = "OAuth refresh token", "Granted to the OAuth client for the datamanager scope. Stored encrypted; never shown again."
		f.AppSecret.Label, f.AppSecret.Hint = "OAuth client secret", "Google Cloud → Credentials → the OAuth client's secret. Stored encrypted."
		if d.AppSecretSealed != "" {
			f.AppSecret.Hint = "Stored. Leave empty to keep it."
		}
		f.EventNames.Label = "Conversion actions"
		f.EventNames.Hint = "One a line, like Lead = 123456789: our event, then the id of the Google Ads conversion action it counts as. An event without one is held back."
	}
	f.LoginAccount = views.Field{Name: "login_account", Label: "Manager account (optional)", Value: d.LoginAccount,
		Hint: "When access goes through a manager account: its customer id."}
	f.ClientID = views.Field{Name: "client_id", Label: "OAuth client id", Value: d.ClientID, Autocomplete: "off",
		Hint: "Google Cloud → Credentials → the OAuth client of the project with the Data Manager API enabled."}
	f.Consent = views.Field{Name: "consent", Label: "Consent", Value: string(d.Consent),
		Hint: "Stated with every event for ad user data and personalisation."}
	if d.TokenLast4 != "" {
		f.Token.Hint = tokenHint(d)
	}
	return f
}

// kindChoices are the kinds a new destination can be, each with its form.
func kindChoices(accountID int64) []views.KindChoice {
	var out []views.KindChoice
	for _, k := range models.Kinds {
		if platform.Supported(k) {
			out = append(out, views.KindChoice{Kind: k, Platform: platform.Name(k), URL: views.AccountURL(accountID, "/datasets/new?kind="+string(k))})
		}
	}
	return out
}

func tokenHint(d models.Dataset) string {
	if d.TokenLast4 != "" {
		return "Stored: …" + d.TokenLast4 + ". Leave empty to keep it; it is never shown."
	}
	return "A Conversions API token from Events Manager → Settings. Stored encrypted; never shown again."
}

func appSecretHint(d models.Dataset) string {
	if d.AppSecretSealed != "" {
		return "Stored. Leave empty to keep it. Adds appsecret_proof to each request."
	}
	return "Adds appsecret_proof to each request, when your app requires it."
}

// readDatasetForm applies the posted form to d and says what is wrong.
func (h *Handler) readDatasetForm(c echo.Context, d *models.Dataset, canSecrets bool) (views.DatasetForm, string, string, bool) {
	kind := d.Of()
	d.Name = strings.TrimSpace(c.FormValue("name"))
	d.PixelID = strings.TrimSpace(c.FormValue("pixel_id"))
	d.TestEventCode = strings.TrimSpace(c.FormValue("test_event_code"))
	d.Mode = models.Mode(c.FormValue("mode"))
	d.LDU = models.LDU(c.FormValue("ldu"))
	if kind == models.KindMeta {
		d.APIVersion = strings.TrimSpace(c.FormValue("api_version"))
	}
	if kind == models.KindTikTok {
		d.EventSource = c.FormValue("event_source")
	}
	if kind == models.KindGoogle {
		d.PixelID = strings.ReplaceAll(d.PixelID, "-", "")
		d.LoginAccount = strings.ReplaceAll(strings.TrimSpace(c.FormValue("login_account")), "-", "")
		d.ClientID = strings.TrimSpace(c.FormValue("client_id"))
		d.Consent = models.Consent(c.FormValue("consent"))
		d.LDU = models.LDUOff
	}
	namesText := c.FormValue("event_names")
	var namesErr error
	if kind != models.KindMeta {
		d.EventNames, namesErr = platform.ParseEventNames(kind, namesText)
	}
	token, appSecret := "", ""
	if canSecrets {
		token = strings.TrimSpace(c.FormValue("access_token"))
		if kind == models.KindMeta || kind == models.KindGoogle {
			appSecret = strings.TrimSpace(c.FormValue("app_secret"))
		}
	}
	f := h.datasetForm(*d, canSecrets)
	f.Name.Error = validName(d.Name)
	if !platform.ValidID(kind, d.PixelID) {
		f.PixelID.Error = "Enter " + platform.IDWant(kind) + "."
	}
	switch kind {
	case models.KindTikTok:
		switch d.EventSource {
		case "web", "crm", "offline":
		default:
			f.EventSource.Error = "Choose what the id is: a pixel, a CRM or an offline event set."
		}
	case models.KindGoogle:
		if d.LoginAccount != "" && !platform.ValidID(models.KindGoogle, d.LoginAccount) {
			f.LoginAccount.Error = "Enter the manager's customer id: 10 digits, or leave it empty."
		}
		if d.ClientID != "" && !oauthClientIDRE.MatchString(d.ClientID) {
			f.ClientID.Error = "Paste the client id as Google Cloud shows it."
		} else if d.ClientID == "" && d.Mode != models.ModeDryRun {
			f.ClientID.Error = "Live and test modes need the OAuth client id; use dry run until you have one."
		}
		switch d.Consent {
		case models.ConsentNone, models.ConsentGranted, models.ConsentDenied:
		default:
			f.Consent.Error = "Choose a consent."
		}
		if d.Mode != models.ModeDryRun && d.AppSecretSealed == "" && appSecret == "" {
			f.AppSecret.Error = "Live and test modes need the OAuth client secret."
		}
	}
	if kind != models.KindMeta {
		// Keep what was typed, whatever else is wrong.
		f.EventNames.Value = namesText
	}
	if namesErr != nil {
		f.EventNames.Error = namesErr.Error()
	}
	if d.APIVersion != "" && !apiVersionRE.MatchString(d.APIVersion) {
		f.APIVersion.Error = "Write the version like v24.0."
	}
	switch d.Mode {
	case models.ModeLive, models.ModeTest, models.ModeDryRun:
	default:
		f.Mode.Error = "Choose a mode."
	}
	switch d.LDU {
	case models.LDUOff, models.LDUCalifornia, models.LDUAlways:
	default:
		f.LDU.Error = "Choose a Limited Data Use setting."
	}
	if d.Mode == models.ModeTest && d.TestEventCode == "" && (kind == models.KindMeta || kind == models.KindTikTok) {
		f.TestEventCode.Error = "Test mode needs the test event code from Events Manager."
	}
	if msg := rule.TestEventCodeProblem(d.TestEventCode); msg != "" {
		f.TestEventCode.Error = sentence(msg)
	}
	if d.Mode != models.ModeDryRun && d.TokenSealed == "" && token == "" {
		f.Token.Error = "Live and test modes need an access token; use dry run until you have one."
	}
	if msg := secretProblem(token); msg != "" {
		f.Token.Error = msg
	}
	if msg := secretProblem(appSecret); msg != "" {
		f.AppSecret.Error = msg
	}
	ok := f.Name.Error == "" && f.PixelID.Error == "" && f.APIVersion.Error == "" && f.Mode.Error == "" &&
		f.LDU.Error == "" && f.TestEventCode.Error == "" && f.Token.Error == "" && f.EventSource.Error == "" && f.EventNames.Error == "" &&
		f.LoginAccount.Error == "" && f.ClientID.Error == "" && f.Consent.Error == "" && f.AppSecret.Error == ""
	return f, token, appSecret, ok
}

// sealSecrets encrypts new secrets into d; empty values keep the old ones.
func (h *Handler) sealSecrets(d *models.Dataset, token, appSecret string) {
	if token != "" {
		d.TokenSealed = h.box.Seal(token, dispatch.TokenLabel(d.ID))
		d.TokenLast4 = last4(token)
		d.TokenEnv = ""
	}
	if appSecret != "" {
		d.AppSecretSealed = h.box.Seal(appSecret, dispatch.AppSecretLabel(d.ID))
		d.AppSecretEnv = ""
	}
}

func last4(s string) string {
	if len(s) <= 4 {
		return ""
	}
	return s[len(s)-4:]
}

// destinationLabel names a destination where events are listed: its name,
// with its platform unless it is Meta's.
func destinationLabel(d models.Dataset) string {
	if d.Of() == models.KindMeta {
		return d.Name
	}
	return d.Name + " (" + platform.Name(d.Of()) + ")"
}

// destinationsLabel names the destinations of ds (an account's, in the
// order its pages list them) that rule r sends to: "Leads, TikTok Ads
// (TikTok)".
func destinationsLabel(ds []models.Dataset, r models.SendRule) string {
	var names []string
	for _, d := range ds {
		if r.SendsTo(d.ID) {
			names = append(names, destinationLabel(d))
		}
	}
	return strings.Join(names, ", ")
}

// destinationNoun is what people call a destination of kind k: a Meta
// dataset is a dataset.
func destinationNoun(k models.Kind) string {
	if k == "" || k == models.KindMeta {
		return "dataset"
	}
	return platform.Name(k) + " destination"
}
