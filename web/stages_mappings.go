package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// A stage mapping is a send rule of mode stage, made and changed on its
// own page under Stages; every change is a version, as a rule's is.

// mappingParam is the account's stage mapping named in the URL:
// ErrNotFound (404) for another account's, or for a send rule that is no
// stage mapping.
func (h *Handler) mappingParam(c echo.Context) (models.SendRule, error) {
	id, err := strconv.ParseInt(c.Param("mapping"), 10, 64)
	if err != nil {
		return models.SendRule{}, store.ErrNotFound
	}
	r, err := h.store.SendRule(c.Request().Context(), currentAccount(c).ID, id)
	if err == nil && rule.Mode(r.Mode) != rule.Stage {
		return models.SendRule{}, store.ErrNotFound
	}
	return r, err
}

// mappingForm shows the form as typed, with each problem at its input:
// the rule form's fields (ruleForm), the stage and repeatable; its
// conditions may also name the stage change's fields (mappingChoices).
func mappingForm(in mappingInput, env ruleEnv, stages []models.Stage, problems []rule.Problem) views.MappingForm {
	f := views.MappingForm{
		Stage:      views.Field{Name: "stage", Label: "When a lead reaches the stage", Value: in.Stage},
		Repeatable: in.Repeatable,
	}
	var rest []rule.Problem
	for _, p := range problems {
		switch p.Path {
		case "stage":
			if f.Stage.Error == "" {
				f.Stage.Error = sentence(p.Message)
			}
		case "name":
			// Names are made, not typed: a clash is the form's.
			rest = append(rest, rule.Problem{Path: "", Message: p.Message})
		default:
			rest = append(rest, p)
		}
	}
	f.Rule = ruleForm(in.ruleInput, env, rest)
	f.Rule.Choices = mappingChoices(env)
	eachRow(&f.Rule, func(c *views.RuleCondition) { fitRow(c, env.schema) })
	f.Rule.Warnings = sharedMappings(in.mapping(env.account.ID), env.rules)
	f.Rule.Dataset.Hint = "Where the event goes, one to each: Meta datasets, TikTok, Pinterest or Google Ads destinations."
	f.Rule.EventName.Hint = "One of Meta's standard events (Schedule, Purchase, ...) or a custom name such as QualifiedLead."
	f.Rule.Combinator.Label = "Combine conditions"
	listed := false
	for _, st := range stages {
		f.Stages = append(f.Stages, views.Option{Value: st.Name, Label: st.Name})
		if strings.EqualFold(st.Name, in.Stage) {
			f.Stage.Value, listed = st.Name, true
		}
	}
	if !listed && in.Stage != "" {
		// Shown as it is, never silently replaced by the first stage.
		f.Stages = append(f.Stages, views.Option{Value: in.Stage, Label: in.Stage + " (not in the list)"})
	}
	return f
}

// renderMapping shows the mapping page: the form, and for a saved mapping
// its delete button.
func (h *Handler) renderMapping(c echo.Context, status int, f views.MappingForm, saved *models.SendRule) error {
	title := "New stage mapping"
	if saved != nil {
		title = saved.Name
		f.Name = saved.Name
	}
	p := h.page(c, title)
	p.Nav = "stages"
	return render(c, status, views.MappingPage(p, f))
}

func (h *Handler) showNewMapping(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	env, err := h.ruleEnv(ctx, a.Account, 0)
	if err != nil {
		return err
	}
	stages, err := h.store.Stages(ctx, a.ID)
	if err != nil {
		return err
	}
	stage := ""
	if id, err := strconv.ParseInt(c.QueryParam("stage"), 10, 64); err == nil {
		for _, st := range stages {
			if st.ID == id {
				stage = st.Name
			}
		}
	}
	if stage == "" && len(stages) > 0 {
		stage = stages[0].Name
	}
	f := mappingForm(newMappingInput(env, stage), env, stages, nil)
	if len(env.datasets) == 0 {
		f.Rule.Error = "Connect a destination first: a stage mapping sends its event to the account's destinations."
	}
	return h.renderMapping(c, http.StatusOK, f, nil)
}

func (h *Handler) showMapping(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	r, err := h.mappingParam(c)
	if err != nil {
		return err
	}
	env, err := h.ruleEnv(ctx, a.Account, r.ID)
	if err != nil {
		return err
	}
	stages, err := h.store.Stages(ctx, a.ID)
	if err != nil {
		return err
	}
	return h.renderMapping(c, http.StatusOK, mappingForm(mappingInputOf(r), env, stages, nil), &r)
}

