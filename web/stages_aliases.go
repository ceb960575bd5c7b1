package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// A stage's aliases are the other labels CRMs and files use for it
// (DESIGN.md, "Stage names and aliases"): the Stages page lists them under
// the stage, where an editor adds and removes them, and offers each label
// of "Not in the list" as an alias of a stage before it offers a new
// stage.

// addStageAlias adds the typed label to a stage's aliases.
func (h *Handler) addStageAlias(c echo.Context) error {
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	label := strings.TrimSpace(c.FormValue("alias"))
	return h.saveStageAlias(c, st, label, func(msg string) error {
		return h.aliasProblem(c, func(v *views.StagesView) {
			for i := range v.Stages {
				if it := &v.Stages[i]; it.ID == st.ID {
					it.Alias.Value, it.Alias.Error = label, msg
				}
			}
		})
	})
}

// aliasUnmapped saves a label of "Not in the list" as an alias of the
// stage chosen for it: its changes count as that stage from then on.
func (h *Handler) aliasUnmapped(c echo.Context) error {
	label := strings.TrimSpace(c.FormValue("label"))
	problem := func(msg string) error {
		return h.aliasProblem(c, func(v *views.StagesView) {
			for i := range v.Unmapped {
				if u := &v.Unmapped[i]; u.Name == label {
					u.Stage, u.Error = c.FormValue("stage"), msg
					return
				}
			}
			// The label left the section meanwhile (another tab): the
			// reason goes to the stage chosen, else under the add form.
			for i := range v.Stages {
				if it := &v.Stages[i]; it.ID != 0 && strconv.FormatInt(it.ID, 10) == c.FormValue("stage") {
					it.Error = msg
					return
				}
			}
			v.AddStage.Error = msg
		})
	}
	if c.FormValue("stage") == "" {
		return problem("Choose the stage " + quoteLabel(label) + " is.")
	}
	id, err := strconv.ParseInt(c.FormValue("stage"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	st, err := h.store.Stage(c.Request().Context(), currentAccount(c).ID, id)
	if err != nil {
		return err
	}
	return h.saveStageAlias(c, st, label, problem)
}

// saveStageAlias adds label to st's aliases and answers with the list as
// it is now; a label that cannot be one goes to problem, in words.
func (h *Handler) saveStageAlias(c echo.Context, st models.Stage, label string, problem func(string) error) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	switch {
	case label == "":
		return problem("Type the label your CRM or file uses for " + st.Name + ", like Closed Won.")
	case name.StageKey(label) == name.StageKey(st.Name) && name.StageKey(label) != "":
		return problem(quoteLabel(label) + " reads as the stage's own name: changes under it count as " + st.Name + " already.")
	}
	saved, err := h.store.AddStageAlias(ctx, a.ID, st.ID, label)
	if ae, ok := errors.AsType[*store.AliasError](err); ok {
		ss, err := h.store.Stages(ctx, a.ID)
		if err != nil {
			return err
		}
		return problem(aliasErrorWords(ae, ss, st.ID))
	}
	if err != nil {
		return err
	}
	h.log.Info("stage alias added", "account_id", a.ID, "stage_id", st.ID, "aliases", len(saved.Aliases))
	return h.stagesDone(c, quoteLabel(label)+" is an alias of "+saved.Name+" now: changes recorded under it count as "+saved.Name+".")
}

// deleteStageAlias removes a label from a stage's aliases: changes under
// it show as not in the list again (unless a CRM connection maps it).
func (h *Handler) deleteStageAlias(c echo.Context) error {
	a := currentAccount(c)
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	label := c.FormValue("alias")
	k := name.StageKey(label)
	kept := slices.DeleteFunc(slices.Clone(st.Aliases), func(x string) bool { return name.StageKey(x) == k })
	if len(kept) == len(st.Aliases) {
		return h.stagesDone(c, "")
	}
	if _, err := h.store.SetStageAliases(c.Request().Context(), a.ID, st.ID, kept); err != nil {
		return err
	}
	h.log.Info("stage alias removed", "account_id", a.ID, "stage_id", st.ID)
	return h.stagesDone(c, quoteLabel(label)+" is no longer an alias of "+st.Name+".")
}

// aliasProblem shows the Stages page again, 422, with set's inline error
// (and what was typed) on it.
func (h *Handler) aliasProblem(c echo.Context, set func(v *views.StagesView)) error {
	v, err := h.stagesView(c)
	if err != nil {
		return err
	}
	set(&v)
	return h.renderStages(c, http.StatusUnprocessableEntity, v)
}

// aliasErrorWords says why a label cannot be an alias of the stage id: the
// stage of ss whose name or alias it reads as, else the store's reason.
func aliasErrorWords(ae *store.AliasError, ss []models.Stage, id int64) string {
	if _, err := store.CleanAliases("", []string{ae.Alias}); err != nil {
		return sentence(err.Error()) // not a label at all
	}
	if owner, ok := store.LabelOwner(ss, ae.Alias, id); ok {
		return quoteLabel(ae.Alias) + " already names the stage " + owner.Name + "."
	}
	return sentence(ae.Message)
}

// takenWords says which stage of ss already has label (its name, or an
// alias), for a rename or a new stage refused with store.ErrConflict.
func takenWords(ss []models.Stage, label string, except int64) string {
	owner, ok := store.LabelOwner(ss, label, except)
	switch {
	case !ok:
		return "Another stage of the list has this name (names are matched ignoring case, spaces and punctuation)."
	case name.StageKey(owner.Name) == name.StageKey(label):
		return quoteLabel(label) + " reads as the stage " + owner.Name + " (names are matched ignoring case, spaces and punctuation)."
	}
	return quoteLabel(label) + " is an alias of the stage " + owner.Name + ": remove it there first."
}

// labelKey is how the page groups stage labels: name.StageKey, and a
// label without a letter or digit by itself, lower-cased.
func labelKey(label string) string {
	if k := name.StageKey(label); k != "" {
		return k
	}
	return "\x00" + strings.ToLower(label)
}

// crmLabels are the labels (else ids) of rows, the stage tables of the
// CRM connections conns, mapped to stage, with their connection, in rows'
// order, each linked to its connection's page.
func crmLabels(accountID int64, conns []models.CRMConnection, rows []models.CRMStage, stage string) []views.CRMLabel {
	var out []views.CRMLabel
	for _, r := range rows {
		label := r.Label
		if label == "" {
			label = r.CRMStageID
		}
		j := slices.IndexFunc(conns, func(c models.CRMConnection) bool { return c.ID == r.ConnectionID })
		if j < 0 || !strings.EqualFold(stage, r.Stage) {
			continue
		}
		out = append(out, views.CRMLabel{Connection: conns[j].Name, Label: label,
			URL: views.AccountURL(accountID, "/stages/crm/"+strconv.FormatInt(r.ConnectionID, 10))})
	}
	return out
}

// quoteLabel writes a stage label as the page quotes it: 'Closed Won'.
func quoteLabel(s string) string { return "'" + s + "'" }
