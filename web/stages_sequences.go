package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// sequenceHealthWeeks is how many weeks SequenceHealth shows.
const sequenceHealthWeeks = 12

// sequencesView is the Stages page's Sequences section of the current
// account, its add form as form gives it (typed, with its problems). The
// list needs only the last full week, so it counts two weeks.
func (h *Handler) sequencesView(c echo.Context, form views.SequenceForm) (views.SequencesView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	v := views.SequencesView{Form: form, Max: store.MaxSequences, Threshold: store.LearningThreshold}
	if v.Form.Initial.Name == "" {
		v.Form.Initial = views.Field{Name: "initial_event", Label: "Initial event"}
		v.Form.Final = views.Field{Name: "final_event", Label: "Final event"}
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return v, err
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return v, err
	}
	counts, err := h.store.SequenceWeeks(ctx, a.ID, location(a), h.now(), 2)
	if err != nil {
		return v, err
	}
	names := datasetNames(datasets)
	for _, d := range datasets {
		v.Datasets = append(v.Datasets, views.Option{Value: strconv.FormatInt(d.ID, 10), Label: d.Name})
	}
	for _, r := range rules {
		if !slices.Contains(v.EventNames, r.EventName) {
			v.EventNames = append(v.EventNames, r.EventName)
		}
	}
	slices.Sort(v.EventNames)
	for _, sc := range counts {
		l := sc.Learning()
		v.Items = append(v.Items, views.SequenceItem{ID: sc.Sequence.ID, Dataset: names[sc.Sequence.DatasetID].Name,
			Initial: sc.Sequence.InitialEvent, Final: sc.Sequence.FinalEvent,
			LastWeek: l.LastWeek.Complete, AtLeast: l.LastWeek.AtLeast, Limited: l.Limited})
		if names[sc.Sequence.DatasetID].Mode == models.ModeDryRun {
			v.DryRun = true
		}
	}
	v.Full = len(v.Items) >= store.MaxSequences
	return v, nil
}

// datasetNames are datasets by id.
func datasetNames(ds []models.Dataset) map[int64]models.Dataset {
	out := make(map[int64]models.Dataset, len(ds))
	for _, d := range ds {
		out[d.ID] = d
	}
	return out
}

// sequenceHealthView is the weekly health of the account's sequences,
// counted by store.SequenceWeeks over sequenceHealthWeeks weeks, for the
// Overview page's views.SequenceHealth: each week's complete sequences,
// and whether the last full week is learning limited.
func sequenceHealthView(counts []store.SequenceCount, datasets []models.Dataset) views.SequenceHealthView {
	v := views.SequenceHealthView{Threshold: store.LearningThreshold}
	names := datasetNames(datasets)
	for _, sc := range counts {
		d := names[sc.Sequence.DatasetID]
		v.DryRun = v.DryRun || d.Mode == models.ModeDryRun
		it := views.SequenceHealthItem{Dataset: d.Name, Initial: sc.Sequence.InitialEvent, Final: sc.Sequence.FinalEvent}
		for i, w := range sc.Weeks {
			it.Weeks = append(it.Weeks, views.SequenceWeekRow{Label: w.Start.Format("Jan 2"), Current: i == len(sc.Weeks)-1,
				Complete: w.Complete, AtLeast: w.AtLeast})
		}
		l := sc.Learning()
		it.LastWeek = views.SequenceWeekRow{Label: l.LastWeek.Start.Format("Jan 2"), Complete: l.LastWeek.Complete, AtLeast: l.LastWeek.AtLeast}
		it.Limited = l.Limited
		v.Sequences = append(v.Sequences, it)
	}
	return v
}

// sequenceProblem shows the Sequences section again with the add form as
// typed and its problems: for htmx the section alone, else the Stages
// page. 422.
func (h *Handler) sequenceProblem(c echo.Context, form views.SequenceForm) error {
	sv, err := h.sequencesView(c, form)
	if err != nil {
		return err
	}
	if isHTMX(c) {
		return render(c, http.StatusUnprocessableEntity, views.SequencesSection(fragmentPage(c), sv))
	}
	v, err := h.stagesView(c)
	if err != nil {
		return err
	}
	v.Sequences = &sv
	return h.renderStages(c, http.StatusUnprocessableEntity, v)
}

// sequencesDone answers a change of the sequences: for htmx the section
// as it is now, else the Stages page again, with msg as its flash.
func (h *Handler) sequencesDone(c echo.Context, msg string) error {
	if isHTMX(c) {
		sv, err := h.sequencesView(c, views.SequenceForm{})
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.SequencesSection(fragmentPage(c), sv))
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, views.AccountURL(currentAccount(c).ID, "/stages#sequences"))
}

// createSequence adds a sequence: a dataset of the account and two
// different event names, each as a send rule's event name must be.
func (h *Handler) createSequence(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	form := views.SequenceForm{
		DatasetID: strings.TrimSpace(c.FormValue("dataset_id")),
		Initial:   views.Field{Name: "initial_event", Label: "Initial event", Value: strings.TrimSpace(c.FormValue("initial_event"))},
		Final:     views.Field{Name: "final_event", Label: "Final event", Value: strings.TrimSpace(c.FormValue("final_event"))},
	}
	id, err := strconv.ParseInt(form.DatasetID, 10, 64)
	if err == nil {
		_, err = h.store.Dataset(ctx, a.ID, id)
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, strconv.ErrSyntax) || errors.Is(err, strconv.ErrRange) {
		form.DatasetError = "Choose one of this account's datasets."
	} else if err != nil {
		return err
	}
	for _, f := range []*views.Field{&form.Initial, &form.Final} {
		if msg := rule.EventNameProblem(f.Value); msg != "" {
			f.Error = sentence(msg)
		}
	}
	if form.Initial.Error == "" && form.Final.Error == "" && form.Initial.Value == form.Final.Value {
		form.Final.Error = "Choose a final event other than the initial one: a sequence goes from one event to a later, different one."
	}
	if form.DatasetError != "" || form.Initial.Error != "" || form.Final.Error != "" {
		return h.sequenceProblem(c, form)
	}
	q := models.Sequence{AccountID: a.ID, DatasetID: id, InitialEvent: form.Initial.Value, FinalEvent: form.Final.Value}
	err = h.store.CreateSequence(ctx, &q)
	switch {
	case errors.Is(err, store.ErrConflict):
		form.Error = "The dataset has this sequence already."
		return h.sequenceProblem(c, form)
	case errors.Is(err, store.ErrSequenceLimit):
		form.Error = fmt.Sprintf("An account has at most %d sequences: delete one to add another.", store.MaxSequences)
		return h.sequenceProblem(c, form)
	case errors.Is(err, store.ErrNotFound):
		form.DatasetError = "Choose one of this account's datasets."
		return h.sequenceProblem(c, form)
	case err != nil:
		return err
	}
	h.log.Info("sequence added", "account_id", a.ID, "sequence_id", q.ID)
	return h.sequencesDone(c, "Sequence "+q.InitialEvent+" → "+q.FinalEvent+" added.")
}

// deleteSequence deletes one of the account's sequences; another
// account's is not found (404).
func (h *Handler) deleteSequence(c echo.Context) error {
	a := currentAccount(c)
	id, err := strconv.ParseInt(c.Param("sequence"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	if err := h.store.DeleteSequence(c.Request().Context(), a.ID, id); err != nil {
		return err
	}
	h.log.Info("sequence deleted", "account_id", a.ID, "sequence_id", id)
	return h.sequencesDone(c, "Sequence deleted. Its events stay as they are.")
}
