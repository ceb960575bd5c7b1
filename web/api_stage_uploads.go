package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Stage uploads for automation (docs/api.md, "Stage uploads"): a nightly
// CRM export posted as the body, previewed at once through the same
// stageupload.Runner as the Stages page's upload, then applied. The
// handlers decode, call the Runner and map its answers.

// uploadProgressReply is an upload's preview with where it stands: the
// answer of apply (202) and of GET.
type uploadProgressReply struct {
	stageupload.Report
	Status   models.StageUploadStatus `json:"status"`
	DoneRows int                      `json:"done_rows"`
	// Failure is why a failed upload stopped.
	Failure string `json:"failure,omitempty"`
}

func progressReply(rep stageupload.Report) uploadProgressReply {
	return uploadProgressReply{Report: rep, Status: rep.Status, DoneRows: rep.DoneRows, Failure: rep.Error}
}

// createUploadByAPI stores the CSV body as an upload, previews it in the
// request and answers the preview.
func (h *Handler) createUploadByAPI(c echo.Context) error {
	acc := currentAccount(c).Account
	req := c.Request()
	if mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); err != nil || (mt != "text/csv" && mt != "application/csv") {
		return apiFail(c, http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send the CSV file as the body with Content-Type: text/csv (curl --data-binary @deals.csv -H 'Content-Type: text/csv')", "")
	}
	if req.ContentLength > stagecsv.MaxBytes {
		return apiFail(c, http.StatusRequestEntityTooLarge, "file_too_large", tooLarge(req.ContentLength), "")
	}
	sub, field, problem := parseUploadQuery(c)
	if problem != "" {
		return apiFail(c, http.StatusUnprocessableEntity, "invalid_field", problem, field)
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, stagecsv.MaxBytes+1))
	if err != nil {
		return apiFail(c, http.StatusBadRequest, "unreadable_body", "the body could not be read; send it again", "")
	}
	if len(raw) > stagecsv.MaxBytes {
		return apiFail(c, http.StatusRequestEntityTooLarge, "file_too_large", tooLarge(int64(len(raw))), "")
	}
	sub.Raw = raw
	u, err := h.uploads.Submit(req.Context(), acc, sub)
	if fe, ok := errors.AsType[*stagecsv.FileError](err); ok {
		return apiFail(c, http.StatusUnprocessableEntity, "invalid_file", fe.Message, "")
	}
	if re, ok := errors.AsType[*stageupload.RequestError](err); ok {
		return apiFail(c, http.StatusUnprocessableEntity, "invalid_field", re.Message, re.Field)
	}
	if err != nil {
		return err
	}
	// The preview of the largest file takes seconds; one that outlives
	// the wait goes on, and the answer says where it stands.
	wait, cancel := context.WithTimeout(req.Context(), uploadWait())
	defer cancel()
	id := u.ID
	u, err = h.uploads.Finish(wait, acc.ID, id)
	if err != nil && wait.Err() != nil && req.Context().Err() == nil {
		// The wait ended, maybe inside a read, whatever error the driver
		// made of that: where the upload stands is read again, on the
		// request's own time.
		u, err = h.store.StageUpload(req.Context(), acc.ID, id)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/stage-uploads/"+strconv.FormatInt(u.ID, 10))
	rep, err := h.uploads.Report(req.Context(), u)
	if err != nil {
		return err
	}
	if u.Running() {
		return c.JSON(http.StatusAccepted, progressReply(rep))
	}
	if u.Status == models.UploadFailed {
		return apiFail(c, http.StatusServiceUnavailable, "upload_failed", "upload "+strconv.FormatInt(u.ID, 10)+" stopped: "+u.Error, "")
	}
	return c.JSON(http.StatusCreated, rep)
}

// previewWait bounds how long POST /api/v1/stage-uploads waits for its
// preview, within the server's write timeout (60 s).
const previewWait = 45 * time.Second

// uploadWaitForTests, when positive, replaces previewWait
// (api_stage_uploads_export_test.go).
var uploadWaitForTests atomic.Int64

func uploadWait() time.Duration {
	if d := uploadWaitForTests.Load(); d > 0 {
		return time.Duration(d)
	}
	return previewWait
}

// maxUploadName bounds the name query parameter.
const maxUploadName = 200

