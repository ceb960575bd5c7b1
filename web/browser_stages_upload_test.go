//go:build browser

package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserStageUpload uploads a CRM export with rows whose lead the
// account lacks and one whose date cannot be read, sees the preview (the
// refused rows with their row numbers and reasons, the events per event
// name) fill in by itself while the page polls, applies it, watches the
// progress reach done and finds the events in the send log. The pages are
// looked at on a 1280 px screen and a 390 px phone.
func TestBrowserStageUpload(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		file := filepath.Join(t.TempDir(), "hubspot-deals.csv")
		if err := os.WriteFile(file, []byte(uploadCSV), 0o600); err != nil {
			t.Fatal(err)
		}
		base := a.srv.URL + "/accounts/" + itoa(st.acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "crm-owner@example.com")

		b.do(
			chromedp.Navigate(base+"/stages/uploads"),
			visible(`[data-testid="stage-upload-form"]`),
			chromedp.SetUploadFiles(chromedp.CSS(`#f-stage-csv`), []string{file}),
			click(`[data-testid="stage-upload-submit"]`),
		)
		b.waitJS("the preview", `document.querySelector('[data-testid="upload-panel"]')?.dataset.status === "previewed"`)
		problems := b.tableCells(`[data-testid="upload-problems"]`)
		var got []string
		for _, p := range problems {
			got = append(got, strings.Join(p, " | "))
		}
		want := []string{
			"3 | Email Address | Email Address nobody@example.com: no lead of this account has this email",
			`4 | Close Date | Close Date 31/31/2026 is not a date this upload reads: write it like 2026-12-01T14:03:00Z, 2026-12-01 14:03 or 12/01/2026 (month first)`,
			"5 | Email Address | Email Address bob@example.com: no lead of this account has this email",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("refused rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got := b.tableLines(`[data-testid="upload-event-count"] code`); strings.Join(got, ",") != "Purchase,QualifiedLead,Schedule" {
			t.Errorf("events per name = %q; want Purchase, QualifiedLead and Schedule", got)
		}
		if got := b.text(`[data-testid="upload-events"]`); got != "3" {
			t.Errorf("events it would queue = %s; want 3", got)
		}
		b.do(shot("stage-upload-preview-1280"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 1280 {
			t.Errorf("at 1280 px the upload page is %d px wide", w)
		}
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="upload-panel"]`))
		b.do(shot("stage-upload-preview-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the upload page is %d px wide; want no sideways scrolling", w)
		}
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Reload(), visible(`[data-testid="upload-apply"]`))

		// Applying runs in the background; the page follows it by itself.
		b.do(markNoReload(), click(`[data-testid="upload-apply"]`))
		b.waitJS("the upload applied", `document.querySelector('[data-testid="upload-panel"]')?.dataset.status === "done"`)
		if got := b.text(`[data-testid="upload-applied"]`); got != "1" {
			t.Errorf("recorded = %s; want 1", got)
		}
		b.do(shot("stage-upload-done-1280"))
		b.do(
			click(`[data-testid="upload-sendlog"]`),
			visible(`[data-testid="events-table"]`),
			shot("stage-upload-sendlog"),
		)
		var shown []string
		for _, r := range b.tableCells(`[data-testid="events-table"]`) {
			if len(r) > 1 {
				if f := strings.Fields(r[1]); len(f) > 0 && (f[0] == "Purchase" || f[0] == "Schedule" || f[0] == "QualifiedLead") {
					shown = append(shown, r[1])
				}
			}
		}
		if got := strings.Join(shown, ","); got != "Purchase,Schedule filled in,QualifiedLead filled in" {
			t.Errorf("send log shows %s; want Purchase, Schedule filled in, QualifiedLead filled in", got)
		}

		b.do(chromedp.Navigate(base+"/stages/uploads"), visible(`[data-testid="stage-uploads"]`), shot("stage-uploads-1280"))
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="stage-uploads"]`), shot("stage-uploads-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the uploads page is %d px wide", w)
		}
	})
}
