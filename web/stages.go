package web

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// stageRoutes adds the Stages page's routes: what sales read to reads,
// what editors and owners change to g.
func (h *Handler) stageRoutes(reads, g *echo.Group) {
	reads.GET("/stages", h.showStages)
	reads.GET("/stages/mappings/:mapping", h.showMapping)
	g.POST("/stages", h.addStage)
	g.POST("/stages/template", h.startStageTemplate)
	g.POST("/stages/:stage/rename", h.renameStage)
	g.POST("/stages/:stage/move", h.moveStage)
	g.POST("/stages/:stage/booking", h.setBookingStage)
	g.POST("/stages/:stage/delete", h.deleteStage)
	g.POST("/stages/aliases", h.aliasUnmapped)
	g.POST("/stages/:stage/aliases", h.addStageAlias)
	g.POST("/stages/:stage/aliases/delete", h.deleteStageAlias)
	g.GET("/stages/mappings/new", h.showNewMapping)
	g.POST("/stages/mappings", h.createMapping)
	g.POST("/stages/mappings/:mapping", h.updateMapping)
	g.POST("/stages/mappings/:mapping/delete", h.deleteMapping)
	g.POST("/stages/mappings/:mapping/move", h.moveMapping)
	h.stageUploadRoutes(reads, g)
	h.crmRoutes(reads, g)
}

// maxStageCounts bounds the stages whose changes the page counts: a CRM
// that sends many stage names shows the most frequent.
const maxStageCounts = 200

func (h *Handler) showStages(c echo.Context) error {
	v, err := h.stagesView(c)
	if err != nil {
		return err
	}
	return h.renderStages(c, http.StatusOK, v)
}

// renderStages answers with the Stages page, or for htmx the stage list
// it swaps in place.
func (h *Handler) renderStages(c echo.Context, status int, v views.StagesView) error {
	if isHTMX(c) {
		return render(c, status, views.StageList(fragmentPage(c), v))
	}
	p := h.page(c, "Stages")
	p.Nav = "stages"
	return render(c, status, views.StagesPage(p, v))
}

// stagesView is the Stages page of the current account: its stages in
// order with their mappings, the stages its CRM sent that are not in the
// list, and what to do next when there is nothing yet.
func (h *Handler) stagesView(c echo.Context) (views.StagesView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	v := views.StagesView{AddStage: views.Field{Name: "name", Label: "New stage", Hint: "The name your CRM sends, like proposal or closed_won; matched ignoring case, spaces and punctuation. Other labels of a stage are its aliases."},
		Example: stageCurlExample(c, h.now())}
	stages, err := h.store.Stages(ctx, a.ID)
	if err != nil {
		return v, err
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return v, err
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return v, err
	}
	counts, err := h.store.StageChangeCounts(ctx, a.ID, maxStageCounts)
	if err != nil {
		return v, err
	}
	v.HasChanges = len(counts) > 0
	sv, err := h.sequencesView(c, views.SequenceForm{})
	if err != nil {
		return v, err
	}
	v.Sequences = &sv
	card, err := h.crmCard(c)
	if err != nil {
		return v, err
	}
	v.CRM = &card
	for _, d := range datasets {
		v.Datasets = append(v.Datasets, views.Option{Value: strconv.FormatInt(d.ID, 10), Label: destinationLabel(d)})
	}
	for _, r := range rules {
		if rule.Mode(r.Mode) == rule.Stage {
			v.HasMappings = true
		}
	}
	v.Template = templateItems(a)

	crmRows, err := h.store.MappedCRMStages(ctx, a.ID)
	if err != nil {
		return v, err
	}
	conns, err := h.store.CRMConnections(ctx, a.ID)
	if err != nil {
		return v, err
	}
	ix := name.NewStages(stages, crmRows)

	// Changes per stage as the recorder finds it (name.Stages): by name,
	// alias or CRM label, ignoring case, spaces and punctuation; a label
	// that names no stage shows under the spelling sent most.
	changes := map[string]int64{}
	var spelled []string
	for _, sc := range counts {
		label, _ := ix.Resolve(sc.Stage)
		k := labelKey(label)
		if _, ok := changes[k]; !ok {
			spelled = append(spelled, label)
		}
		changes[k] += sc.Changes
	}
	listed := map[string]bool{}
	for i, st := range stages {
		listed[labelKey(st.Name)] = true
		it := views.StageItem{ID: st.ID, Name: st.Name, Booking: st.Booking, Changes: changes[labelKey(st.Name)],
			First: i == 0, Last: i == len(stages)-1, Aliases: st.Aliases,
			Rename: views.Field{Name: "name", Label: "Rename " + st.Name, Value: st.Name},
			Alias:  views.Field{Name: "alias", Label: "New alias of " + st.Name}}
		it.Mappings = mappingItems(a, rules, datasets, st.Name)
		it.CRMLabels = crmLabels(a.ID, conns, crmRows, st.Name)
		v.Stages = append(v.Stages, it)
		v.Choices = append(v.Choices, views.Option{Value: strconv.FormatInt(st.ID, 10), Label: st.Name})
	}
	// Mappings of a stage the list lacks still send: they are shown too.
	for _, r := range rules {
		if rule.Mode(r.Mode) != rule.Stage || listed[labelKey(r.Stage)] {
			continue
		}
		listed[labelKey(r.Stage)] = true
		v.Stages = append(v.Stages, views.StageItem{Name: r.Stage, Missing: true, Changes: changes[labelKey(r.Stage)],
			Mappings: mappingItems(a, rules, datasets, r.Stage)})
	}
	for _, s := range unmappedLabels(stages, crmRows, rules, spelled) {
		u := views.UnmappedStage{Name: s, Changes: changes[labelKey(s)]}
		// "It is" starts at the stage the label's words suggest.
		if i, ok := name.SuggestStage(s, stages); ok {
			u.Stage = strconv.FormatInt(stages[i].ID, 10)
		}
		v.Unmapped = append(v.Unmapped, u)
	}
	// The labels with the most changes first: they matter most.
	slices.SortStableFunc(v.Unmapped, func(x, y views.UnmappedStage) int { return cmp.Compare(y.Changes, x.Changes) })
	return v, nil
}