// parseUploadQuery reads the upload's query: name, columns, dates and
// stage_aliases, or the field at fault and why.
func parseUploadQuery(c echo.Context) (stageupload.Submission, string, string) {
	q := c.QueryParams()
	sub := stageupload.Submission{Name: "upload via API"}
	if n := cleanFileName(q.Get("name")); n != "" {
		if len([]rune(n)) > maxUploadName {
			return sub, "name", fmt.Sprintf("name is longer than %d characters", maxUploadName)
		}
		sub.Name = n
	}
	if cols := pairs(q["columns"]); len(cols) > 0 {
		sub.Columns = map[stagecsv.Target]string{}
		for _, p := range cols {
			field, header, ok := strings.Cut(p, ":")
			t, known := uploadTarget(strings.TrimSpace(field))
			switch {
			case !ok:
				return sub, "columns", fmt.Sprintf("columns: write each as <field>:<column>, not %q", name.Cut(p, 60))
			case !known:
				return sub, "columns", fmt.Sprintf("columns: %q is not a field; the fields are %s", name.Cut(field, 60), uploadFields())
			}
			if _, dup := sub.Columns[t]; dup {
				return sub, "columns", fmt.Sprintf("columns: %s is named twice", stageupload.Field(t))
			}
			sub.Columns[t] = strings.TrimSpace(header)
		}
	}
	sub.Dates = strings.TrimSpace(q.Get("dates"))
	for _, p := range pairs(q["stage_aliases"]) {
		i := strings.LastIndex(p, ":")
		if i < 0 {
			return sub, "stage_aliases", fmt.Sprintf("stage_aliases: write each as <label>:<stage>, not %q", name.Cut(p, 60))
		}
		label, stage := strings.TrimSpace(p[:i]), strings.TrimSpace(p[i+1:])
		if label == "" || stage == "" {
			return sub, "stage_aliases", fmt.Sprintf("stage_aliases: %q needs a label and a stage, as <label>:<stage>", name.Cut(p, 60))
		}
		if len(sub.Aliases) == stageupload.MaxStageAliases {
			return sub, "stage_aliases", fmt.Sprintf("stage_aliases: at most %d labels", stageupload.MaxStageAliases)
		}
		sub.Aliases = append(sub.Aliases, stageupload.StageAlias{Label: label, Stage: stage})
	}
	return sub, "", ""
}

// pairs splits a query parameter's values at their commas, empty parts
// left out.
func pairs(values []string) []string {
	var out []string
	for _, v := range values {
		for p := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(p) != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// uploadTarget is the target a columns field names: the stage API's body
// field (lead.email), or the key alone (email).
func uploadTarget(field string) (stagecsv.Target, bool) {
	for _, t := range stagecsv.Targets {
		if field == stageupload.Field(t) || field == string(t) {
			return t, true
		}
	}
	return "", false
}

func uploadFields() string {
	names := make([]string, len(stagecsv.Targets))
	for i, t := range stagecsv.Targets {
		names[i] = stageupload.Field(t)
	}
	return strings.Join(names, ", ")
}

// apiUpload finds the key's account's upload that the path names: any
// other id, whatever it looks like, is a 404.
func (h *Handler) apiUpload(c echo.Context) (models.StageUpload, error) {
	id, err := strconv.ParseInt(c.Param("upload"), 10, 64)
	if err != nil || id <= 0 {
		return models.StageUpload{}, store.ErrNotFound
	}
	return h.store.StageUpload(c.Request().Context(), currentAccount(c).ID, id)
}

func uploadNotFound(c echo.Context) error {
	return apiFail(c, http.StatusNotFound, "not_found", "this account has no upload with this id", "")
}

// showUploadByAPI answers an upload's preview and progress.
func (h *Handler) showUploadByAPI(c echo.Context) error {
	u, err := h.apiUpload(c)
	if errors.Is(err, store.ErrNotFound) {
		return uploadNotFound(c)
	}
	if err != nil {
		return err
	}
	rep, err := h.uploads.Report(c.Request().Context(), u)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, progressReply(rep))
}

// applyUploadByAPI applies a previewed upload in the background: 202
// with the preview applied and its status, then GET tells its progress.
func (h *Handler) applyUploadByAPI(c echo.Context) error {
	ctx := c.Request().Context()
	u, err := h.apiUpload(c)
	if errors.Is(err, store.ErrNotFound) {
		return uploadNotFound(c)
	}
	if err != nil {
		return err
	}
	// The answer is the preview being applied: the apply's own pass
	// starts from zero, which GET follows.
	rep, err := h.uploads.Report(ctx, u)
	if err != nil {
		return err
	}
	u, err = h.uploads.Apply(ctx, u, u.Pass)
	switch {
	case errors.Is(err, stageupload.ErrNothingToRecord):
		sum, serr := stageupload.DecodeSummary(u.EventCounts)
		if serr != nil {
			return serr
		}
		return apiFail(c, http.StatusConflict, "nothing_to_record", stageupload.NothingToRecord(u.Refused, u.Replayed, sum.Skipped), "")
	case errors.Is(err, store.ErrConflict):
		return apiFail(c, http.StatusConflict, "not_previewed", uploadNotPreviewed(u.Status), "")
	case err != nil:
		return err
	}
	h.uploads.Start(u.ID)
	rep.Status, rep.DoneRows, rep.Error = u.Status, u.DoneRows, u.Error
	return c.JSON(http.StatusAccepted, progressReply(rep))
}

// uploadNotPreviewed says why an upload in status s cannot be applied.
func uploadNotPreviewed(s models.StageUploadStatus) string {
	switch s {
	case models.UploadApplying, models.UploadDone:
		return "this upload is applied or being applied already; GET it for its progress"
	case models.UploadPreviewing:
		return "this upload's preview is still running: GET it until its status is previewed, then apply"
	case models.UploadMapping:
		return "this upload waits for its columns to be picked on the Stages page"
	}
	return "this upload stopped (status " + string(s) + "): upload the file again"
}
