package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// The CSV upload of stage changes (docs/stage-upload.md), for editors and
// owners (sales read the uploads): a file is read and its columns guessed, a dry run of the stage
// API's path shows what it would record and queue, and applying runs that
// path for real. Both passes run in the background (internal/stageupload).

// stageUploadRoutes adds the uploads' pages to reads (sales read them) and
// what uploads, checks and applies a file to g (editors and owners).
func (h *Handler) stageUploadRoutes(reads, g *echo.Group) {
	reads.GET("/stages/uploads", h.showStageUploads)
	reads.GET("/stages/uploads/:upload", h.showStageUpload)
	reads.GET("/stages/uploads/:upload/progress", h.showStageUploadProgress)
	g.POST(stageUploadPath, h.createStageUpload)
	g.POST("/stages/uploads/:upload/mapping", h.mapStageUpload)
	g.POST("/stages/uploads/:upload/apply", h.applyStageUpload)
	g.POST("/stages/uploads/:upload/labels", h.labelStageUpload)
}

// stageUploadPath is the route a CSV file is posted to: the one page
// request whose body may be larger than maxPageBody.
const stageUploadPath = "/stages/uploads"

// maxUploadBody bounds the upload's request: the largest file and the
// multipart framing around it.
const maxUploadBody = stagecsv.MaxBytes + 64<<10

// uploadMemory is how much of an upload's form is read into memory.
const uploadMemory = 1 << 20

// pageBodyLimit bounds page requests' bodies to maxPageBody, and a CSV
// file's upload to maxUploadBody, saying so in words; it comes before the
// CSRF check, which reads the form. An upload's form is read here with at
// most uploadMemory of it in memory, the rest in a temporary file (removed
// after the request): the session and CSRF checks that follow read the
// form too, and the file must not sit in memory before they have passed.
func pageBodyLimit() echo.MiddlewareFunc {
	small := middleware.BodyLimit(maxPageBody)
	large := middleware.BodyLimit(strconv.Itoa(maxUploadBody) + "B")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		s := small(next)
		l := large(func(c echo.Context) error {
			if err := c.Request().ParseMultipartForm(uploadMemory); err != nil && !errors.Is(err, http.ErrNotMultipart) {
				var tooBig *echo.HTTPError
				if errors.As(err, &tooBig) {
					return err
				}
				return echo.NewHTTPError(http.StatusBadRequest, "Choose a CSV file and upload it with the form.")
			}
			return next(c)
		})
		return func(c echo.Context) error {
			if c.Request().Method != http.MethodPost || c.Path() != "/accounts/:account"+stageUploadPath {
				return s(c)
			}
			if c.Request().ContentLength > maxUploadBody {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge, tooLarge(c.Request().ContentLength))
			}
			return l(c)
		}
	}
}

func tooLarge(n int64) string {
	return fmt.Sprintf("The file is %s; an upload is at most %d MiB. Split it into smaller files.", byteSize(n), stagecsv.MaxBytes>>20)
}

// maxUploadsListed bounds the uploads the list shows.
const maxUploadsListed = 20

func (h *Handler) showStageUploads(c echo.Context) error {
	return h.renderStageUploads(c, http.StatusOK, "")
}

func (h *Handler) renderStageUploads(c echo.Context, status int, problem string) error {
	a := currentAccount(c)
	us, err := h.store.StageUploads(c.Request().Context(), a.ID, maxUploadsListed)
	if err != nil {
		return err
	}
	v := views.StageUploadsView{Error: problem, MaxSize: strconv.Itoa(stagecsv.MaxBytes>>20) + " MiB", MaxRows: views.Plural(stagecsv.MaxRows, "row", "rows")}
	for _, u := range us {
		v.Uploads = append(v.Uploads, h.uploadItem(a.Account, u))
	}
	p := h.page(c, "Upload stage changes")
	p.Nav = "stages"
	return render(c, status, views.StageUploadsPage(p, v))
}

