//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"net/url"
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
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		d := newDenseStages(t, a, s)
		base := a.srv.URL + views.AccountURL(d.acc.ID, "")
		b := chrome(t)
		b.login(a.srv.URL, "crm-owner@example.com")

		b.eachWidth("stages", base+"/stages", `[data-testid="stage-list"]`, nil)
		b.eachWidth("mapping-form", base+"/stages/mappings/"+itoa(d.mapping), `[data-testid="mapping-form"]`, nil)
		b.eachWidth("uploads", base+"/stages/uploads", `[data-testid="stage-uploads"]`, nil)
		b.eachWidth("upload", base+"/stages/uploads/"+itoa(d.upload), `[data-testid="upload-panel"]`, nil)
		b.eachWidth("datasets", base+"/datasets", `[data-testid="datasets-table"]`, nil)
		b.eachWidth("dataset", base+"/datasets/"+itoa(d.ds.ID), `[data-testid="dataset-form"]`, nil)
		b.eachWidth("dataset-live", base+"/datasets/"+itoa(d.live.ID), `[data-testid="dataset-form"]`, nil)
		b.eachWidth("dataset-new", base+"/datasets/new", `[data-testid="dataset-form"]`, nil)
		for _, w := range widths {
			b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(base+"/datasets/"+itoa(d.ds.ID)), visible(`[data-testid="test-form"]`),
				click(`[data-testid="test-form"] button`), visible(`[data-testid="test-result"]`))
			b.fits(fmt.Sprintf("the test event at %d px", w))
			b.do(shot(fmt.Sprintf("dataset-test-%d", w)))
		}
	})
}
