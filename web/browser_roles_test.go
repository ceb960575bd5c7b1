//go:build browser

package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserSalesConfirmsWon: a sales manager sets a lead to won with
// 5,000 on a laptop and on a phone; a Purchase to a live dataset asks
// first, naming the event, its value and the dataset, and the confirmed
// stage sends it. Cancel records nothing.
func TestBrowserSalesConfirmsWon(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	live := models.Dataset{AccountID: f.acc.ID, Name: "Northwind website", PixelID: "223456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &live); err != nil {
		t.Fatal(err)
	}
	createMappingForm(t, f, mappingValues("won", live, "Purchase", "change"))
	sales := f.a.user("sam@example.com", false)
	if err := s.SetMember(t.Context(), f.acc.ID, sales.ID, models.RoleSales); err != nil {
		t.Fatal(err)
	}
	var leads []int64
	for i := range widths {
		n := strconv.Itoa(i + 1)
		body := strings.NewReplacer(`"external_id":"form-1"`, `"external_id":"form-`+n+`"`,
			"Jane.Doe@Example.COM", "jane"+n+"@example.com", "692-4281", "692-428"+n).Replace(goodLead)
		r := f.a.postLead(f.key, body)
		if r.status != http.StatusCreated {
			t.Fatalf("post lead: %d %s", r.status, r.raw)
		}
		leads = append(leads, r.LeadID)
	}

	b := chrome(t)
	b.login(f.a.srv.URL, "sam@example.com")
	base := f.a.srv.URL + "/accounts/" + itoa(f.acc.ID)
	for i, w := range widths {
		page := base + "/leads/" + itoa(leads[i])
		name := "sales-won-" + strconv.FormatInt(w, 10)
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(page), visible(`[data-testid="stage-form"]`))
		// Cancel first: nothing is recorded.
		b.do(
			setValue(`#f-stage`, "won"),
			setValue(`#f-value`, "5000"),
			setValue(`#f-currency`, "EUR"),
			click(`[data-testid="stage-form"] button[type="submit"]`),
			visible(`[data-testid="stage-confirm"]`),
			click(`[data-testid="stage-confirm-cancel"]`),
			visible(`[data-testid="stage-form"]`),
		)
		if cs, _ := s.StageChanges(t.Context(), f.acc.ID, leads[i]); len(cs) != 0 {
			t.Fatalf("at %d px: cancel recorded %d changes", w, len(cs))
		}
		b.do(
			setValue(`#f-stage`, "won"),
			setValue(`#f-value`, "5000"),
			setValue(`#f-currency`, "EUR"),
			click(`[data-testid="stage-form"] button[type="submit"]`),
			visible(`[data-testid="stage-confirm"]`),
		)
		b.fits(name + " confirm")
		text := b.text(`[data-testid="stage-confirm-text"]`)
		for _, want := range []string{"won", "Purchase", "5000.00 EUR", "Northwind website"} {
			if !strings.Contains(text, want) {
				t.Errorf("at %d px the confirm says %q; want %q", w, text, want)
			}
		}
		if h := evalJS[float64](b, `document.querySelector('[data-testid="stage-confirm-send"]').getBoundingClientRect().height`); w == 390 && h < 44 {
			t.Errorf("at 390 px the confirm button is %.0f px high; want at least 44", h)
		}
		b.do(
			shot(name+"-confirm"),
			click(`[data-testid="stage-confirm-send"]`),
			visible(`[data-testid="flash"]`),
			visible(`[data-testid="lead-stage"]`),
		)
		b.fits(name + " done")
		b.do(shot(name + "-done"))
		if got := b.text(`[data-testid="lead-stage"]`); got != "won" {
			t.Errorf("at %d px the stage is %q after confirming; want won", w, got)
		}
		if flash := b.text(`[data-testid="flash"]`); !strings.Contains(flash, "Purchase") {
			t.Errorf("at %d px the message %q; want it to name the Purchase queued", w, flash)
		}
		evs, _ := s.LeadEvents(t.Context(), f.acc.ID, leads[i])
		sent := 0
		for _, e := range evs {
			if e.EventName == "Purchase" && e.DatasetID == live.ID && e.Value != nil && *e.Value == 5000 {
				sent++
			}
		}
		if sent != 1 {
			t.Errorf("at %d px: %d Purchases of 5000 to the live dataset; want 1", w, sent)
		}
	}
}

// TestBrowserSalesReadARule: a sales manager opens a rule from the Rules
// list on a laptop and on a phone: the rule reads as saved, nothing in
// it can be changed, and its preview counts the leads it matches.
func TestBrowserSalesReadARule(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	if r := f.a.postLead(f.key, goodLead); r.status != http.StatusCreated {
		t.Fatalf("post lead: %d %s", r.status, r.raw)
	}
	sales := f.a.user("sam@example.com", false)
	if err := s.SetMember(t.Context(), f.acc.ID, sales.ID, models.RoleSales); err != nil {
		t.Fatal(err)
	}
	b := chrome(t)
	b.login(f.a.srv.URL, "sam@example.com")
	for _, w := range widths {
		name := "sales-rule-" + strconv.FormatInt(w, 10)
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(f.a.srv.URL+"/accounts/"+itoa(f.acc.ID)+"/rules"),
			click(`[data-testid="rule-name"]`), visible(`[data-testid="preview-matched"]`))
		b.fits(name)
		b.do(shot(name))
		if got := b.text(`[data-testid="preview-matched"]`); got != "1" {
			t.Errorf("at %d px the preview matches %q; want 1", w, got)
		}
		if !evalJS[bool](b, `document.querySelector('#f-name').matches(':disabled') && !document.querySelector('[data-testid="save-rule"]')`) {
			t.Errorf("at %d px the rule can be edited or saved", w)
		}
		if !strings.Contains(b.text(`[data-testid="read-only"]`), "editors") {
			t.Errorf("at %d px the page does not say who changes rules", w)
		}
	}
}

// TestBrowserSalesReadSetupPages: a sales manager follows the Stages
// page's links to a stage mapping, a CRM connection and an upload, on a
// laptop and on a phone: each page fits, says it is read-only where it
// has a form, and offers nothing that changes it.
func TestBrowserSalesReadSetupPages(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRolesFixture(t, s)
	b := chrome(t)
	b.login(f.a.srv.URL, "sales@example.com")
	pages := []struct{ name, link, ready string }{
		{"mapping", `[data-testid="mapping-event"]`, `[data-testid="mapping-form"]`},
		{"crm", `[data-testid="crm-name"]`, `[data-testid="crm-deliveries"]`},
		{"upload", `[data-testid="stage-uploads-link"]`, `[data-testid="stage-uploads"]`},
	}
	for _, w := range widths {
		for _, pg := range pages {
			name := "sales-" + pg.name + "-" + strconv.FormatInt(w, 10)
			b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(f.a.srv.URL+f.path("/stages")), visible(pg.link),
				click(pg.link), visible(pg.ready))
			b.fits(name)
			b.do(shot(name))
			if n := b.count(`main form[method="post"] button, [data-testid="edit-crm"], [data-testid="crm-hook"], [data-testid="stage-upload-form"]`); n != 0 {
				t.Errorf("%s: %d controls that change something", name, n)
			}
			if strings.Contains(b.text(`main`), "URL above") {
				t.Errorf("%s points sales to a hook URL they are not shown", name)
			}
		}
	}
}
