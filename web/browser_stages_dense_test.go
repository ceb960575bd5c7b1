//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// denseStages is an account with what the Stages and Datasets pages show
// at their fullest: a dry-run dataset with built events and a live one
// with requests, stage mappings, a stage the list lacks, a long stage
// name, an applied upload and a sequence.
type denseStages struct {
	stageSetup
	live     models.Dataset
	upload   int64
	mapping  int64
	b        *browser
	longName string
}

func newDenseStages(t *testing.T, a *app, s *store.Store) denseStages {
	t.Helper()
	st := newStageSetup(t, a, s)
	d := denseStages{stageSetup: st, b: a.browser()}
	d.b.login("crm-owner@example.com")
	d.live = connect(t, a, d.b, st.acc, url.Values{"name": {"Website conversions for the United States market"},
		"pixel_id": {"998877665544332211"}, "access_token": {capitest.Token}, "mode": {"live"}, "ldu": {"off"}})
	for i := range 6 {
		r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"crm-%d","email":"lead%d@example.com","created_at":%q,
			"event_source_url":"https://example.com/quote","client_user_agent":"Mozilla/5.0 (Test)","client_ip_address":"203.0.113.7"}`,
			i+10, i, st.at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339)))
		if r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
	}
	if r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"crm-2","email":"bob@example.com","created_at":%q}`, st.at.Format(time.RFC3339))); r.status != http.StatusCreated {
		t.Fatalf("post lead = %d %s", r.status, r.raw)
	}
	d.longName = "Negotiation with the procurement department of the enterprise customer"
	for i, stage := range []string{"qualified", d.longName, "won"} {
		body := fmt.Sprintf(`{"lead":{"external_id":"crm-%d"},"stage":%q,"occurred_at":%q,"value":900,"currency":"EUR"}`,
			i+10, stage, st.at.Add(time.Hour).Format(time.RFC3339))
		if r := a.postStage(st.key, body); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
	}
	d.upload = uploadID(t, d.b.uploadFile(st.acc, "hubspot-deals-export-2026-11-30-all-pipelines.csv", []byte(uploadCSV), true))
	waitUpload(t, s, st.acc, d.upload, models.UploadPreviewed)
	u, err := s.StageUpload(t.Context(), st.acc.ID, d.upload)
	if err != nil {
		t.Fatal(err)
	}
	if r := d.b.post(stagesURL(st.acc, "/uploads/"+itoa(d.upload)+"/apply"), url.Values{"pass": {itoa(int64(u.Pass))}}); r.status != http.StatusSeeOther {
		t.Fatalf("apply upload = %d", r.status)
	}
	waitUpload(t, s, st.acc, d.upload, models.UploadDone)
	if r := d.b.post(stagesURL(st.acc, "/sequences"), sequenceValues(st.ds, "QualifiedLead", "Purchase")); r.status != http.StatusSeeOther {
		t.Fatalf("add sequence = %d", r.status)
	}
	a.drain()
	d.mapping = st.won.ID
	return d
}