// readMappingInput reads the posted mapping form.
func readMappingInput(c echo.Context) mappingInput {
	return mappingInput{ruleInput: readRuleInput(c), Stage: strings.TrimSpace(c.FormValue("stage")), Repeatable: c.FormValue("repeatable") != ""}
}

func (h *Handler) createMapping(c echo.Context) error {
	return h.saveMapping(c, nil)
}

func (h *Handler) updateMapping(c echo.Context) error {
	saved, err := h.mappingParam(c)
	if err != nil {
		return err
	}
	return h.saveMapping(c, &saved)
}

// saveMapping creates a mapping (saved nil) or saves a change of one:
// checked whole, else the form again as typed with its problems, 422.
func (h *Handler) saveMapping(c echo.Context, saved *models.SendRule) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	var id int64
	if saved != nil {
		id = saved.ID
	}
	env, err := h.ruleEnv(ctx, a.Account, id)
	if err != nil {
		return err
	}
	stages, err := h.store.Stages(ctx, a.ID)
	if err != nil {
		return err
	}
	in := readMappingInput(c)
	in.ID = id
	r, problems := checkMapping(in, env, stages, saved)
	if len(problems) == 0 {
		if saved == nil {
			err = h.store.CreateSendRule(ctx, &r, &currentUser(c).ID)
		} else {
			err = h.store.SaveSendRule(ctx, &r, &currentUser(c).ID)
		}
		if problems = saveProblems(err); problems == nil && err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return h.renderMapping(c, http.StatusUnprocessableEntity, mappingForm(in, env, stages, problems), saved)
	}
	verb := "saved"
	if saved == nil {
		verb = "created"
		h.log.Info("stage mapping created", "account_id", a.ID, "rule_id", r.ID)
	}
	setFlash(c, "ok", "Mapping "+r.Name+" "+verb+": changes to "+r.Stage+" from now on send "+r.EventName+".")
	return redirect(c, views.AccountURL(a.ID, "/stages"))
}

func (h *Handler) deleteMapping(c echo.Context) error {
	a := currentAccount(c)
	r, err := h.mappingParam(c)
	if err != nil {
		return err
	}
	mappingURL := views.AccountURL(a.ID, "/stages/mappings/"+strconv.FormatInt(r.ID, 10))
	if c.FormValue("confirm") != "yes" {
		p := h.page(c, "Delete "+r.Name)
		p.Nav = "stages"
		return render(c, http.StatusOK, views.RuleConfirmPage(p, views.RuleConfirm{
			Title:   "Delete the mapping " + r.Name + "?",
			Message: "Changes to " + r.Stage + " will no longer send " + r.EventName + ".",
			Detail:  "Events it already queued stay, and its history is kept.",
			Action:  mappingURL + "/delete", Button: "Delete the mapping", Cancel: mappingURL, Danger: true,
		}))
	}
	if err := h.store.DeleteSendRule(c.Request().Context(), a.ID, r.ID, &currentUser(c).ID); err != nil {
		return err
	}
	h.log.Info("stage mapping deleted", "account_id", a.ID, "rule_id", r.ID)
	setFlash(c, "ok", "Mapping "+r.Name+" deleted.")
	return redirect(c, views.AccountURL(a.ID, "/stages"))
}

func (h *Handler) moveMapping(c echo.Context) error {
	r, err := h.mappingParam(c)
	if err != nil {
		return err
	}
	delta, err := direction(c)
	if err != nil {
		return err
	}
	if err := h.store.MoveSendRule(c.Request().Context(), currentAccount(c).ID, r.ID, delta); err != nil {
		return err
	}
	return h.stagesDone(c, "")
}

// sharedMappings warns, before mapping r is saved, of each other enabled
// mapping of its stage that sends the same event to the same dataset,
// once per lead like it or for every change like it: both make the same
// event id, and a lead gets one event, owned by the first of the two in
// order (see internal/decide). nil when r is disabled.
func sharedMappings(r models.SendRule, rules []models.SendRule) []string {
	if !r.Enabled {
		return nil
	}
	var warnings []string
	thisFirst := false // r comes before the others met so far
	for _, o := range withRule(rules, r) {
		if o.ID == r.ID {
			thisFirst = true
			continue
		}
		if !o.Enabled || !store.IsStageMapping(o, r.Stage) || !o.SharesDestination(r) || o.EventName != r.EventName ||
			o.Repeatable != r.Repeatable {
			continue
		}
		owner := o.Name
		if thisFirst {
			owner = "this mapping"
			if r.Name != "" {
				owner = r.Name
			}
		}
		warnings = append(warnings, fmt.Sprintf("Leads that reach %s and match both this mapping and %s get one %s event, owned by %s, "+
			"the first of the two in order.", r.Stage, o.Name, r.EventName, owner))
	}
	return warnings
}
