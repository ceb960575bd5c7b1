package web_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// work runs the CRM worker until no delivery is due.
func (a *app) work() {
	a.t.Helper()
	if _, err := a.crm.Drain(a.t.Context()); err != nil {
		a.t.Fatalf("crm worker: %v", err)
	}
}

// stageEvents are the lead's stage events, by event time.
func (a *app) stageEvents(acc models.Account, leadID int64) []models.Event {
	a.t.Helper()
	evs, err := a.store.LeadEvents(a.t.Context(), acc.ID, leadID)
	if err != nil {
		a.t.Fatal(err)
	}
	var out []models.Event
	for _, e := range evs {
		if e.Origin == models.OriginStage {
			out = append(out, e)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].EventTime.Before(out[j-1].EventTime); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type sentData struct {
	CustomData struct {
		Value           *float64 `json:"value"`
		Currency        string   `json:"currency"`
		LeadEventSource string   `json:"lead_event_source"`
		EventSource     string   `json:"event_source"`
	} `json:"custom_data"`
}

func payloadOf(t *testing.T, e models.Event) sentData {
	t.Helper()
	var p sentData
	if err := json.Unmarshal([]byte(e.Payload), &p); err != nil {
		t.Fatalf("event %s payload %q: %v", e.EventName, e.Payload, err)
	}
	return p
}

// A HubSpot deal moved to won becomes a Purchase with the deal's amount
// and currency, looked up in HubSpot's API; the same webhook delivered
// three times, then an earlier stage delivered late, queue each event once
// and in funnel order.
func TestHubSpotDealWonBecomesPurchase(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const secret = "hs-secret"
		c := a.connection(st.acc, crm.HubSpot, "Sales", secret, hubspotToken)
		if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, map[string]string{
			"qualifiedtobuy": models.StageQualified, "presentationscheduled": models.StageBooked, "closedwon": models.StageWon,
		}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.hubspot.AddDeal("987654321", "closedwon", "1500.00", "EUR", "501", "502")
		a.hubspot.AddContact("501", "", "", nil) // the first contact has nothing to match
		a.hubspot.AddContact("502", "jane@example.com", "", nil)

		won := crmtest.HubSpotDealStage(62515, "987654321", "closedwon", st.at.Add(2*time.Hour))
		for range 3 {
			if r := a.postHubSpot(c, secret, won); r.status != http.StatusOK {
				t.Fatalf("post won = %d %s", r.status, r.raw)
			}
		}
		a.work()
		early := crmtest.HubSpotDealStage(62515, "987654321", "qualifiedtobuy", st.at.Add(time.Hour))
		if r := a.postHubSpot(c, secret, early); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post qualified = %d %s", r.status, r.raw)
		}
		a.work()

		for _, d := range a.deliveries(st.acc, c) {
			if d.Status != models.DeliveryDone || d.LeadID == nil || *d.LeadID != st.leadID {
				t.Errorf("delivery %s: %s %q lead %v; want done on lead %d", d.CRMStageID, d.Status, d.Reason, d.LeadID, st.leadID)
			}
		}
		evs := a.stageEvents(st.acc, st.leadID)
		var names []string
		for _, e := range evs {
			names = append(names, e.EventName)
		}
		if got := strings.Join(names, " "); got != "QualifiedLead Schedule Purchase" {
			t.Fatalf("stage events = %s; want QualifiedLead Schedule Purchase, once each, in order", got)
		}
		p := payloadOf(t, evs[2])
		if p.CustomData.Value == nil || *p.CustomData.Value != 1500 || p.CustomData.Currency != "EUR" {
			t.Errorf("Purchase custom_data = %+v; want 1500 EUR from the deal", p.CustomData)
		}
		if p.CustomData.LeadEventSource != "HubSpot" || p.CustomData.EventSource != "crm" {
			t.Errorf("lead_event_source %q, event_source %q; want HubSpot (the account names no CRM), crm",
				p.CustomData.LeadEventSource, p.CustomData.EventSource)
		}
		if want := st.at.Add(2 * time.Hour); !evs[2].EventTime.Equal(want) {
			t.Errorf("Purchase at %v; want HubSpot's time of the change %v", evs[2].EventTime, want)
		}
	})
}

