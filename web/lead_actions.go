package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// addLeadStage records a person's stage change or junk verdict on a lead
// through the one recorder (decide.Decider.Record), and says which events
// it queued; a change the recorder refuses is shown at its field.
func (h *Handler) addLeadStage(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	l, err := h.leadParam(c)
	if err != nil {
		return err
	}
	form, _, err := h.stageForm(ctx, a.Account)
	if err != nil {
		return err
	}
	form.Stage.Value = c.FormValue("stage")
	form.Value.Value = strings.TrimSpace(c.FormValue("value"))
	if cur := strings.ToUpper(strings.TrimSpace(c.FormValue("currency"))); cur != "" {
		form.Currency.Value = cur
	}
	change := decide.Change{Keys: decide.ByID(l.ID), Stage: form.Stage.Value, OccurredAt: h.now(), UserID: &currentUser(c).ID,
		Origin: decide.FromPerson, Via: models.ViaPerson}
	if form.Value.Value != "" {
		v, ok := rule.Amount(form.Value.Value)
		if !ok {
			form.Value.Error = "Enter an amount from 0 to 1,000,000,000,000 (a trillion), in digits, like 1250 or 99.90."
			return h.renderLead(c, http.StatusUnprocessableEntity, l, form)
		}
		// A value goes to Meta with its currency, whatever the stage.
		change.Value, change.Currency = &v, form.Currency.Value
	}
	if c.FormValue("confirm") != "1" {
		// A Purchase to a live dataset is money Meta optimises for: the
		// person sees the event and its value first (DESIGN.md, "Roles").
		dry, err := h.decider.DryRun(ctx, a.ID, []decide.Change{change})
		if err != nil {
			return err
		}
		if form.Confirm = livePurchases(dry[0]); form.Confirm != nil {
			return h.renderLead(c, http.StatusOK, l, form)
		}
	}
	res, err := h.decider.Record(ctx, a.ID, change)
	if err != nil {
		return err
	}
	if r := res.Refused; r != nil {
		switch r.Field {
		case "value":
			form.Value.Error = sentence(r.Message)
		case "currency":
			form.Currency.Error = sentence(r.Message)
		default:
			form.Stage.Error = sentence(r.Message)
		}
		return h.renderLead(c, http.StatusUnprocessableEntity, l, form)
	}
	stage := res.Change.Stage
	msg := "Stage set to " + stage + "."
	if !res.Replayed {
		msg += queuedText(res.Events)
	}
	switch stage {
	case models.StageJunk:
		msg = "Marked as junk: it will not be sent to Meta."
	case models.StageNotJunk:
		msg = "Marked as not junk: it is eligible for sending like any other lead."
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)))
}

// livePurchases is what a person confirms before a stage change queues a
// Purchase for a live dataset: the event, its value and the datasets; nil
// when the change queues none (a dry run or test dataset, a Purchase held
// back, a change refused).
func livePurchases(out decide.Outcome) *views.StageConfirm {
	if out.Refused != nil {
		return nil
	}
	live := map[int64]string{}
	for _, d := range out.Datasets {
		if d.Mode == models.ModeLive {
			live[d.ID] = destinationLabel(d)
		}
	}
	var cf *views.StageConfirm
	for _, e := range out.Events {
		name, ok := live[e.DatasetID]
		if !ok || e.EventName != "Purchase" || e.Status != models.EventQueued {
			continue
		}
		if cf == nil {
			cf = &views.StageConfirm{Stage: out.Change.Stage, Event: e.EventName}
			if e.Value != nil {
				cf.Value = views.StageValue(*e.Value, e.Currency)
			}
		}
		if !slices.Contains(cf.Datasets, name) {
			cf.Datasets = append(cf.Datasets, name)
		}
	}
	return cf
}

// queuedText names the events a stage change queued, in order, for the
// page's message: " Queued QualifiedLead (filled in), Purchase.", or ""
// for none; a test lead's are made and not sent.
func queuedText(evs []models.Event) string {
	if len(evs) == 0 {
		return ""
	}
	names := make([]string, len(evs))
	test := true
	for i, e := range evs {
		names[i] = e.EventName
		if e.FilledIn {
			names[i] += " (filled in)"
		}
		test = test && e.LastError == models.ReasonTestLead
	}
	if test {
		return " Made " + strings.Join(names, ", ") + ", not sent: a test lead's events never go to Meta."
	}
	return " Queued " + strings.Join(names, ", ") + "."
}

// sendRuleEvent queues a manual send rule's event for a lead: its button
// on the lead page, for editors and owners.
func (h *Handler) sendRuleEvent(c echo.Context) error {
	a := currentAccount(c)
	l, err := h.leadParam(c)
	if err != nil {
		return err
	}
	ruleID, err := strconv.ParseInt(c.Param("rule"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	r, err := h.store.SendRule(c.Request().Context(), a.ID, ruleID)
	if err != nil {
		return err
	}
	queued, err := h.decider.SendManual(c.Request().Context(), a.ID, l.ID, r.ID, h.now().UTC())
	switch {
	case errors.Is(err, decide.ErrNotManual):
		setFlash(c, "error", "The rule "+r.Name+" is not an enabled manual rule.")
	case errors.Is(err, decide.ErrNoMatch):
		setFlash(c, "error", "This lead does not meet the conditions of "+r.Name+": nothing was sent.")
	case err != nil:
		return err
	case queued && l.Test:
		setFlash(c, "ok", r.EventName+" made by "+r.Name+", not sent: a test lead's events never go to Meta.")
	case queued:
		setFlash(c, "ok", r.EventName+" queued for Meta by "+r.Name+".")
	default:
		setFlash(c, "ok", r.EventName+" was already queued for this lead by "+r.Name+": nothing is sent twice.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)))
}
