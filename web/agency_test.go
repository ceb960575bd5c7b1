package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The agency overview lists only the user's accounts, each with the last
// 7 days' numbers, and puts the one whose dataset Meta paused first.
func TestAgencyOverview(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		st := newStageSetup(t, a, s) // account "crm": a lead 2 days ago, on a dry-run dataset
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
		calm := a.account("calm", owner)
		a.dataset(calm, models.ModeDryRun, a.clock())
		paused, key := a.ingestAccount("paused", "US")
		if err := s.SetMember(ctx, paused.ID, owner.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		d := a.dataset(paused, models.ModeLive, a.clock())
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
		if w := r.text("accounts-window"); w != "Last 7 days" {
			t.Errorf("the numbers' column head = %q; want the window named", w)
		}
		rows := r.doc.Find(`[data-testid="account-row"]`)
		var slugs []string
		rows.Each(func(_ int, row *goquery.Selection) { slugs = append(slugs, row.AttrOr("data-slug", "")) })
		// crm's website lead has no page URL: our check held its Lead event
		// back, which needs attention too, less than a paused dataset.
		if fmt.Sprint(slugs) != "[paused crm calm]" {
			t.Fatalf("rows = %v; want the paused account, the failing one, then the calm one, and not another user's (%s)", slugs, rows.Text())
		}
		cell := func(i int, id string) string {
			return strings.TrimSpace(rows.Eq(i).Find(`[data-testid="` + id + `"]`).Text())
		}
		if cell(0, "account-leads") != "2" || cell(1, "account-leads") != "2" || cell(1, "account-qualified") != "1" || cell(2, "account-leads") != "0" {
			t.Errorf("numbers: paused %s leads, crm %s leads %s qualified, calm %s leads",
				cell(0, "account-leads"), cell(1, "account-leads"), cell(1, "account-qualified"), cell(2, "account-leads"))
		}
		// Held back is not failed (Meta refused none): one word each.
		if failed, alerts := cell(1, "account-failed"), cell(1, "account-alerts"); failed != "0" || !strings.Contains(alerts, "1 event held back") ||
			strings.Contains(alerts, "failed") {
			t.Errorf("crm: failed %s, alerts %q; want none failed and 1 event held back", failed, alerts)
		}
		if alerts := cell(2, "account-alerts"); alerts != "All good" {
			t.Errorf("calm's alerts = %q; want all good", alerts)
		}
		if csv := b.get("/accounts?csv=1"); !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(csv.body, "Paused,paused,7,2,0,") || strings.Contains(csv.body, "hidden") {
			t.Errorf("agency CSV = %q", csv.body)
		}
		if alerts := cell(0, "account-alerts"); !strings.Contains(alerts, "Pixel paused") || !strings.Contains(alerts, "Meta refused the token") {
			t.Errorf("paused account's alerts = %q", alerts)
		}
		// A viewer of paused is not led to its datasets; crm's owner is.
		if n := rows.Eq(0).Find(`a[href*="/datasets"]`).Length(); n != 0 {
			t.Errorf("a viewer's row links %d times to datasets", n)
		}
		if href := rows.Eq(1).Find(`a[data-testid="account-alert"]:contains("held back")`).AttrOr("href", ""); !strings.Contains(href, "/events?") ||
			!strings.Contains(href, "status=held_back") {
			t.Errorf("crm's held-back alert links to %q; want the send log's held-back events", href)
		}
	})
}

// dataset gives acc a dataset in mode, connected at created, with a token
// the fake Graph API takes.
func (a *app) dataset(acc models.Account, mode models.Mode, created time.Time) models.Dataset {
	a.t.Helper()
	ctx := a.t.Context()
	d := models.Dataset{AccountID: acc.ID, Name: "Pixel", PixelID: "223456789012345", Mode: mode, LDU: models.LDUOff, CreatedAt: created}
	if err := a.store.CreateDataset(ctx, &d); err != nil {
		a.t.Fatal(err)
	}
	d.TokenSealed, d.TokenLast4 = a.box.Seal(capitest.Token, dispatch.TokenLabel(d.ID)), "1234"
	if err := a.store.SaveDataset(ctx, &d); err != nil {
		a.t.Fatal(err)
	}
	return d
}

