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
	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/pinterest/pinteresttest"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// fanOut is an account whose leads go to Meta, TikTok, Pinterest and
// Google Ads, each destination live: one send rule names all four (a
// completed lead's Lead), and one mapping of won to Purchase with the
// deal's value names all four too.
type fanOut struct {
	acc  models.Account
	key  string
	dest map[models.Kind]models.Dataset
}

func newFanOut(t *testing.T, a *app, s *store.Store) fanOut {
	t.Helper()
	ctx := t.Context()
	acc, key := a.ingestAccount("fan", "US")
	f := fanOut{acc: acc, key: key, dest: map[models.Kind]models.Dataset{}}
	for _, d := range []models.Dataset{
		{Kind: models.KindMeta, Name: "Meta", PixelID: "123456789012345", APIVersion: capitest.Version},
		{Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", EventSource: "web"},
		{Kind: models.KindPinterest, Name: "Pinterest", PixelID: pinteresttest.AdAccount},
		{Kind: models.KindGoogle, Name: "Google", PixelID: googletest.OperatingAccount, ClientID: googletest.ClientID,
			EventNames: fmt.Sprintf(`{"Lead":%q,"Purchase":%q}`, googletest.ConversionActions[0], googletest.ConversionActions[1])},
	} {
		d.AccountID, d.Mode, d.LDU = acc.ID, models.ModeLive, models.LDUOff
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		token := map[models.Kind]string{models.KindMeta: capitest.Token, models.KindTikTok: tiktoktest.Token,
			models.KindPinterest: pinteresttest.Token, models.KindGoogle: googletest.RefreshToken}[d.Kind]
		d.TokenSealed = a.box.Seal(token, dispatch.TokenLabel(d.ID))
		if d.Kind == models.KindGoogle {
			d.AppSecretSealed = a.box.Seal(googletest.ClientSecret, dispatch.AppSecretLabel(d.ID))
		}
		if err := s.SaveDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		f.dest[d.Kind] = d
	}
	// Each destination came with its own default rule: one rule for all
	// four takes their place.
	defaults, err := s.SendRules(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range defaults {
		if err := s.DeleteSendRule(ctx, acc.ID, r.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	all := []int64{f.dest[models.KindMeta].ID, f.dest[models.KindTikTok].ID, f.dest[models.KindPinterest].ID, f.dest[models.KindGoogle].ID}
	lead := models.SendRule{AccountID: acc.ID, Name: "Completed leads everywhere", Mode: string(rule.AutomaticCompleted),
		EventName: "Lead", Combinator: "and", Conditions: "[]", Enabled: true}
	won := models.SendRule{AccountID: acc.ID, Name: "won to Purchase everywhere", Mode: string(rule.Stage),
		Stage: models.StageWon, EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
	for _, r := range []*models.SendRule{&lead, &won} {
		r.SetDestinations(all)
		if err := s.CreateSendRule(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// received counts what each platform's fake took.
func received(a *app) map[models.Kind]int {
	return map[models.Kind]int{models.KindMeta: a.meta.EventsReceived(), models.KindTikTok: a.tiktok.EventsReceived(),
		models.KindPinterest: a.pinterest.EventsReceived(), models.KindGoogle: a.google.EventsReceived()}
}

// TestFanOutEndToEnd: one lead and its won stage reach Meta, TikTok,
// Pinterest and Google once each, with each platform's ids, hashes and
// value; a replayed stage change sends nothing again anywhere.
func TestFanOutEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		f := newFanOut(t, a, s)
		r := a.postLead(f.key, `{"external_id":"crm-9","email":"Alex.Smith+Promo@Gmail.com","phone":"(415) 555-2671",
			"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0 (X11)",
			"event_source_url":"https://acme.example/quote?gclid=G-CLICK&ttclid=TT-CLICK&epik=PIN-CLICK"}`)
		if r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		won := fmt.Sprintf(`{"lead":{"external_id":"crm-9"},"stage":"won","occurred_at":%q,"value":250,"currency":"USD","change_id":"deal-1"}`,
			a.clock().Add(time.Minute).Format(time.RFC3339))
		a.advance(2 * time.Minute)
		if st := a.postStage(f.key, won); st.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", st.status, st.raw)
		}
		a.drain()
		want := map[models.Kind]int{models.KindMeta: 2, models.KindTikTok: 2, models.KindPinterest: 2, models.KindGoogle: 2}
		if got := received(a); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("received %v; want a Lead and a Purchase on each platform", got)
		}

		// TikTok: +E.164 phone, ttclid, value as a number, Purchase.
		tt := a.tiktok.Requests()[0].Data
		var ttPurchase map[string]any
		for _, e := range tt {
			if e["event"] == "Purchase" {
				ttPurchase = e
			}
			if ph := e["user"].(map[string]any)["phone"].([]any)[0]; ph != normalize.Hash("+14155552671") {
				t.Errorf("TikTok phone hash %v; want +E.164's", ph)
			}
			if e["user"].(map[string]any)["ttclid"] != "TT-CLICK" {
				t.Errorf("TikTok ttclid = %v", e["user"])
			}
		}
		if ttPurchase == nil || ttPurchase["properties"].(map[string]any)["value"] != 250.0 {
			t.Errorf("TikTok Purchase = %v; want value 250", ttPurchase)
		}
		// Pinterest: digits phone, epik, value as a string, checkout.
		for _, e := range a.pinterest.Events() {
			ud := e["user_data"].(map[string]any)
			if ud["ph"].([]any)[0] != normalize.Hash("14155552671") || ud["click_id"] != "PIN-CLICK" {
				t.Errorf("Pinterest user_data = %v", ud)
			}
			if e["event_name"] == "checkout" && e["custom_data"].(map[string]any)["value"] != "250.00" {
				t.Errorf("Pinterest checkout = %v; want value \"250.00\"", e)
			}
		}
		// Google: Gmail-rule email, gclid, a conversion action per event.
		actions := map[string]float64{}
		for _, e := range a.google.Events() {
			if e.AdIdentifiers == nil || e.AdIdentifiers.GCLID != "G-CLICK" {
				t.Errorf("Google adIdentifiers = %+v", e.AdIdentifiers)
			}
			if e.UserData == nil || e.UserData.UserIdentifiers[0].EmailAddress != normalize.Hash("alexsmith@gmail.com") {
				t.Errorf("Google userData = %+v; want the Gmail rule's hash", e.UserData)
			}
			v := 0.0
			if e.ConversionValue != nil {
				v = *e.ConversionValue
			}
			actions[e.DestinationReferences[0]] = v
		}
		if actions[googletest.ConversionActions[0]] != 0 || actions[googletest.ConversionActions[1]] != 250 || len(actions) != 2 {
			t.Errorf("Google actions %v; want Lead's and Purchase's (250)", actions)
		}
		// Each platform has its own event ids: one lead, four destinations.
		ids := map[string]bool{}
		for _, e := range a.tiktok.Requests()[0].Data {
			ids[e["event_id"].(string)] = true
		}
		for _, e := range a.pinterest.Events() {
			if ids[e["event_id"].(string)] {
				t.Errorf("TikTok and Pinterest share event id %v", e["event_id"])
			}
		}

		// The Overview follows won to each destination, its counts adding up.
		b := a.browser()
		b.login("fan-owner@example.com")
		ov := b.get(fmt.Sprintf("/accounts/%d", f.acc.ID))
		var purchases []string
		ov.doc.Find(`[data-testid="reconcile-line"]`).Each(func(_ int, l *goquery.Selection) {
			if text := strings.Join(strings.Fields(l.Text()), " "); strings.Contains(text, "Purchase to") {
				purchases = append(purchases, text)
			}
		})
		if len(purchases) != 4 || !strings.Contains(ov.text("reconcile"), "From the CRM to each destination") {
			t.Errorf("the Overview's Purchase lines = %q; want one for each of the 4 destinations", purchases)
		}
		for _, line := range purchases {
			if strings.Contains(line, " :") {
				t.Errorf("reconcile line %q has a space before its colon", line)
			}
			if !strings.Contains(line, "1 leads reached it") && !strings.Contains(line, "1 lead reached it") || !strings.Contains(line, "1 sent") {
				t.Errorf("reconcile line %q; want the lead that reached won and its one event sent", line)
			}
		}

		// The CRM sends the same change again, and a retry of each sent event is refused.
		if st := a.postStage(f.key, won); st.status/100 != 2 {
			t.Fatalf("replayed stage = %d %s", st.status, st.raw)
		}
		a.advance(time.Minute)
		a.drain()
		if got := received(a); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the replay: received %v; want nothing more", got)
		}
	})
}

// TestFanOutOutageHoldsOnePlatform: while Pinterest fails, its destination
// alone is held; Meta, TikTok and Google send; Pinterest's events follow
// once it answers, once each.
func TestFanOutOutageHoldsOnePlatform(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		f := newFanOut(t, a, s)
		a.pinterest.FailNext(1, http.StatusServiceUnavailable)
		for i := range 3 {
			r := a.postLead(f.key, fmt.Sprintf(`{"email":"lead%d@example.com","client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0","event_source_url":"https://acme.example/quote"}`, i))
			if r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
		}
		a.drain()
		if got := received(a); got[models.KindMeta] != 3 || got[models.KindTikTok] != 3 || got[models.KindGoogle] != 3 || got[models.KindPinterest] != 0 {
			t.Fatalf("received %v during Pinterest's outage; want 3 everywhere but Pinterest", got)
		}
		held, _ := s.Dataset(t.Context(), f.acc.ID, f.dest[models.KindPinterest].ID)
		if held.HeldSince == nil || !strings.Contains(held.HoldError, "Pinterest") {
			t.Fatalf("Pinterest hold = %v %q; want held", held.HeldSince, held.HoldError)
		}
		for _, k := range []models.Kind{models.KindMeta, models.KindTikTok, models.KindGoogle} {
			if d, _ := s.Dataset(t.Context(), f.acc.ID, f.dest[k].ID); d.HeldSince != nil {
				t.Errorf("%s is held for Pinterest's outage", k)
			}
		}
		b := a.browser()
		b.login("fan-owner@example.com")
		if alert := b.get(fmt.Sprintf("/accounts/%d", f.acc.ID)).text("account-alert"); !strings.Contains(alert, "Pinterest unreachable for Pinterest destination Pinterest") {
			t.Errorf("alert = %q; want Pinterest named", alert)
		}
		a.advance(held.HoldUntil.Sub(a.clock()))
		a.drain()
		if got := received(a); got[models.KindPinterest] != 3 || got[models.KindMeta] != 3 {
			t.Errorf("received %v after the outage; want Pinterest's 3, nothing twice", got)
		}
	})
}