// mappingItems are the mappings of stage among rules, in order, as the
// Stages page lists them.
func mappingItems(a models.Account, rules []models.SendRule, datasets []models.Dataset, stage string) []views.MappingItem {
	var out []views.MappingItem
	for _, r := range rules {
		if !store.IsStageMapping(r, stage) {
			continue
		}
		it := views.MappingItem{ID: r.ID, Name: r.Name, EventName: r.EventName, Value: mappingValueWords(a, r),
			Repeatable: r.Repeatable, Enabled: r.Enabled, Conditions: "no conditions"}
		it.Dataset = destinationsLabel(datasets, r)
		for _, o := range rules {
			if o.ID == r.ID {
				break
			}
			if r.Enabled && o.Enabled && store.IsStageMapping(o, stage) && o.SharesDestination(r) && o.EventName == r.EventName &&
				o.Repeatable == r.Repeatable && it.SharedWith == "" {
				it.SharedWith = o.Name
			}
		}
		if spec, problems := rule.SpecOf(r); len(problems) > 0 {
			it.Conditions = "conditions that cannot be read"
		} else if spec.Count() > 0 {
			it.Conditions = "leads where " + spec.Text()
		}
		out = append(out, it)
	}
	if len(out) > 0 {
		out[0].First, out[len(out)-1].Last = true, true
	}
	return out
}

// mappingValueWords says what value and currency mapping r sends, as
// internal/decide sets them: "no value", "250 EUR", "deal value from the
// change (its currency, else USD)".
func mappingValueWords(a models.Account, r models.SendRule) string {
	var value string
	switch {
	case r.ValueField == models.StageValueFromChange:
		value = "deal value from the change"
	case r.ValueField != "":
		value = "value of " + r.ValueField
	case r.Value != nil:
		value = strconv.FormatFloat(*r.Value, 'f', -1, 64)
	default:
		return "no value"
	}
	account := a.Currency
	if account == "" {
		account = "the account's currency"
	}
	switch {
	case r.Currency != "":
		return value + " " + r.Currency
	case r.CurrencyField == models.StageValueFromChange,
		r.CurrencyField == "" && r.ValueField == models.StageValueFromChange:
		return value + " (its currency, else " + account + ")"
	case r.CurrencyField != "":
		return value + " (currency of " + r.CurrencyField + ", else " + account + ")"
	}
	return value + " " + account
}