// Pipedrive's API down for a while loses nothing: the delivery waits with
// its reason and goes through once the API is back.
func TestPipedriveAPIDownLosesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const password = "pd-password"
		c := a.connection(st.acc, crm.Pipedrive, "Deals", password, pipedriveToken)
		if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, map[string]string{"4": models.StageWon}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.pipedrive.AddPerson(8, "jane@example.com", "", nil)
		a.pipedrive.Down(true)
		body := crmtest.PipedriveV2StageChange(42, 4, 3, 8, 2400, "GBP", st.at.Add(time.Hour), "evt-1")
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("leadsignal:"+password))
		if r := a.postHook("/hooks/pipedrive/"+c.Token, body, "Authorization", auth); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		if r := a.postHook("/hooks/pipedrive/"+c.Token, body, "Authorization",
			"Basic "+base64.StdEncoding.EncodeToString([]byte("leadsignal:wrong"))); r.status != http.StatusUnauthorized {
			t.Errorf("wrong password = %d; want 401", r.status)
		}
		a.work()
		d := a.deliveries(st.acc, c)[0]
		if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingCRM || !strings.Contains(d.Reason, "Pipedrive API") {
			t.Fatalf("while down: %s/%s %q; want waiting for the CRM with the API's failure", d.Status, d.WaitingFor, d.Reason)
		}
		if evs := a.stageEvents(st.acc, st.leadID); len(evs) != 0 {
			t.Fatalf("events while down: %d", len(evs))
		}
		a.pipedrive.Down(false)
		a.work() // not due yet: its backoff
		if d := a.deliveries(st.acc, c)[0]; d.Status != models.DeliveryWaiting {
			t.Fatalf("retried before its backoff: %s", d.Status)
		}
		a.advance(time.Minute)
		a.work()
		d = a.deliveries(st.acc, c)[0]
		if d.Status != models.DeliveryDone || d.Stage != models.StageWon || d.Attempts != 2 {
			t.Fatalf("after the API is back: %s %q stage %q attempts %d; want done as won on the 2nd try", d.Status, d.Reason, d.Stage, d.Attempts)
		}
		evs := a.stageEvents(st.acc, st.leadID)
		if len(evs) != 3 || evs[2].EventName != "Purchase" {
			t.Fatalf("events = %d; want the Purchase after the filled-in stages", len(evs))
		}
		if p := payloadOf(t, evs[2]); p.CustomData.Value == nil || *p.CustomData.Value != 2400 || p.CustomData.Currency != "GBP" ||
			p.CustomData.LeadEventSource != "Pipedrive" {
			t.Errorf("Purchase custom_data = %+v; want 2400 GBP from the delivery, source Pipedrive", p.CustomData)
		}
	})
}

// A generic change whose lead has not arrived waits for it and goes
// through once it is captured; a CRM time before the lead becomes the
// lead's time plus a second, the original kept; an unmapped stage waits
// for its mapping.
func TestGenericChangeWaitsForItsLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("gen", "US")
		st := newStageSetup(t, a, s) // another account: its lead must not match
		_ = st
		const secret = "gen-secret"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		path := "/hooks/generic/" + c.Token
		crmTime := a.clock().Add(-3 * time.Hour)
		body := []byte(fmt.Sprintf(`{"email":"late@example.com","stage":"qualified","occurred_at":%d,"change_id":"z-1"}`, crmTime.Unix()))
		if r := a.postHook(path, body, "Authorization", "Bearer "+secret); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		a.work()
		d := a.deliveries(acc, c)[0]
		if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingLead || !strings.Contains(d.Reason, "late@example.com") {
			t.Fatalf("before the lead: %s/%s %q; want waiting for its lead", d.Status, d.WaitingFor, d.Reason)
		}
		a.advance(10 * time.Second) // before its next try
		leadAt := a.clock()
		r := a.postLead(key, `{"email":"late@example.com"}`)
		if r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		if n, err := a.crm.WakeForLeads(t.Context()); err != nil || n != 1 {
			t.Fatalf("wake = %d, %v; want the waiting delivery", n, err)
		}
		a.work()
		d = a.deliveries(acc, c)[0]
		if d.Status != models.DeliveryDone || d.StageChangeID == nil || !d.OccurredAt.Equal(crmTime.Truncate(time.Second)) {
			t.Fatalf("after the lead: %s %q change %v at %v; want done, the CRM's time kept", d.Status, d.Reason, d.StageChangeID, d.OccurredAt)
		}
		l, err := s.Lead(t.Context(), acc.ID, r.LeadID)
		if err != nil || l.Stage != models.StageQualified {
			t.Fatalf("lead stage = %q, %v; want qualified", l.Stage, err)
		}
		hist, err := s.StageHistories(t.Context(), acc.ID, []int64{l.ID})
		if err != nil || len(hist[l.ID]) != 1 || !hist[l.ID][0].OccurredAt.Equal(leadAt.Add(time.Second)) {
			t.Fatalf("history = %+v, %v; want the change a second after the lead", hist[l.ID], err)
		}

		// A stage id in the connection's table but unmapped waits for it.
		if err := s.MapCRMStages(t.Context(), acc.ID, c.ID, map[string]string{"S-7": ""}, a.clock()); err != nil {
			t.Fatal(err)
		}
		body = []byte(`{"email":"late@example.com","stage":"S-7","change_id":"z-2"}`)
		if r := a.postHook(path, body, "Authorization", "Bearer "+secret); r.status != http.StatusOK {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		a.work()
		d = a.deliveries(acc, c)[0]
		if d.WaitingFor != models.WaitingMapping || !strings.Contains(d.Reason, "S-7") {
			t.Fatalf("unmapped: %s/%s %q; want waiting for a mapping", d.Status, d.WaitingFor, d.Reason)
		}
		if err := s.MapCRMStages(t.Context(), acc.ID, c.ID, map[string]string{"S-7": models.StageBooked}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.work()
		if d = a.deliveries(acc, c)[0]; d.Status != models.DeliveryDone || d.Stage != models.StageBooked {
			t.Fatalf("after mapping: %s %q stage %q; want done as booked", d.Status, d.Reason, d.Stage)
		}
	})
}