// TestFanOutWebhookReplay: a CRM's won delivered twice (a webhook
// replayed) sends one Purchase to each platform, none twice.
func TestFanOutWebhookReplay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		f := newFanOut(t, a, s)
		const secret = "generic-secret-0123456789"
		c := a.connection(f.acc, crm.Generic, "Zapier", secret, "")
		if err := s.MapCRMStages(t.Context(), f.acc.ID, c.ID, map[string]string{"Closed Won": models.StageWon}, a.clock()); err != nil {
			t.Fatal(err)
		}
		if r := a.postLead(f.key, `{"external_id":"crm-10","email":"sam@example.com","client_ip_address":"203.0.113.7",
			"client_user_agent":"Mozilla/5.0","event_source_url":"https://acme.example/quote?gclid=G2"}`); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		a.advance(time.Minute)
		body := []byte(`{"external_id":"crm-10","stage":"Closed Won","value":900,"currency":"USD","change_id":"deal-10"}`)
		for range 2 {
			if r := a.postGeneric(c, secret, body); r.status != http.StatusOK {
				t.Fatalf("post hook = %d %s", r.status, r.raw)
			}
			a.work()
			a.drain()
		}
		want := map[models.Kind]int{models.KindMeta: 2, models.KindTikTok: 2, models.KindPinterest: 2, models.KindGoogle: 2}
		if got := received(a); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("received %v after the replayed webhook; want the lead's Lead and one Purchase on each platform", got)
		}
	})
}
