package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func (h *Handler) showDatasets(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	ds, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	// Each destination's counts as the send log filtered by it counts
	// them, all in one read.
	counts, err := h.store.DestinationCounts(ctx, a.ID, views.CountCap+1)
	if err != nil {
		return err
	}
	items := make([]views.DatasetItem, 0, len(ds))
	for _, d := range ds {
		items = append(items, views.DatasetItem{Dataset: d, Platform: platform.Name(d.Of()), Counts: views.EventCounts(counts[d.ID])})
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