// agencyAlerts is what each account's row of the agency overview says
// needs attention, by slug, and its numbers.
func agencyAlerts(t *testing.T, b *browser) (alerts map[string]string, numbers map[string]string) {
	t.Helper()
	r := b.get("/accounts")
	wantStatus(t, "accounts", r, http.StatusOK)
	alerts, numbers = map[string]string{}, map[string]string{}
	r.doc.Find(`[data-testid="account-row"]`).Each(func(_ int, row *goquery.Selection) {
		slug := row.AttrOr("data-slug", "")
		alerts[slug] = strings.Join(strings.Fields(row.Find(`[data-testid="account-alerts"]`).Text()), " ")
		var ns []string
		for _, id := range []string{"leads", "junk", "qualified", "sent", "failed"} {
			ns = append(ns, id+" "+strings.TrimSpace(row.Find(`[data-testid="account-`+id+`"]`).Text()))
		}
		numbers[slug] = strings.Join(ns, ", ")
	})
	return alerts, numbers
}

// Each alert of the agency overview is raised when it holds and cleared
// when it is fixed (or its window has passed); "All good" only when none
// holds.
func TestAgencyAlertsRaiseAndClear(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		// Events go to the fake Meta, which checks their times against the
		// real clock: the app runs on it too.
		a.advance(time.Now().Truncate(time.Second).Sub(a.clock()))
		now := a.clock()
		owner := a.user("agency@example.com", false)
		account := func(slug string) (models.Account, string) {
			acc := a.account(slug, owner)
			_, key, err := s.CreateIngestKey(ctx, acc.ID, "website")
			if err != nil {
				t.Fatal(err)
			}
			return acc, key
		}
		lead := func(key, body string) {
			t.Helper()
			if r := a.postLead(key, body); r.status != http.StatusCreated {
				t.Fatalf("post lead %s = %d %s", body, r.status, r.raw)
			}
		}
		bare, _ := account("bare")
		junky, junkKey := account("junky")
		a.dataset(junky, models.ModeLive, now)
		for i := range 2 {
			lead(junkKey, fmt.Sprintf(`{"email":"j%d@example.com","source":"crm","honeypot":"buy now"}`, i))
		}
		trial, _ := account("trial")
		trialSet := a.dataset(trial, models.ModeDryRun, now.Add(-15*24*time.Hour))
		young, _ := account("young")
		a.dataset(young, models.ModeTest, now.Add(-3*24*time.Hour))
		labels, labelKey := account("labels")
		a.dataset(labels, models.ModeDryRun, now)
		lead(labelKey, `{"external_id":"l-1","email":"l1@example.com","source":"crm"}`)
		if r := a.postStage(labelKey, fmt.Sprintf(`{"lead":{"external_id":"l-1"},"stage":"Demo scheduled","occurred_at":%q}`,
			now.Add(time.Minute).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		stuck, stuckKey := account("stuck")
		a.dataset(stuck, models.ModeDryRun, now)
		lead(stuckKey, `{"email":"s1@example.com","source":"crm"}`)
		const secret = "generic-secret-0123456789"
		conn := a.connection(stuck, crm.Generic, "Zapier", secret, "")
		if err := s.MapCRMStages(ctx, stuck.ID, conn.ID, map[string]string{"S-9": ""}, now); err != nil {
			t.Fatal(err)
		}
		if r := a.postHook("/hooks/generic/"+conn.Token, []byte(`{"email":"s1@example.com","stage":"S-9"}`), "Authorization", "Bearer "+secret); r.status != http.StatusOK {
			t.Fatalf("post hook = %d %s", r.status, r.raw)
		}
		a.work()
		failing, failKey := account("failing")
		a.dataset(failing, models.ModeLive, now)
		lead(failKey, `{"email":"f1@example.com"}`) // a website lead with no page URL: our check holds its event back
		a.drain()

		held, _ := account("held")
		tt := models.Dataset{AccountID: held.ID, Kind: models.KindTikTok, Name: "TikTok Ads", PixelID: "C4TIKTOK1", EventSource: "web",
			Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &tt); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.HoldDataset(ctx, tt.ID, now, "TikTok 40100: Too many requests", func(int) time.Duration { return time.Minute }, nil); err != nil {
			t.Fatal(err)
		}

		b := a.browser()
		b.login("agency@example.com")
		alerts, numbers := agencyAlerts(t, b)
		want := map[string]string{
			"held":    "TikTok Ads (TikTok) held: TikTok failing since",
			"bare":    "No destination",
			"junky":   "All 2 leads junk",
			"trial":   "Pixel in dry run for 15 days",
			"labels":  `1 stage label not in the list: "Demo scheduled"`,
			"stuck":   "Generic webhook Zapier: 1 delivery waits for a stage mapping",
			"failing": "1 event held back",
		}
		for slug, w := range want {
			if !strings.Contains(alerts[slug], w) {
				t.Errorf("%s's alerts = %q; want %q", slug, alerts[slug], w)
			}
		}
		if alerts["young"] != "All good" {
			t.Errorf("young's alerts = %q; want all good: a test dataset of 3 days is a trial", alerts["young"])
		}
		// The row's numbers are those its alerts speak of.
		if numbers["junky"] != "leads 2, junk 2, qualified 0, sent 0, failed 0" {
			t.Errorf("junky's numbers = %s; want its 2 junk leads", numbers["junky"])
		}
		if numbers["failing"] != "leads 1, junk 0, qualified 0, sent 0, failed 0" ||
			!strings.Contains(alerts["failing"], "1 lead not junk, nothing sent") || strings.Contains(alerts["failing"], "failed") {
			t.Errorf("failing: %s, %q; want its lead, its held-back event (not failed) and nothing sent", numbers["failing"], alerts["failing"])
		}

		// Fix each.
		a.dataset(bare, models.ModeDryRun, now)
		lead(junkKey, `{"email":"clean@example.com","source":"crm"}`)
		if alerts, _ := agencyAlerts(t, b); alerts["junky"] != "All good" {
			t.Errorf("junky with a clean lead's event waiting = %q; want all good: it is on its way", alerts["junky"])
		}
		lead(failKey, `{"email":"f2@example.com","event_source_url":"https://example.com/quote","client_user_agent":"Mozilla/5.0 (Test)",
			"client_ip_address":"203.0.113.7"}`)
		a.drain()
		trialSet.Mode = models.ModeLive
		if err := s.SaveDataset(ctx, &trialSet); err != nil {
			t.Fatal(err)
		}
		stages, err := s.Stages(ctx, labels.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stages {
			if st.Name == models.StageBooked {
				if _, err := s.SetStageAliases(ctx, labels.ID, st.ID, []string{"demo-scheduled"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.MapCRMStages(ctx, stuck.ID, conn.ID, map[string]string{"S-9": models.StageQualified}, now); err != nil {
			t.Fatal(err)
		}
		a.work()
		alerts, numbers = agencyAlerts(t, b)
		for _, slug := range []string{"bare", "junky", "trial", "young", "labels", "stuck"} {
			if alerts[slug] != "All good" {
				t.Errorf("%s's alerts once fixed = %q; want all good", slug, alerts[slug])
			}
		}
		if numbers["junky"] != "leads 3, junk 2, qualified 0, sent 1, failed 0" {
			t.Errorf("junky's numbers = %s; want its clean lead sent", numbers["junky"])
		}
		if numbers["failing"] != "leads 2, junk 0, qualified 0, sent 1, failed 0" || alerts["failing"] != "1 event held back" {
			t.Errorf("failing with a lead sent: %s, %q; want only its held-back event", numbers["failing"], alerts["failing"])
		}

		// A week later the held-back event is out of the window.
		a.advance(8 * 24 * time.Hour)
		b = a.browser() // the session has ended by then
		b.login("agency@example.com")
		alerts, numbers = agencyAlerts(t, b)
		if alerts["failing"] != "All good" || numbers["failing"] != "leads 0, junk 0, qualified 0, sent 0, failed 0" {
			t.Errorf("failing 8 days later: %q, %s; want its held-back event out of the window", alerts["failing"], numbers["failing"])
		}
	})
}