// createStageUpload stores an uploaded CSV file and starts its preview;
// a file that cannot be used is refused with why.
func (h *Handler) createStageUpload(c echo.Context) error {
	name, raw, problem := readStageUpload(c)
	if problem != "" {
		return h.renderStageUploads(c, http.StatusUnprocessableEntity, problem)
	}
	a := currentAccount(c)
	u, err := h.uploads.Create(c.Request().Context(), a.Account, &currentUser(c).ID, name, raw)
	if fe, ok := errors.AsType[*stagecsv.FileError](err); ok {
		return h.renderStageUploads(c, http.StatusUnprocessableEntity, fe.Message)
	}
	if err != nil {
		return err
	}
	if u.Running() {
		h.uploads.Start(u.ID)
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/stages/uploads/"+strconv.FormatInt(u.ID, 10)))
}

// readStageUpload reads the uploaded file: its name, its bytes, or why it
// cannot be used.
func readStageUpload(c echo.Context) (name string, raw []byte, problem string) {
	fh, err := c.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		return "", nil, "Choose a CSV file to upload."
	}
	if err != nil {
		return "", nil, "The upload could not be read; try again."
	}
	name = cleanFileName(fh.Filename)
	if name == "" {
		name = "upload.csv"
	}
	if fh.Size > stagecsv.MaxBytes {
		return name, nil, tooLarge(fh.Size)
	}
	fd, err := fh.Open()
	if err != nil {
		return name, nil, "The upload could not be read; try again."
	}
	defer fd.Close()
	raw, err = io.ReadAll(io.LimitReader(fd, stagecsv.MaxBytes+1))
	if err != nil {
		return name, nil, "The upload could not be read; try again."
	}
	if len(raw) > stagecsv.MaxBytes {
		return name, nil, tooLarge(int64(len(raw)))
	}
	return name, raw, ""
}

func (h *Handler) stageUploadParam(c echo.Context) (models.StageUpload, error) {
	id, err := strconv.ParseInt(c.Param("upload"), 10, 64)
	if err != nil {
		return models.StageUpload{}, store.ErrNotFound
	}
	return h.store.StageUpload(c.Request().Context(), currentAccount(c).ID, id)
}

func (h *Handler) showStageUpload(c echo.Context) error {
	u, err := h.stageUploadParam(c)
	if err != nil {
		return err
	}
	return h.renderStageUpload(c, http.StatusOK, u, nil)
}

// showStageUploadProgress answers the upload's panel, which htmx asks
// for every second while a pass runs.
func (h *Handler) showStageUploadProgress(c echo.Context) error {
	u, err := h.stageUploadParam(c)
	if err != nil {
		return err
	}
	v, err := h.stageUploadView(c, u, nil)
	if err != nil {
		return err
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, views.AccountURL(u.AccountID, "/stages/uploads/"+strconv.FormatInt(u.ID, 10)))
	}
	return render(c, http.StatusOK, views.StageUploadPanel(fragmentPage(c), v))
}

func (h *Handler) renderStageUpload(c echo.Context, status int, u models.StageUpload, problems []string) error {
	v, err := h.stageUploadView(c, u, problems)
	if err != nil {
		return err
	}
	p := h.page(c, u.FileName)
	p.Nav = "stages"
	return render(c, status, views.StageUploadPage(p, v))
}

// maxProblemsShown bounds the problem rows a page lists.
const maxProblemsShown = store.MaxUploadProblems