// templateItems are store.TemplateMappings in words, for the page's
// offer.
func templateItems(a models.Account) []views.MappingItem {
	var out []views.MappingItem
	for _, r := range store.TemplateMappings(models.Dataset{AccountID: a.ID}) {
		out = append(out, views.MappingItem{Name: r.Stage, EventName: r.EventName, Value: mappingValueWords(a, r)})
	}
	return out
}

// stageCurlExample is the curl line that posts a stage change to this
// server, dated now so that it is taken as it is.
func stageCurlExample(c echo.Context, now time.Time) string {
	base := c.Scheme() + "://" + c.Request().Host
	return `curl -X POST ` + base + `/api/v1/stages \
  -H "Authorization: Bearer $LEADSIGNAL_KEY" \
  -H "Content-Type: application/json" \
  -d '{"lead":{"external_id":"form-123"},"stage":"won",
       "occurred_at":"` + now.UTC().Truncate(time.Minute).Format(time.RFC3339) + `","value":1200,"currency":"EUR"}'`
}

// stageParam is the account's stage named in the URL: ErrNotFound (404)
// for another account's.
func (h *Handler) stageParam(c echo.Context) (models.Stage, error) {
	id, err := strconv.ParseInt(c.Param("stage"), 10, 64)
	if err != nil {
		return models.Stage{}, store.ErrNotFound
	}
	return h.store.Stage(c.Request().Context(), currentAccount(c).ID, id)
}

// stageNameProblem says what is wrong with a stage's name, as the page
// shows it (name.StageProblem, in validName's words); "" when it can be
// one.
func stageNameProblem(s string) string {
	switch msg := name.StageProblem(s); msg {
	case "":
		return ""
	case name.Problem(s):
		return validName(s)
	default:
		return sentence(msg)
	}
}

// stageProblem shows the Stages page again with a problem: at the add
// form (id 0), or at one stage's line, with what was typed in its rename
// field when typed is not nil. 422.
func (h *Handler) stageProblem(c echo.Context, id int64, typed *string, msg string) error {
	v, err := h.stagesView(c)
	if err != nil {
		return err
	}
	if id == 0 {
		v.AddStage.Value, v.AddStage.Error = *typed, msg
	}
	for i := range v.Stages {
		if it := &v.Stages[i]; id != 0 && it.ID == id {
			if typed != nil {
				it.Rename.Value, it.Rename.Error, it.RenameOpen = *typed, msg, true
			} else {
				it.Error = msg
			}
		}
	}
	return h.renderStages(c, http.StatusUnprocessableEntity, v)
}

// stagesDone answers a change of the stage list: for htmx the list as it
// is now, else the page again, with msg as its flash.
func (h *Handler) stagesDone(c echo.Context, msg string) error {
	if isHTMX(c) {
		v, err := h.stagesView(c)
		if err != nil {
			return err
		}
		return h.renderStages(c, http.StatusOK, v)
	}
	if msg != "" {
		setFlash(c, "ok", msg)
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(currentAccount(c).ID, "/stages"))
}

// addStage adds a stage at the end of the list; with map=1 (an unmapped
// stage's "Add to the list and map it") it opens the new mapping form for
// it, also when the list has it already.
func (h *Handler) addStage(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	n := strings.TrimSpace(c.FormValue("name"))
	mapIt := c.FormValue("map") == "1"
	if msg := stageNameProblem(n); msg != "" {
		return h.stageProblem(c, 0, &n, msg)
	}
	st, err := h.store.AppendStage(ctx, a.ID, n)
	if errors.Is(err, store.ErrConflict) {
		ss, err := h.store.Stages(ctx, a.ID)
		if err != nil {
			return err
		}
		if owner, ok := store.LabelOwner(ss, n, 0); ok && mapIt {
			return redirect(c, newMappingURL(a.ID, owner.ID))
		}
		return h.stageProblem(c, 0, &n, takenWords(ss, n, 0))
	}
	if err != nil {
		return err
	}
	h.log.Info("stage added", "account_id", a.ID, "stage_id", st.ID)
	if mapIt {
		setFlash(c, "ok", "Stage "+st.Name+" added to the list. Choose the event it sends.")
		return redirect(c, newMappingURL(a.ID, st.ID))
	}
	return h.stagesDone(c, "Stage "+st.Name+" added. Map it to an event to send its changes to Meta.")
}

