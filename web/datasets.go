package web

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

var (
	pixelIDRE    = regexp.MustCompile(`^[0-9]{5,20}$`)
	apiVersionRE = regexp.MustCompile(`^v[0-9]{1,3}\.[0-9]$`)
	// tiktokIDRE is a TikTok pixel code (letters and digits) or event set
	// id (digits).
	tiktokIDRE = regexp.MustCompile(`^[A-Za-z0-9]{5,40}$`)
	// googleAccountRE is a Google Ads customer id without its hyphens.
	googleAccountRE = regexp.MustCompile(`^[0-9]{10}$`)
	// oauthClientIDRE is a Google OAuth client id, as Google Cloud shows it.
	oauthClientIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{5,200}$`)
)

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

func (h *Handler) showDatasets(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	ds, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	items := make([]views.DatasetItem, 0, len(ds))
	for _, d := range ds {
		n, err := h.datasetCounts(c, d.ID)
		if err != nil {
			return err
		}
		items = append(items, views.DatasetItem{Dataset: d, Platform: platform.Name(d.Of()), Counts: n})
	}
	p := h.page(c, "Destinations")
	p.Nav = "datasets"
	return render(c, http.StatusOK, views.DatasetsPage(p, items))
}

// datasetCounts counts a dataset's events per status as the send log
// does, so that each count is the rows the send log shows for it.
func (h *Handler) datasetCounts(c echo.Context, datasetID int64) (views.EventCounts, error) {
	n, err := h.store.EventCounts(c.Request().Context(), currentAccount(c).ID, store.EventFilter{DatasetID: datasetID}, views.CountCap+1)
	return views.EventCounts(n), err
}

func (h *Handler) showNewDataset(c echo.Context) error {
	kind := models.Kind(c.QueryParam("kind"))
	if kind == "" {
		kind = models.KindMeta
	}
	if !platform.Supported(kind) {
		return store.ErrNotFound
	}
	f := h.datasetForm(models.Dataset{Kind: kind, Mode: models.ModeDryRun, LDU: models.LDUOff}, true)
	return h.renderDataset(c, http.StatusOK, f, nil, nil)
}

func (h *Handler) renderDataset(c echo.Context, status int, f views.DatasetForm, d *models.Dataset, test *views.TestResult) error {
	a := currentAccount(c)
	v := views.DatasetView{Form: f, Dataset: d, Test: test, Platform: f.Platform}
	v.Form.Kinds = kindChoices(a.ID)
	title := "Connect a destination"
	if d != nil {
		title = d.Name
		rs, err := h.store.SendRequests(c.Request().Context(), a.ID, d.ID, 20)
		if err != nil {
			return err
		}
		now, loc := h.now(), location(a.Account)
		for _, r := range rs {
			v.Requests = append(v.Requests, views.RequestItem{When: views.NewStamp(r.StartedAt, now, loc), Kind: r.Kind, Events: r.EventsCount,
				Status: r.HTTPStatus, Received: r.EventsReceived, Duration: r.DurationMS, Trace: r.FBTraceID, Error: r.Error})
		}
		if v.Counts, err = h.datasetCounts(c, d.ID); err != nil {
			return err
		}
	}
	p := h.page(c, title)
	p.Nav = "datasets"
	return render(c, status, views.DatasetPage(p, v))
}

func (h *Handler) datasetParam(c echo.Context) (models.Dataset, error) {
	id, err := strconv.ParseInt(c.Param("dataset"), 10, 64)
	if err != nil {
		return models.Dataset{}, store.ErrNotFound
	}
	return h.store.Dataset(c.Request().Context(), currentAccount(c).ID, id)
}

func (h *Handler) showDataset(c echo.Context) error {
	d, err := h.datasetParam(c)
	if err != nil {
		return err
	}
	f := h.datasetForm(d, currentAccount(c).Role.AtLeast(models.RoleEditor))
	return h.renderDataset(c, http.StatusOK, f, &d, nil)
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
	switch kind {
	case models.KindMeta:
		if !pixelIDRE.MatchString(d.PixelID) {
			f.PixelID.Error = "Enter the dataset id: digits only, as Events Manager shows it."
		}
	case models.KindTikTok:
		if !tiktokIDRE.MatchString(d.PixelID) {
			f.PixelID.Error = "Enter the pixel code or event set id: letters and digits, as Events Manager shows it."
		}
		switch d.EventSource {
		case "web", "crm", "offline":
		default:
			f.EventSource.Error = "Choose what the id is: a pixel, a CRM or an offline event set."
		}
	case models.KindPinterest:
		if !pixelIDRE.MatchString(d.PixelID) {
			f.PixelID.Error = "Enter the ad account id: digits only, as Ads Manager shows it."
		}
	case models.KindGoogle:
		if !googleAccountRE.MatchString(d.PixelID) {
			f.PixelID.Error = "Enter the customer id: 10 digits, like 123-456-7890."
		}
		if d.LoginAccount != "" && !googleAccountRE.MatchString(d.LoginAccount) {
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
	if d.Mode != models.ModeDryRun && d.TokenSealed == "" && token == "" {
		f.Token.Error = "Live and test modes need an access token; use dry run until you have one."
	}
	if strings.ContainsAny(token, " \t\n") {
		f.Token.Error = "An access token has no spaces; paste it again."
	}
	ok := f.Name.Error == "" && f.PixelID.Error == "" && f.APIVersion.Error == "" && f.Mode.Error == "" &&
		f.LDU.Error == "" && f.TestEventCode.Error == "" && f.Token.Error == "" && f.EventSource.Error == "" && f.EventNames.Error == "" &&
		f.LoginAccount.Error == "" && f.ClientID.Error == "" && f.Consent.Error == "" && f.AppSecret.Error == ""
	return f, token, appSecret, ok
}

// errTooManyDatasets ends the creation of a dataset beyond
// store.MaxDatasets.
var errTooManyDatasets = errors.New("too many datasets")

func (h *Handler) createDataset(c echo.Context) error {
	a := currentAccount(c)
	d := models.Dataset{AccountID: a.ID, Kind: models.Kind(c.FormValue("kind"))}
	if d.Kind == "" {
		d.Kind = models.KindMeta
	}
	if !platform.Supported(d.Kind) {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "unknown kind of destination")
	}
	f, token, appSecret, ok := h.readDatasetForm(c, &d, true)
	if !ok {
		return h.renderDataset(c, http.StatusUnprocessableEntity, f, nil, nil)
	}
	ctx := c.Request().Context()
	err := h.store.Tx(ctx, func(tx *store.Store) error {
		ds, err := tx.Datasets(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(ds) >= store.MaxDatasets {
			return errTooManyDatasets
		}
		if err := tx.CreateDataset(ctx, &d); err != nil {
			return err
		}
		// The seal label names the dataset id, known only after the insert.
		if token == "" && appSecret == "" {
			return nil
		}
		h.sealSecrets(&d, token, appSecret)
		return tx.SaveDataset(ctx, &d)
	})
	if errors.Is(err, store.ErrConflict) {
		f.Name.Error = "Another destination of this account has this name."
		return h.renderDataset(c, http.StatusUnprocessableEntity, f, nil, nil)
	}
	if errors.Is(err, errTooManyDatasets) {
		f.Error = fmt.Sprintf("An account has at most %d destinations: delete one it no longer needs first.", store.MaxDatasets)
		return h.renderDataset(c, http.StatusUnprocessableEntity, f, nil, nil)
	}
	if err != nil {
		return err
	}
	h.log.Info("dataset connected", "account_id", a.ID, "dataset_id", d.ID, "kind", d.Kind, "mode", d.Mode)
	if d.Of() == models.KindMeta {
		setFlash(c, "ok", "Dataset "+d.Name+" connected.")
	} else {
		setFlash(c, "ok", platform.Name(d.Of())+" destination "+d.Name+" connected.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(d.ID, 10)))
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

func (h *Handler) updateDataset(c echo.Context) error {
	a := currentAccount(c)
	d, err := h.datasetParam(c)
	if err != nil {
		return err
	}
	canSecrets := a.Role.AtLeast(models.RoleEditor)
	before := d
	f, token, appSecret, ok := h.readDatasetForm(c, &d, canSecrets)
	if !ok {
		return h.renderDataset(c, http.StatusUnprocessableEntity, f, &before, nil)
	}
	h.sealSecrets(&d, token, appSecret)
	ctx := c.Request().Context()
	err = h.store.SaveDataset(ctx, &d)
	if errors.Is(err, store.ErrConflict) {
		f.Name.Error = "Another destination of this account has this name."
		return h.renderDataset(c, http.StatusUnprocessableEntity, f, &before, nil)
	}
	if err != nil {
		return err
	}
	msg := "Dataset saved."
	if dispatch.FixesPause(before, d) {
		if err := h.store.ResumeDataset(ctx, a.ID, d.ID, h.now()); err != nil {
			return err
		}
		h.notify()
		msg = "Dataset saved: sending resumes now."
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(d.ID, 10)))
}

// sendTestEvent posts one Lead event with the dataset's test event code and
// shows Meta's answer in plain words. In dry run it sends nothing and shows
// the event's JSON instead, as the send log shows it (readableJSON).
func (h *Handler) sendTestEvent(c echo.Context) error {
	a := currentAccount(c)
	d, err := h.datasetParam(c)
	if err != nil {
		return err
	}
	tester := dispatch.Tester{Store: h.store, Sender: h.sender, Box: h.box, GraphURL: h.graphURL, DefaultVersion: h.apiVersion, Platforms: h.platforms}
	r, err := tester.SendTest(c.Request().Context(), a.Account, d, h.now())
	if err != nil {
		return err
	}
	status := http.StatusOK
	switch {
	case r.DryRun:
		// Nothing was to be sent: the payload is the answer.
	case !r.Sent:
		status = http.StatusUnprocessableEntity
	case !r.OK:
		status = http.StatusBadGateway
	}
	v := &views.TestResult{OK: r.OK, DryRun: r.DryRun, Title: r.Title, Message: r.Message}
	if len(r.Payload) > 0 {
		v.Payload = readableJSON(r.Payload)
	}
	f := h.datasetForm(d, a.Role.AtLeast(models.RoleEditor))
	return h.renderDataset(c, status, f, &d, v)
}

// accountAlerts are the banners of an account: datasets paused because
// Meta refused their token, and datasets held because Meta is unreachable,
// with what waits and when it starts to expire; and, for the people who can
// act on them, CRM connections whose deliveries are stuck (crmAlerts).
func (h *Handler) accountAlerts(c echo.Context, a models.Account) []views.Alert {
	stalled, err := h.store.StalledDatasets(c.Request().Context(), a.ID)
	if err != nil {
		h.log.Error("stalled datasets", "error", err)
		return nil
	}
	var out []views.Alert
	reads := currentAccount(c) != nil && currentAccount(c).Role.AtLeast(models.RoleSales)
	for _, b := range stalled {
		page := views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(b.ID, 10))
		if !reads {
			page = "" // a viewer cannot open the dataset
		}
		if b.PausedAt != nil {
			msg := fmt.Sprintf("Sending to %s %s is paused: %s %d events wait.", destinationNoun(b.Kind), b.Name, b.PausedReason, b.Waiting)
			if b.Oldest != nil {
				msg += " The oldest expires " + h.formatTime(a, ptr(b.Oldest.Add(dispatch.MaxAge))) + "."
			}
			out = append(out, views.Alert{Message: msg, Link: page, LinkText: "Save a new token"})
			continue
		}
		al := views.Alert{Message: h.holdMessage(a, b), Link: page, LinkText: "Open the dataset"}
		if acc := currentAccount(c); acc != nil && acc.Role.AtLeast(models.RoleEditor) {
			al.Action, al.ActionText = page+"/probe", "Try now"
		}
		out = append(out, al)
	}
	return append(out, h.crmAlerts(c, a)...)
}

// holdMessage says what a held dataset's people need to know: since when
// Meta is unreachable, what waits, when the next try goes and why the
// last one failed.
func (h *Handler) holdMessage(a models.Account, b store.DatasetBacklog) string {
	now := h.now()
	msg := fmt.Sprintf("%s unreachable for %s %s since %s (%s): %s waiting", platform.Name(b.Kind), destinationNoun(b.Kind), b.Name,
		h.formatTime(a, b.HeldSince), views.Elapsed(max(now.Sub(*b.HeldSince), 0)), views.Plural(b.Waiting, "event", "events"))
	if b.HoldUntil != nil {
		if b.HoldUntil.After(now) {
			msg += ", next try " + b.HoldUntil.In(location(a)).Format("15:04:05")
		} else {
			msg += ", trying now"
		}
	}
	msg += ". Last error: " + b.HoldError + "."
	if b.Oldest != nil {
		msg += " Nothing is lost before the oldest expires " + h.formatTime(a, ptr(b.Oldest.Add(dispatch.MaxAge))) + "."
	}
	return msg
}

// probeDataset is an editor's "try now" for a held dataset: its next try
// goes at once.
func (h *Handler) probeDataset(c echo.Context) error {
	a := currentAccount(c)
	id, err := strconv.ParseInt(c.Param("dataset"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	held, err := h.store.ProbeNow(c.Request().Context(), a.ID, id, h.now())
	if err != nil {
		return err
	}
	if held {
		h.notify()
		setFlash(c, "ok", "Trying again now.")
	} else {
		// A second click, or a page left open after the hold lifted.
		setFlash(c, "ok", "The platform is reachable again: this destination sends as usual.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(id, 10)))
}

func ptr[T any](v T) *T { return &v }

// destinationLabel names a destination where events are listed: its name,
// with its platform unless it is Meta's.
func destinationLabel(d models.Dataset) string {
	if d.Of() == models.KindMeta {
		return d.Name
	}
	return d.Name + " (" + platform.Name(d.Of()) + ")"
}

// destinationNoun is what people call a destination of kind k: a Meta
// dataset is a dataset.
func destinationNoun(k models.Kind) string {
	if k == "" || k == models.KindMeta {
		return "dataset"
	}
	return platform.Name(k) + " destination"
}
