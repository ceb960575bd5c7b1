package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// An upload's preview lists the stage labels that name none of the
// account's stages before its counts; a click saves one as an alias, adds
// it as a stage or skips its rows, and the preview counts again
// (docs/stage-upload.md).

// previewLabels adds to v what the preview found beyond its counts: the
// labels that name none of the account's stages with the stage each
// probably means, the rows skipped and the rows flagged.
func (h *Handler) previewLabels(c echo.Context, u models.StageUpload, sum stageupload.Summary, v *views.StageUploadView) error {
	v.Skipped, v.Flagged, v.UnmappedRows, v.LabelsOther = sum.Skipped, sum.Flagged, sum.UnmappedRows(), sum.UnmappedOther
	for _, f := range sum.Flags {
		v.Flags = append(v.Flags, views.UploadFlag{Row: f.Row, Event: f.Event, Reason: f.Reason})
	}
	if u.Status == models.UploadPreviewed && u.Applied == 0 {
		v.Nothing = stageupload.NothingToRecord(u.Refused, u.Replayed, sum.Skipped)
	}
	if len(sum.Unmapped) == 0 || u.Status != models.UploadPreviewed {
		return nil
	}
	stages, err := h.store.Stages(c.Request().Context(), u.AccountID)
	if err != nil {
		return err
	}
	for _, st := range stages {
		v.Stages = append(v.Stages, views.UploadStageOption{ID: strconv.FormatInt(st.ID, 10), Name: st.Name})
	}
	for _, l := range sum.Labels() {
		ul := views.UploadLabel{Label: l.Label, Rows: l.Rows}
		if i, ok := name.SuggestStage(l.Label, stages); ok {
			ul.Suggested, ul.SuggestedID = stages[i].Name, strconv.FormatInt(stages[i].ID, 10)
		}
		v.Labels = append(v.Labels, ul)
	}
	return nil
}

// labelStageUpload saves a label of the preview as an alias of a stage,
// adds it as a stage, or skips its rows, then counts the preview again.
func (h *Handler) labelStageUpload(c echo.Context) error {
	u, err := h.stageUploadParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	page := views.AccountURL(u.AccountID, "/stages/uploads/"+strconv.FormatInt(u.ID, 10))
	label := c.FormValue("label")
	switch c.FormValue("do") {
	case "alias":
		id, perr := strconv.ParseInt(c.FormValue("stage"), 10, 64)
		if perr != nil {
			setFlash(c, "error", "Pick the stage "+strconv.Quote(label)+" means, then save it as its alias.")
			return c.Redirect(http.StatusSeeOther, page)
		}
		u, err = h.uploads.AliasLabel(ctx, u, label, id)
	case "stage":
		u, err = h.uploads.AddLabelStage(ctx, u, label)
	case "skip":
		u, err = h.uploads.SkipLabel(ctx, u, label)
	default:
		return echo.NewHTTPError(http.StatusBadRequest, "The form says neither alias, new stage nor skip.")
	}
	if ae, ok := errors.AsType[*store.AliasError](err); ok {
		setFlash(c, "error", ae.Message)
		return c.Redirect(http.StatusSeeOther, page)
	}
	if errors.Is(err, store.ErrConflict) {
		setFlash(c, "error", "This upload is applied or being applied: its labels can no longer change.")
		return c.Redirect(http.StatusSeeOther, page)
	}
	if errors.Is(err, store.ErrNotFound) {
		setFlash(c, "error", "That stage is gone: pick another.")
		return c.Redirect(http.StatusSeeOther, page)
	}
	if err != nil {
		return err
	}
	h.uploads.Start(u.ID)
	return c.Redirect(http.StatusSeeOther, page)
}