func newMappingURL(accountID, stageID int64) string {
	return views.AccountURL(accountID, "/stages/mappings/new?stage="+strconv.FormatInt(stageID, 10))
}

func (h *Handler) renameStage(c echo.Context) error {
	a := currentAccount(c)
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	n := strings.TrimSpace(c.FormValue("name"))
	if msg := stageNameProblem(n); msg != "" {
		return h.stageProblem(c, st.ID, &n, msg)
	}
	renamed, err := h.store.RenameStage(c.Request().Context(), a.ID, st.ID, n, &currentUser(c).ID)
	if errors.Is(err, store.ErrConflict) {
		ss, err := h.store.Stages(c.Request().Context(), a.ID)
		if err != nil {
			return err
		}
		return h.stageProblem(c, st.ID, &n, takenWords(ss, n, st.ID))
	}
	if err != nil {
		return err
	}
	h.log.Info("stage renamed", "account_id", a.ID, "stage_id", st.ID)
	return h.stagesDone(c, "Stage "+st.Name+" renamed to "+renamed.Name+".")
}

func (h *Handler) moveStage(c echo.Context) error {
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	delta, err := direction(c)
	if err != nil {
		return err
	}
	if err := h.store.MoveStage(c.Request().Context(), currentAccount(c).ID, st.ID, delta); err != nil {
		return err
	}
	return h.stagesDone(c, "")
}

// direction is the move a form asks for: -1 up, +1 down.
func direction(c echo.Context) (int, error) {
	switch c.FormValue("direction") {
	case "up":
		return -1, nil
	case "down":
		return 1, nil
	}
	return 0, echo.NewHTTPError(http.StatusBadRequest, "Move it up or down")
}

// setBookingStage makes a stage the account's booking stage, or no longer
// one: the stage a lead is booked at, whose mappings a setup file's
// booking rules become (internal/setup).
func (h *Handler) setBookingStage(c echo.Context) error {
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	on := c.FormValue("booking") == "on"
	if err := h.store.SetBookingStage(c.Request().Context(), currentAccount(c).ID, st.ID, on); err != nil {
		return err
	}
	msg := st.Name + " is the booking stage now."
	if !on {
		msg = st.Name + " is no longer the booking stage."
	}
	return h.stagesDone(c, msg)
}

// deleteStage deletes a stage no mapping uses. The booking stage is no
// exception: what sends when a lead is booked is its mappings (booking
// rules became mappings of it), and a stage with mappings stays.
func (h *Handler) deleteStage(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	st, err := h.stageParam(c)
	if err != nil {
		return err
	}
	err = h.store.DeleteStage(ctx, a.ID, st.ID)
	if errors.Is(err, store.ErrStageInUse) {
		return h.stageProblem(c, st.ID, nil, "Delete the stage's mappings first: a stage with mappings stays in the list.")
	}
	if err != nil {
		return err
	}
	h.log.Info("stage deleted", "account_id", a.ID, "stage_id", st.ID)
	return h.stagesDone(c, "Stage "+st.Name+" deleted. Changes recorded under it stay; new ones show as not in the list.")
}

// startStageTemplate creates the template's mappings on the chosen
// dataset, and the template's stages the list lacks.
func (h *Handler) startStageTemplate(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	id, _ := strconv.ParseInt(c.FormValue("dataset_id"), 10, 64)
	made, err := h.store.StartStageTemplate(ctx, a.ID, id, &currentUser(c).ID)
	switch {
	case errors.Is(err, store.ErrConflict):
		setFlash(c, "error", "The account has stage mappings already: the template is for a start from none. Edit the mappings below.")
		return redirect(c, views.AccountURL(a.ID, "/stages"))
	case errors.Is(err, store.ErrNotFound):
		setFlash(c, "error", "Choose one of this account's datasets for the template.")
		return redirect(c, views.AccountURL(a.ID, "/stages"))
	case err != nil:
		return err
	}
	h.log.Info("stage template started", "account_id", a.ID, "dataset_id", id, "mappings", len(made))
	setFlash(c, "ok", "Stages mapped from the template: qualified sends QualifiedLead, booked Schedule, won a Purchase with the deal's value. "+
		"Edit them, or map more stages.")
	return redirect(c, views.AccountURL(a.ID, "/stages"))
}