func (h *Handler) stageUploadView(c echo.Context, u models.StageUpload, problems []string) (views.StageUploadView, error) {
	ctx := c.Request().Context()
	v := views.StageUploadView{StageUploadItem: h.uploadItem(currentAccount(c).Account, u), Pass: u.Pass, Error: u.Error}
	if u.UserID != nil {
		if by, err := h.store.UserByID(ctx, *u.UserID); err == nil {
			v.By = by.Email
		}
	}
	sum, err := stageupload.DecodeSummary(u.EventCounts)
	if err != nil {
		return v, fmt.Errorf("upload %d: %w", u.ID, err)
	}
	if err := h.previewLabels(c, u, sum, &v); err != nil {
		return v, err
	}
	for n, k := range sum.Events {
		v.EventCounts = append(v.EventCounts, views.UploadEventCount{Name: n, Count: k})
	}
	slices.SortFunc(v.EventCounts, func(a, b views.UploadEventCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return compareStrings(a.Name, b.Name)
	})
	ps, err := h.store.StageUploadProblems(ctx, u.AccountID, u.ID, maxProblemsShown)
	if err != nil {
		return v, err
	}
	for _, p := range ps {
		v.Problems = append(v.Problems, views.UploadProblem{Row: p.RowNumber, Field: p.Field, Message: p.Message})
	}
	m, cols, err := stageupload.Decode(u)
	if err != nil {
		return v, err
	}
	v.Mapping = mappingView(m, cols, problems)
	v.Mapping.Editable = u.Status != models.UploadApplying && u.Status != models.UploadDone &&
		currentAccount(c).Role.AtLeast(models.RoleEditor)
	return v, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (h *Handler) uploadItem(a models.Account, u models.StageUpload) views.StageUploadItem {
	return views.StageUploadItem{ID: u.ID, FileName: u.FileName, Status: u.Status, TotalRows: u.TotalRows, DoneRows: u.DoneRows,
		Applied: u.Applied, Replayed: u.Replayed, Refused: u.Refused, Events: u.Events, When: views.NewStamp(u.CreatedAt, h.now(), location(a)),
		NothingToRecord: u.Status == models.UploadPreviewed && u.Applied == 0}
}

func mappingView(m stagecsv.Mapping, cols []stageupload.Column, problems []string) views.UploadMapping {
	header, samples := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		header[i], samples[i] = c.Name, c.Sample
	}
	v := views.UploadMapping{DateOrder: string(m.DateOrder), DateRule: m.DateRule(header), Problems: problems}
	for i, c := range cols {
		name := c.Name
		if name == "" {
			name = "column " + strconv.Itoa(i+1)
		}
		v.Columns = append(v.Columns, views.UploadColumn{Index: strconv.Itoa(i), Name: name, Sample: c.Sample})
	}
	for _, t := range stagecsv.Targets {
		col := ""
		if i := m.Column(t); i >= 0 {
			col = strconv.Itoa(i)
		}
		v.Targets = append(v.Targets, views.UploadTarget{Name: string(t), Label: t.Label(), Column: col, Required: t.Required(),
			LeadKey: slices.Contains(stagecsv.LeadKeys, t), Date: t.IsDate(), Why: m.Why(t, header, samples)})
	}
	return v
}

// mapStageUpload saves the columns a person picked and checks the file
// again with them; it is refused once the upload is applied.
func (h *Handler) mapStageUpload(c echo.Context) error {
	u, err := h.stageUploadParam(c)
	if err != nil {
		return err
	}
	_, cols, err := stageupload.Decode(u)
	if err != nil {
		return err
	}
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{}, DateOrder: stagecsv.DateOrder(c.FormValue("date_order"))}
	for _, t := range stagecsv.Targets {
		v := c.FormValue("col_" + string(t))
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(cols) {
			return echo.NewHTTPError(http.StatusBadRequest, "The form names a column the file does not have.")
		}
		m.Columns[t] = i
	}
	page := views.AccountURL(u.AccountID, "/stages/uploads/"+strconv.FormatInt(u.ID, 10))
	u, problems, err := h.uploads.Map(c.Request().Context(), u, m)
	if errors.Is(err, store.ErrConflict) {
		setFlash(c, "error", "This upload is applied or being applied: its columns can no longer change. Upload the file again to read it otherwise.")
		return c.Redirect(http.StatusSeeOther, page)
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return h.renderStageUpload(c, http.StatusUnprocessableEntity, u, problems)
	}
	h.uploads.Start(u.ID)
	return c.Redirect(http.StatusSeeOther, page)
}

// applyStageUpload applies an upload as its preview showed it: when the
// columns changed since (another tab), the new preview is shown instead.
func (h *Handler) applyStageUpload(c echo.Context) error {
	u, err := h.stageUploadParam(c)
	if err != nil {
		return err
	}
	back := views.AccountURL(u.AccountID, "/stages/uploads/"+strconv.FormatInt(u.ID, 10))
	pass, _ := strconv.Atoi(c.FormValue("pass"))
	u, err = h.uploads.Apply(c.Request().Context(), u, pass)
	switch {
	case errors.Is(err, stageupload.ErrPassChanged):
		setFlash(c, "error", "The upload changed since this preview: check the preview below, then apply it.")
		return c.Redirect(http.StatusSeeOther, back)
	case errors.Is(err, stageupload.ErrNothingToRecord):
		setFlash(c, "error", "Nothing to record: this preview has no row to record.")
		return c.Redirect(http.StatusSeeOther, back)
	case errors.Is(err, store.ErrConflict):
		setFlash(c, "error", "This upload is applied or being applied already.")
		return c.Redirect(http.StatusSeeOther, back)
	case err != nil:
		return err
	}
	h.uploads.Start(u.ID)
	return c.Redirect(http.StatusSeeOther, back)
}
