package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// ruleRoutes adds the rules' pages: the list, a rule and its saved
// preview to reads (sales read them), the forms that change them to g
// (editors and owners).
func (h *Handler) ruleRoutes(reads, g *echo.Group) {
	reads.GET("/rules", h.showRules)
	reads.GET("/rules/:rule", h.showRule)
	reads.GET("/rules/:rule/preview", h.previewSavedRule)
	g.GET("/rules/new", h.showNewRule)
	g.POST("/rules", h.createRule)
	g.GET("/rules/condition-row", h.ruleConditionRow)
	g.GET("/rules/condition-group", h.ruleConditionGroup)
	g.POST("/rules/preview", h.previewRule)
	g.POST("/rules/:rule", h.updateRule)
	g.POST("/rules/:rule/delete", h.deleteRule)
	g.POST("/rules/:rule/move", h.moveRule)
	g.GET("/rules/:rule/apply", h.applyRule)
	g.POST("/rules/:rule/apply", h.applyRule)
}

func (h *Handler) showRules(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	items, err := h.ruleItems(ctx, a.Account)
	if err != nil {
		return err
	}
	p := h.page(c, "Rules")
	p.Nav = "rules"
	return render(c, http.StatusOK, views.RulesPage(p, items))
}

// ruleItems lists the account's rules as the Rules page shows them.
func (h *Handler) ruleItems(ctx context.Context, a models.Account) ([]views.RuleListItem, error) {
	all, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	// Stage mappings are listed on the Stages page.
	rules := slices.DeleteFunc(all, func(r models.SendRule) bool { return rule.Mode(r.Mode) == rule.Stage })
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	now, loc := h.now(), location(a)
	items := make([]views.RuleListItem, 0, len(rules))
	for i, r := range rules {
		it := views.RuleListItem{ID: r.ID, Name: r.Name, Mode: modeOf(r.Mode).label, EventName: r.EventName, Enabled: r.Enabled,
			Conditions: ruleSummary(r), First: i == 0, Last: i == len(rules)-1, Changed: views.NewStamp(r.UpdatedAt, now, loc)}
		it.Dataset = destinationsLabel(datasets, r)
		if ds := decide.Destinations(datasets, r); len(ds) == 1 {
			it.Default = r.Mode == string(rule.AutomaticCompleted) && r.EventName == "Lead" && r.Name == store.DefaultRule(ds[0]).Name
		}
		items = append(items, it)
	}
	return items, nil
}

// ruleSummary says in words which leads a rule sends: its conditions
// joined by AND or OR, after what its mode implies.
func ruleSummary(r models.SendRule) string {
	spec, problems := rule.SpecOf(r)
	if len(problems) > 0 {
		return "conditions that cannot be read"
	}
	start := modeOf(r.Mode).leads
	if spec.Count() == 0 {
		return start
	}
	return start + " where " + spec.Text()
}

// ruleParam is the account's rule named in the URL: ErrNotFound (404) for
// another account's.
func (h *Handler) ruleParam(c echo.Context) (models.SendRule, error) {
	id, err := strconv.ParseInt(c.Param("rule"), 10, 64)
	if err != nil {
		return models.SendRule{}, store.ErrNotFound
	}
	r, err := h.store.SendRule(c.Request().Context(), currentAccount(c).ID, id)
	if err == nil && rule.Mode(r.Mode) == rule.Stage {
		// A stage mapping is the Stages page's.
		return models.SendRule{}, store.ErrNotFound
	}
	return r, err
}

// fragmentPage is what a fragment swapped into a page needs of it: the
// account for its URLs and the CSRF token for its forms. Unlike h.page it
// leaves the flash for the next full page.
func fragmentPage(c echo.Context) views.Page {
	return views.Page{Account: currentAccount(c), CSRF: csrfToken(c)}
}

func (h *Handler) deleteRule(c echo.Context) error {
	a := currentAccount(c)
	r, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	ruleURL := views.AccountURL(a.ID, "/rules/"+strconv.FormatInt(r.ID, 10))
	if c.FormValue("confirm") != "yes" {
		p := h.page(c, "Delete "+r.Name)
		p.Nav = "rules"
		return render(c, http.StatusOK, views.RuleConfirmPage(p, views.RuleConfirm{
			Title:   "Delete the rule " + r.Name + "?",
			Message: "New leads will no longer be checked against it, and its conditions are gone.",
			Detail:  "Events it already queued stay, and its history is kept.",
			Action:  ruleURL + "/delete", Button: "Delete the rule", Cancel: ruleURL, Danger: true,
		}))
	}
	if err := h.store.DeleteSendRule(c.Request().Context(), a.ID, r.ID, &currentUser(c).ID); err != nil {
		return err
	}
	h.log.Info("send rule deleted", "account_id", a.ID, "rule_id", r.ID)
	setFlash(c, "ok", "Rule "+r.Name+" deleted.")
	return redirect(c, views.AccountURL(a.ID, "/rules"))
}

func (h *Handler) moveRule(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	r, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	delta := 0
	switch c.FormValue("direction") {
	case "up":
		delta = -1
	case "down":
		delta = 1
	default:
		return echo.NewHTTPError(http.StatusBadRequest, "Move a rule up or down")
	}
	if err := h.store.MoveSendRule(ctx, a.ID, r.ID, delta); err != nil {
		return err
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/rules"))
	}
	items, err := h.ruleItems(ctx, a.Account)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RulesList(fragmentPage(c), items))
}