// A deal won without an amount still records the stage; its Purchase is
// held back with the reason, since Meta refuses a Purchase without a value.
func TestCRMPurchaseWithoutValueIsHeldBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const secret = "hs-secret"
		c := a.connection(st.acc, crm.HubSpot, "Sales", secret, hubspotToken)
		if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, map[string]string{"closedwon": models.StageWon}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.hubspot.AddDeal("55", "closedwon", "", "", "501")
		a.hubspot.AddContact("501", "", "", map[string]string{"meta_lead_id": instantLeadID})
		c.LeadIDProperty = "meta_lead_id"
		if err := s.SaveCRMConnection(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		if r := a.postHubSpot(c, secret, crmtest.HubSpotDealStage(62515, "55", "closedwon", st.at.Add(time.Hour))); r.status != http.StatusOK {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		a.work()
		if d := a.deliveries(st.acc, c)[0]; d.Status != models.DeliveryDone || d.LeadID == nil || *d.LeadID != st.leadID {
			t.Fatalf("delivery %s %q lead %v; want done on the lead found by its Meta lead id", d.Status, d.Reason, d.LeadID)
		}
		evs := a.stageEvents(st.acc, st.leadID)
		if len(evs) != 3 {
			t.Fatalf("events = %d; want the filled-in stages and the Purchase", len(evs))
		}
		if p := evs[2]; p.EventName != "Purchase" || p.Status != models.EventFailed || !strings.Contains(p.LastError, "value") {
			t.Errorf("Purchase %s %q; want held back (failed) saying it needs a value", p.Status, p.LastError)
		}
		if l, _ := s.Lead(t.Context(), st.acc.ID, st.leadID); l.Stage != models.StageWon {
			t.Errorf("lead stage = %q; want won", l.Stage)
		}
	})
}

// Deliveries stuck on an unmapped stage show a banner on the account's
// pages, linking to the mapping, for editors; a viewer sees none.
func TestStuckCRMDeliveriesAlert(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("owner@example.com", false)
		acc := a.account("acme", owner)
		viewer := a.user("viewer@example.com", false)
		if err := s.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		const secret = "gen-secret"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		if err := s.MapCRMStages(t.Context(), acc.ID, c.ID, map[string]string{"S-9": ""}, a.clock()); err != nil {
			t.Fatal(err)
		}
		if r := a.postHook("/hooks/generic/"+c.Token, []byte(`{"email":"a@example.com","stage":"S-9"}`), "Authorization", "Bearer "+secret); r.status != http.StatusOK {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		a.work()
		b := a.browser()
		b.login("owner@example.com")
		page := b.get(views.AccountURL(acc.ID, "/leads"))
		alert := page.text("account-alert")
		if !strings.Contains(alert, "Generic webhook connection Zapier: 1 delivery waits for a stage mapping") {
			t.Errorf("owner's alert = %q; want the stuck delivery", alert)
		}
		if href, _ := page.doc.Find(`[data-testid="account-alert"] a`).Attr("href"); !strings.HasSuffix(href, fmt.Sprintf("/stages/crm/%d#crm-stages", c.ID)) {
			t.Errorf("alert link = %q; want the connection's stage table", href)
		}
		a.account("beta", owner) // two accounts: the agency overview lists them
		if got := b.get("/accounts").text("account-alerts"); !strings.Contains(got, "Generic webhook Zapier: 1 delivery waits for a stage mapping") {
			t.Errorf("agency overview alerts = %q; want the stuck connection", got)
		}
		vb := a.browser()
		vb.login("viewer@example.com")
		if got := vb.get(views.AccountURL(acc.ID, "/leads")).text("account-alert"); strings.Contains(got, "Zapier") {
			t.Errorf("viewer's alert = %q; want none about the connection", got)
		}
	})
}

