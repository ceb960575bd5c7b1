package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The agency overview lists only the user's accounts, each with this
// week's numbers, and puts the one whose dataset Meta paused first.
func TestAgencyOverview(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		st := newStageSetup(t, a, s) // account "crm": a lead last week (UTC); one this week, qualified
		if r := a.postLead(st.key, `{"external_id":"crm-2","email":"new@example.com"}`); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		if r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-2"},"stage":"qualified","occurred_at":%q}`,
			a.clock().Add(time.Minute).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		owner, err := s.UserByEmail(ctx, "crm-owner@example.com")
		if err != nil {
			t.Fatal(err)
		}
		a.account("calm", owner)
		paused, key := a.ingestAccount("paused", "US")
		if err := s.SetMember(ctx, paused.ID, owner.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		d := models.Dataset{AccountID: paused.ID, Name: "Pixel", PixelID: "223456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		if err := s.PauseDataset(ctx, d.ID, "Meta refused the token", a.clock()); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if r := a.postLead(key, fmt.Sprintf(`{"email":"p%d@example.com"}`, i)); r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
		}
		a.account("hidden", a.user("else@example.com", false)) // not the owner's
		b := a.browser()
		b.login("crm-owner@example.com")
		r := b.get("/accounts")
		wantStatus(t, "accounts", r, http.StatusOK)
		rows := r.doc.Find(`[data-testid="account-row"]`)
		var slugs []string
		rows.Each(func(_ int, row *goquery.Selection) { slugs = append(slugs, row.AttrOr("data-slug", "")) })
		// crm's website lead has no page URL: its Lead event is held back,
		// failed, which needs attention too, less than a paused dataset.
		if fmt.Sprint(slugs) != "[paused crm calm]" {
			t.Fatalf("rows = %v; want the paused account, the failing one, then the calm one, and not another user's (%s)", slugs, rows.Text())
		}
		cell := func(i int, id string) string { return rows.Eq(i).Find(`[data-testid="` + id + `"]`).Text() }
		if cell(0, "account-leads") != "2" || cell(1, "account-leads") != "1" || cell(1, "account-qualified") != "1" || cell(2, "account-leads") != "0" {
			t.Errorf("numbers: paused %s leads, crm %s leads %s qualified, calm %s leads",
				cell(0, "account-leads"), cell(1, "account-leads"), cell(1, "account-qualified"), cell(2, "account-leads"))
		}
		if alerts := cell(1, "account-alerts"); !strings.Contains(alerts, "1 event failed in the last 7 days") {
			t.Errorf("crm's alerts = %q; want its failed event", alerts)
		}
		if alerts := cell(2, "account-alerts"); !strings.Contains(alerts, "All good") {
			t.Errorf("calm's alerts = %q; want all good", alerts)
		}
		if csv := b.get("/accounts?csv=1"); !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(csv.body, "Paused,paused,2,") || strings.Contains(csv.body, "hidden") {
			t.Errorf("agency CSV = %q", csv.body)
		}
		if alerts := cell(0, "account-alerts"); !strings.Contains(alerts, "Pixel paused") || !strings.Contains(alerts, "Meta refused the token") {
			t.Errorf("paused account's alerts = %q", alerts)
		}
	})
}
