//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserStageUploadLabels uploads a real export whose stages are the
// CRM's labels: the preview lists them first with their rows and the
// stage each probably means; one click saves Closed Won as won's alias,
// the preview counts again by itself and flags the won row without its
// amount; a second click makes Qualified To Buy qualified's and its event
// appears. Looked at on a 1280 px screen and a 390 px phone.
func TestBrowserStageUploadLabels(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		if r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"crm-2","email":"bob@example.com","created_at":%q}`, st.at.Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		file := filepath.Join(t.TempDir(), "deals-export.csv")
		if err := os.WriteFile(file, []byte(labelsCSV(st.at)), 0o600); err != nil {
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
		b.waitJS("the preview's labels", `document.querySelector('[data-testid="upload-panel"]')?.dataset.status === "previewed"
			&& document.querySelectorAll('[data-testid="unmapped-label"]').length === 4`)
		labels := strings.Join(b.tableLines(`[data-testid="unmapped-label"] .upload-label-head`), "\n")
		for _, want := range []string{"Closed Won 1 row probably won", "Qualified To Buy 1 row probably qualified", "Appointment Scheduled 1 row probably booked", "2 rows"} {
			if !strings.Contains(strings.Join(strings.Fields(labels), " "), want) {
				t.Errorf("labels lack %q:\n%s", want, labels)
			}
		}
		if got := b.text(`[data-testid="upload-events"]`); got != "0" {
			t.Errorf("events before any alias = %s; want 0", got)
		}
		b.do(shot("stage-upload-labels-1280"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 1280 {
			t.Errorf("at 1280 px the upload page is %d px wide", w)
		}
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="upload-labels"]`))
		b.do(shot("stage-upload-labels-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the upload page is %d px wide; want no sideways scrolling", w)
		}
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Reload(), visible(`[data-testid="upload-labels"]`))

		// One click: Closed Won becomes won's alias, its suggestion.
		b.do(click(`[data-testid="unmapped-label"][data-label="Closed Won"] [data-testid="unmapped-label-alias"]`))
		b.waitJS("the recount after the alias", `document.querySelector('[data-testid="upload-panel"]')?.dataset.status === "previewed"
			&& !document.querySelector('[data-testid="unmapped-label"][data-label="Closed Won"]')
			&& !!document.querySelector('[data-testid="upload-flag"]')`)
		if got := b.text(`[data-testid="upload-flag"]`); !strings.Contains(got, "Purchase") || !strings.Contains(got, "value") {
			t.Errorf("flag = %q; want the won row's Purchase without its value", got)
		}
		b.do(click(`[data-testid="unmapped-label"][data-label="Qualified To Buy"] [data-testid="unmapped-label-alias"]`))
		b.waitJS("the recount with qualified's event", `document.querySelector('[data-testid="upload-panel"]')?.dataset.status === "previewed"
			&& !!document.querySelector('[data-testid="upload-event-count"][data-event="QualifiedLead"]')`)
		if got := b.text(`[data-testid="upload-events"]`); got != "1" {
			t.Errorf("events after the aliases = %s; want 1", got)
		}
		b.do(shot("stage-upload-labels-after-1280"))
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="upload-panel"]`))
		b.do(shot("stage-upload-labels-after-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the recounted page is %d px wide", w)
		}
	})
}