// A HubSpot workflow webhook (signature v2) posting the deal record moves
// the lead's stage as an app webhook does.
func TestHubSpotWorkflowWebhook(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const secret = "hs-secret"
		c := a.connection(st.acc, crm.HubSpot, "Workflows", secret, hubspotToken)
		if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, map[string]string{"closedwon": models.StageWon}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.hubspot.AddDeal("77", "closedwon", "990", "USD", "501")
		a.hubspot.AddContact("501", "jane@example.com", "", nil)
		body := []byte(fmt.Sprintf(`{"id":"77","properties":{"dealstage":"closedwon","hs_lastmodifieddate":%q}}`,
			st.at.Add(time.Hour).Format(time.RFC3339)))
		path := "/hooks/hubspot/" + c.Token
		sum := sha256.Sum256([]byte(secret + http.MethodPost + a.srv.URL + path + string(body)))
		r := a.postHook(path, body, "X-HubSpot-Signature", hex.EncodeToString(sum[:]), "X-HubSpot-Signature-Version", "v2")
		if r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post = %d %s; want 200 with 1 stored", r.status, r.raw)
		}
		a.work()
		if d := a.deliveries(st.acc, c)[0]; d.Status != models.DeliveryDone || d.Stage != models.StageWon {
			t.Fatalf("delivery %s %q; want done as won", d.Status, d.Reason)
		}
		evs := a.stageEvents(st.acc, st.leadID)
		if len(evs) != 3 || evs[2].EventName != "Purchase" || payloadOf(t, evs[2]).CustomData.Value == nil {
			t.Fatalf("events = %d; want the Purchase with the deal's amount after the filled-in stages", len(evs))
		}

		// The same workflow sending by GET: the properties in the query,
		// signed v2 over the URL and an empty body.
		a.hubspot.AddDeal("78", "qualifiedtobuy", "", "", "501")
		if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, map[string]string{"qualifiedtobuy": models.StageQualified}, a.clock()); err != nil {
			t.Fatal(err)
		}
		url := a.srv.URL + path + "?hs_object_id=78&dealstage=qualifiedtobuy"
		sum = sha256.Sum256([]byte(secret + http.MethodGet + url))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Header.Set("X-HubSpot-Signature", hex.EncodeToString(sum[:]))
		req.Header.Set("X-HubSpot-Signature-Version", "v2")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("signed GET = %d; want 200", res.StatusCode)
		}
		a.work()
		ds := a.deliveries(st.acc, c)
		if len(ds) != 2 || ds[0].ObjectID != "78" || ds[0].Status != models.DeliveryDone || ds[0].Stage != models.StageQualified {
			t.Fatalf("deliveries = %+v; want deal 78's GET recorded as qualified", ds)
		}
	})
}

// A field mapping changed after a delivery came can leave it unreadable:
// it needs attention, its body kept, and fixing the mapping brings it
// through.
func TestGenericMappingChangeKeepsDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("gen", "US")
		if r := a.postLead(key, `{"email":"jane@example.com"}`); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		const secret = "gen-secret"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		c.Fields = `{"stage":"deal.stage"}`
		if err := s.SaveCRMConnection(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		if r := a.postHook("/hooks/generic/"+c.Token, []byte(`{"email":"jane@example.com","deal":{"stage":"qualified"}}`),
			"Authorization", "Bearer "+secret); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		c.Fields = `{"stage":"opportunity.stage"}` // a careless edit before the worker ran
		if err := s.SaveCRMConnection(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		a.work()
		d := a.deliveries(acc, c)[0]
		if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingAttention || !strings.Contains(d.Reason, `no stage at "opportunity.stage"`) {
			t.Fatalf("after the edit: %s/%s %q; want needing attention, not given up", d.Status, d.WaitingFor, d.Reason)
		}
		c.Fields = `{"stage":"deal.stage"}`
		if err := s.SaveCRMConnection(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		a.work()
		if d = a.deliveries(acc, c)[0]; d.Status != models.DeliveryDone || d.Stage != models.StageQualified {
			t.Fatalf("after fixing the mapping: %s %q; want done as qualified", d.Status, d.Reason)
		}
	})
}
