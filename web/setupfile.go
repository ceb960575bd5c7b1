package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/setup"
	"github.com/leadsignal/leadsignal/views"
)

// setupFileRoutes adds the setup file's download and upload (owners) to g.
func (h *Handler) setupFileRoutes(g *echo.Group) {
	g.GET("/settings/setup", h.showSetupFile)
	g.GET("/settings/setup.json", h.downloadSetup)
	g.POST("/settings/setup/preview", h.previewSetup)
	g.POST("/settings/setup/apply", h.applySetup)
}

// maxSetupUpload bounds a setup file uploaded in the browser; a real one
// is a few KiB.
const maxSetupUpload = 1 << 20

// downloadSetup answers the account's setup file, as leadsignal setup
// export prints it.
func (h *Handler) downloadSetup(c echo.Context) error {
	a := currentAccount(c)
	base, err := h.publicURL(c.Request().Context())
	if err != nil {
		return err
	}
	f, _, err := setup.Export(c.Request().Context(), h.store, a.Slug, base)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return err
	}
	// Slugs are lowercase letters, digits and dashes: safe in the header.
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="leadsignal-setup-`+a.Slug+`.json"`)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

// showSetupFile is the settings' setup file section.
func (h *Handler) showSetupFile(c echo.Context) error {
	return render(c, http.StatusOK, views.SetupFilePage(h.settingsPage(c, "Setup file")))
}

// previewSetup shows what an uploaded setup file would change, computed
// by the apply itself in a transaction that is rolled back.
func (h *Handler) previewSetup(c echo.Context) error {
	name, raw, problem := readSetupUpload(c)
	if problem != "" {
		return h.renderSetupPreview(c, http.StatusUnprocessableEntity, views.SetupPreview{FileName: name,
			Problems: []views.SetupProblem{{Message: problem}}})
	}
	return h.planSetup(c, name, raw, "")
}

// applySetup applies the file of a preview, exactly as the preview
// showed it: when the account changed in between, so that the file would
// now change something else, nothing is applied and the new preview is
// shown instead.
func (h *Handler) applySetup(c echo.Context) error {
	a := currentAccount(c)
	name, raw, expect := cleanFileName(c.FormValue("file_name")), c.FormValue("setup"), c.FormValue("expect")
	// Browsers send the file's line breaks as CRLF: allow for them.
	if strings.TrimSpace(raw) == "" || len(raw) > 2*maxSetupUpload {
		return echo.NewHTTPError(http.StatusBadRequest, "Upload the setup file again: this form carries no file.")
	}
	if expect == "" {
		return h.planSetup(c, name, raw, "Check what the file changes, then apply it.")
	}
	f, problems := setup.Decode(strings.NewReader(raw))
	if len(problems) > 0 {
		return h.renderSetupPreview(c, http.StatusUnprocessableEntity, views.SetupPreview{FileName: name, Problems: setupProblems(problems)})
	}
	f.Account.Slug = a.Slug
	r, err := setup.Apply(c.Request().Context(), h.store, h.box, nil, f,
		setup.Options{UserID: currentUser(c).ID, Expect: expect})
	if inv, ok := errors.AsType[*setup.Invalid](err); ok {
		return h.renderSetupPreview(c, http.StatusUnprocessableEntity, views.SetupPreview{FileName: name, Problems: setupProblems(inv.Problems),
			Notice: "The account changed since the preview, and the file no longer fits it."})
	}
	if errors.Is(err, setup.ErrChanged) {
		return h.planSetup(c, name, raw, "The account changed since the preview. This is what the file would change now: check it and apply again.")
	}
	if err != nil {
		return err
	}
	msg := "Setup applied: " + views.Plural(int64(len(r.Changes)), "change", "changes") + "."
	if len(r.Changes) == 0 {
		msg = "Nothing to change: the account already matches the file."
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSetup))
}

// readSetupUpload reads the uploaded file: its name, its text, or why it
// cannot be used.
func readSetupUpload(c echo.Context) (name, raw, problem string) {
	fh, err := c.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		return "", "", "Choose a setup file to upload: the .json file that Download setup or leadsignal setup export wrote."
	}
	if err != nil {
		return "", "", "The upload could not be read; try again."
	}
	name = cleanFileName(fh.Filename)
	if fh.Size > maxSetupUpload {
		return name, "", fmt.Sprintf("The file is %s; a setup file is at most 1 MiB, and a real one a few KiB. Is it the right file?", byteSize(fh.Size))
	}
	fd, err := fh.Open()
	if err != nil {
		return name, "", "The upload could not be read; try again."
	}
	defer fd.Close()
	b, err := io.ReadAll(io.LimitReader(fd, maxSetupUpload+1))
	if err != nil || len(b) > maxSetupUpload {
		return name, "", "The upload could not be read; try again."
	}
	return name, string(b), ""
}

// fileNameRE keeps an uploaded file's name to what is safe to show back.
var fileNameRE = regexp.MustCompile(`[^\w .()-]`)

func cleanFileName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = fileNameRE.ReplaceAllString(s, "_")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

func byteSize(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}

// planSetup shows what the file raw would change in the current account,
// with notice on top, or its problems. The file is applied to this
// account whatever slug it names: the preview says so.
func (h *Handler) planSetup(c echo.Context, name, raw, notice string) error {
	a := currentAccount(c)
	v := views.SetupPreview{FileName: name, Notice: notice}
	f, problems := setup.Decode(strings.NewReader(raw))
	if len(problems) > 0 {
		v.Problems = setupProblems(problems)
		return h.renderSetupPreview(c, http.StatusUnprocessableEntity, v)
	}
	if slug := strings.TrimSpace(f.Account.Slug); slug != "" && slug != a.Slug {
		v.OtherSlug = slug
	}
	f.Account.Slug = a.Slug
	r, err := setup.Plan(c.Request().Context(), h.store, h.box, nil, f, setup.Options{})
	if inv, ok := errors.AsType[*setup.Invalid](err); ok {
		v.Problems = setupProblems(inv.Problems)
		return h.renderSetupPreview(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	v.Sections = setupSections(f, r)
	for _, n := range r.Notes {
		v.Notes = append(v.Notes, views.SetupProblem{Path: n.Path, Message: n.Message})
	}
	for _, w := range r.Warnings {
		v.Warnings = append(v.Warnings, views.SetupProblem{Path: w.Path, Message: w.Message})
	}
	v.Changes, v.Raw, v.Expect = len(r.Changes), raw, r.Fingerprint()
	status := http.StatusOK
	if notice != "" {
		status = http.StatusConflict
	}
	return h.renderSetupPreview(c, status, v)
}

func (h *Handler) renderSetupPreview(c echo.Context, status int, v views.SetupPreview) error {
	p := h.page(c, "Upload setup")
	p.Nav = "settings"
	return render(c, status, views.SetupPreviewPage(p, v))
}

func setupProblems(ps []setup.Problem) []views.SetupProblem {
	out := make([]views.SetupProblem, len(ps))
	for i, p := range ps {
		out[i] = views.SetupProblem{Path: p.Path, Message: p.Message}
	}
	return out
}

// setupSections groups a report's changes by the file's sections, each
// change with the name of the dataset, rule or stage mapping it is in.
func setupSections(f setup.File, r setup.Report) []views.SetupSection {
	s := r.Summary
	reordered := func(on bool) string {
		if on {
			return "reordered"
		}
		return ""
	}
	sections := []views.SetupSection{
		{Title: "Account", Summary: summary(counted(s.AccountSettings, "setting changed", "settings changed"))},
		{Title: "Datasets", Summary: summary(counted(s.DatasetsAdded, "added", "added"), counted(s.DatasetsChanged, "changed", "changed"))},
		{Title: "Junk signals", Summary: summary(counted(s.JunkChanges, "signal changed", "signals changed"))},
		{Title: "Send rules", Summary: summary(counted(s.RulesAdded, "added", "added"), counted(s.RulesChanged, "changed", "changed"),
			counted(s.RulesDeleted, "deleted", "deleted"), reordered(s.RulesReordered))},
		{Title: "Stages", Summary: summary(counted(s.StagesChanged, "changed", "changed"), reordered(s.StagesReordered))},
		{Title: "Stage mappings", Summary: summary(counted(s.MappingsAdded, "added", "added"), counted(s.MappingsChanged, "changed", "changed"),
			counted(s.MappingsDeleted, "deleted", "deleted"), reordered(s.MappingsReordered), counted(s.StagesAdded, "stage added", "stages added"))},
		{Title: "Sequences", Summary: summary(counted(s.SequencesAdded, "added", "added"), counted(s.SequencesDeleted, "deleted", "deleted"))},
		{Title: "CRM connections", Summary: summary(counted(s.CRMAdded, "added", "added"), counted(s.CRMChanged, "changed", "changed"),
			counted(s.CRMDeleted, "deleted", "deleted"))},
		{Title: "Site keys", Summary: summary(counted(s.SiteKeysAdded, "added", "added"), counted(s.SiteKeysChanged, "changed", "changed"),
			counted(s.SiteKeysRevoked, "revoked", "revoked"))},
	}
	if s.AccountCreated {
		sections[0].Summary = "created"
	}
	// The sections a file leaves out stay as they are: say so, since a
	// missing section is easy to overlook.
	const absent = "not in the file: left as they are"
	if f.Datasets == nil {
		sections[1].Summary = absent
	}
	if f.Junk == nil {
		sections[2].Summary = absent
	}
	if f.SendRules == nil {
		sections[3].Summary = absent
	}
	if f.StageMappings == nil {
		sections[5].Summary = absent
	}
	if f.Sequences == nil {
		sections[6].Summary = absent
	}
	if f.CRMConnections == nil {
		sections[7].Summary = absent
	}
	if f.SiteKeys == nil {
		sections[8].Summary = absent
	}
	if f.Stages == nil {
		sections[4].Summary = absent
	}
	for _, ch := range r.Changes {
		i, item := 0, ""
		switch {
		case strings.HasPrefix(ch.Path, "datasets"):
			i = 1
			if k, ok := itemIndex(ch.Path, len(f.Datasets)); ok {
				item = f.Datasets[k].Name
			}
		case strings.HasPrefix(ch.Path, "junk"):
			i = 2
		case strings.HasPrefix(ch.Path, "send_rules"):
			i = 3
			if k, ok := itemIndex(ch.Path, len(f.SendRules)); ok {
				item = f.SendRules[k].Name
			}
		case strings.HasPrefix(ch.Path, "stage_mappings"):
			i = 5
			if k, ok := itemIndex(ch.Path, len(f.StageMappings)); ok {
				item = f.StageMappings[k].RuleName()
			}
		case strings.HasPrefix(ch.Path, "sequences"):
			i = 6
		case strings.HasPrefix(ch.Path, "stages"):
			i = 4
			if k, ok := itemIndex(ch.Path, len(f.Stages)); ok {
				item = f.Stages[k].Name
			}
		case strings.HasPrefix(ch.Path, "crm_connections"):
			i = 7
			if k, ok := itemIndex(ch.Path, len(f.CRMConnections)); ok {
				item = f.CRMConnections[k].Name
			}
		case strings.HasPrefix(ch.Path, "site_keys"):
			i = 8
			if k, ok := itemIndex(ch.Path, len(f.SiteKeys)); ok {
				item = f.SiteKeys[k].Name
			}
		}
		key := changeKey(ch.Path)
		if key == "" && strings.Contains(ch.What, strconv.Quote(item)) {
			item = "" // `created "Main" (...)` names it already
		}
		sections[i].Changes = append(sections[i].Changes, views.SetupChange{Subject: item, Key: key, Path: ch.Path, What: ch.What})
	}
	return sections
}

// summary joins a section's counts: "1 added, 2 changed", or "no change".
func summary(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return "no change"
	}
	return strings.Join(out, ", ")
}

// counted is "2 added"; "" for none.
func counted(n int, one, many string) string {
	if n == 0 {
		return ""
	}
	return views.Plural(int64(n), one, many)
}

// itemIndexRE reads the list index of a path like "datasets[2].mode".
var itemIndexRE = regexp.MustCompile(`^[a-z_]+\[(\d+)\]`)

// itemIndex is the index of the list item a change's path is in; false
// for a change of the list itself.
func itemIndex(path string, n int) (int, bool) {
	m := itemIndexRE.FindStringSubmatch(path)
	if m == nil {
		return 0, false
	}
	k, err := strconv.Atoi(m[1])
	return k, err == nil && k < n
}

// changeKey is the setting a change's path names inside its item or
// section: "mode" of "datasets[1].mode", "timezone" of "account.timezone";
// "" for a whole item or section.
func changeKey(path string) string {
	if m := itemIndexRE.FindString(path); m != "" {
		return strings.TrimPrefix(strings.TrimPrefix(path, m), ".")
	}
	if _, key, ok := strings.Cut(path, "."); ok {
		return key
	}
	return ""
}