// TestBrowserStagesDatasetsDense looks at every Stages and Datasets page
// at 1280 and 390 px: none is wider than the screen, and their lists take
// one line a row.
func TestBrowserStagesDatasetsDense(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		d := newDenseStages(t, a, s)
		base := a.srv.URL + views.AccountURL(d.acc.ID, "")
		b := chrome(t)
		b.login(a.srv.URL, "crm-owner@example.com")

		b.eachWidth("stages", base+"/stages", `[data-testid="stage-list"]`, func(w int64) {
			b.oneLineRows("sequences", `[data-testid="sequences-table"]`)
			if w == 1280 {
				// On a laptop a stage is one line, each mapping one line.
				b.oneLine("stages", `.stage-line`)
				b.oneLine("mappings", `[data-testid="mapping-row"]`)
				b.oneLine("stages not in the list", `[data-testid="unmapped-stage"]`)
			}
			b.above("the Stages page", `[data-testid="stage-list"]`, `[data-testid="stage-upload-card"]`, `[data-testid="sequences"]`)
			if title := evalJS[string](b, `document.querySelector('[data-testid="unmapped-name"]').title`); title != d.longName {
				t.Errorf("the cut stage name's title = %q; want the whole name", title)
			}
		})
		b.eachWidth("mapping-form", base+"/stages/mappings/"+itoa(d.mapping), `[data-testid="mapping-form"]`, nil)
		b.eachWidth("uploads", base+"/stages/uploads", `[data-testid="stage-uploads"]`, func(int64) {
			b.oneLineRows("uploads", `[data-testid="stage-uploads"]`)
		})
		b.eachWidth("upload", base+"/stages/uploads/"+itoa(d.upload), `[data-testid="upload-panel"]`, func(width int64) {
			// A refused row's reason is what to fix: it wraps, whole, in
			// its cell, and the table still fits the screen.
			if w := evalJS[float64](b, `document.querySelector('[data-testid="upload-problems"]').getBoundingClientRect().right`); w > float64(width) {
				t.Errorf("at %d px the refused rows reach %.0f px", width, w)
			}
			if got := strings.Join(strings.Fields(b.text(`.upload-head p`)), " "); got != "4 rows, uploaded just now by crm-owner@example.com." {
				t.Errorf("the upload's line = %q", got)
			}
		})
		b.eachWidth("datasets", base+"/datasets", `[data-testid="datasets-table"]`, func(int64) {
			b.oneLineRows("datasets", `[data-testid="datasets-table"]`)
		})
		b.eachWidth("dataset", base+"/datasets/"+itoa(d.ds.ID), `[data-testid="dataset-form"]`, nil)
		b.eachWidth("dataset-live", base+"/datasets/"+itoa(d.live.ID), `[data-testid="dataset-form"]`, func(int64) {
			b.oneLineRows("requests", `[data-testid="requests-table"]`)
			// The dataset's own content first: its events, its test
			// event and requests, then its settings.
			b.above("the dataset page", `[data-testid="dataset-counts"]`, `[data-testid="test-form"]`, `[data-testid="requests-table"]`, `[data-testid="dataset-form"]`)
		})
		b.eachWidth("dataset-new", base+"/datasets/new", `[data-testid="dataset-form"]`, nil)
		// An account with a dataset and no mapping yet: the template.
		owner, err := s.UserByEmail(t.Context(), "crm-owner@example.com")
		if err != nil {
			t.Fatal(err)
		}
		fresh := a.account("fresh", owner)
		ds := models.Dataset{AccountID: fresh.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &ds); err != nil {
			t.Fatal(err)
		}
		b.eachWidth("stages-template", a.srv.URL+views.AccountURL(fresh.ID, "/stages"), `[data-testid="stage-template"]`, nil)

		for _, w := range widths {
			b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(base+"/datasets/"+itoa(d.ds.ID)), visible(`[data-testid="test-form"]`),
				click(`[data-testid="test-form"] button`), visible(`[data-testid="test-result"]`))
			b.fits(fmt.Sprintf("the test event at %d px", w))
			b.do(shot(fmt.Sprintf("dataset-test-%d", w)))
		}
	})
}

// oneLine fails the test when an element matching sel takes more than one
// line: its text wraps, or its parts stack.
func (b *tab) oneLine(what, sel string) {
	b.t.Helper()
	bad := evalJS[[]string](b, fmt.Sprintf(`(() => {
		const out = [];
		document.querySelectorAll(%q).forEach((el, i) => {
			const rects = [];
			const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
			for (let n = walk.nextNode(); n; n = walk.nextNode()) {
				if (!n.textContent.trim()) continue;
				const p = n.parentElement;
				if (p.closest(".visually-hidden, details:not([open]) > :not(summary)") || getComputedStyle(p).display === "none") continue;
				const range = document.createRange();
				range.selectNodeContents(n);
				for (const r of range.getClientRects()) if (r.width > 0) rects.push(r);
			}
			if (!rects.length) return;
			const line = Math.max(...rects.map(r => r.height));
			const spread = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
			if (spread > line * 1.5) out.push((i + 1) + " is " + Math.round(spread) + " px tall (a line is " + Math.round(line) + "): " + el.textContent.replace(/\s+/g, " ").trim().slice(0, 80));
		});
		return out;
	})()`, sel))
	if len(bad) > 0 {
		b.t.Errorf("%s take more than one line:\n%s", what, strings.Join(bad, "\n"))
	}
}
