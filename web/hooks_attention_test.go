package web_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A body of the right kind that is JSON but cannot become a stage change
// is answered 200 and stored as needing attention, with why, on the
// connection's page; only a body that is not JSON is refused.
func TestHookBodiesNeedingAttention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("crm", "US")
		const secret = "attention-secret-16"
		hs := a.connection(acc, crm.HubSpot, "Sales", secret, hubspotToken)
		pd := a.connection(acc, crm.Pipedrive, "Deals", secret, pipedriveToken)
		gen := a.connection(acc, crm.Generic, "Zapier", secret, "")
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("leadsignal:"+secret))

		tests := []struct {
			name   string
			c      models.CRMConnection
			body   string
			reason string
		}{
			{"HubSpot event of an unknown type", hs,
				`[{"eventId":1,"portalId":62515,"occurredAt":1796126340000,"subscriptionType":"deal.stageMoved","objectId":8,"propertyValue":"closedwon"}]`,
				`HubSpot event type "deal.stageMoved" is not one leadsignal reads`},
			{"HubSpot dealstage change without a deal id", hs,
				`[{"eventId":2,"portalId":62515,"occurredAt":1796126340000,"subscriptionType":"deal.propertyChange","propertyName":"dealstage","propertyValue":"closedwon"}]`,
				"without objectId"},
			{"HubSpot legacy deal without its stage", hs,
				`{"portalId":62515,"dealId":8,"properties":{"amount":{"value":"100","timestamp":1796126340000}}}`,
				`HubSpot deal "8" has no dealstage: add the deal stage`},
			{"Pipedrive object without meta", pd, `{"hello":"world"}`, "not a Pipedrive webhook"},
			{"Pipedrive deal changed without a stage_id", pd,
				`{"meta":{"action":"change","entity":"deal","id":"e-9","version":"2.0"},"data":{"id":9,"status":"open"},"previous":{"stage_id":1}}`,
				`Pipedrive deal "9" changed without a stage_id`},
			{"generic object without a lead key", gen, `{"stage":"won","name":"Jane"}`, "no lead key"},
			{"generic JSON that is no object", gen, `"won"`, "not a JSON object or an array"},
		}
		post := func(c models.CRMConnection, body []byte) hookReply {
			switch crm.Kind(c.Kind) {
			case crm.HubSpot:
				return a.postHubSpot(c, secret, body)
			case crm.Pipedrive:
				return a.postHook("/hooks/pipedrive/"+c.Token, body, "Authorization", basic)
			}
			return a.postHook("/hooks/generic/"+c.Token, body, "Authorization", "Bearer "+secret)
		}
		for _, tt := range tests {
			for i, stored := range []int{1, 0} { // a redelivery is stored once
				if r := post(tt.c, []byte(tt.body)); r.status != http.StatusOK || r.Stored != stored || r.Attention != 1 {
					t.Errorf("%s: post %d = %d %s; want 200, %d stored, 1 needing attention", tt.name, i+1, r.status, r.raw, stored)
				}
			}
		}
		// Not JSON is refused: the sender can see and fix it.
		if r := post(gen, []byte(`stage=won`)); r.status != http.StatusBadRequest || r.Error.Code != "invalid_body" {
			t.Errorf("not JSON = %d %s; want 400 invalid_body", r.status, r.raw)
		}
		a.work()

		b := a.browser()
		b.login("crm-owner@example.com")
		// Every page of the account says so, for editors.
		if got := strings.Join(strings.Fields(b.get(stagesURL(acc, "")).doc.Find(".alert, [role=alert]").Text()), " "); !strings.Contains(got,
			"Generic webhook connection Zapier: 2 deliveries need attention") {
			t.Errorf("the Stages page's alerts: %q; want Zapier's 2 deliveries needing attention", got)
		}
		for _, tt := range tests {
			var found []string
			for _, d := range a.deliveries(acc, tt.c) {
				if d.Status == models.DeliveryWaiting && d.WaitingFor == models.WaitingAttention && strings.Contains(d.Reason, tt.reason) {
					found = append(found, d.Reason)
				}
			}
			if len(found) != 1 {
				t.Errorf("%s: %d deliveries need attention with %q; want 1", tt.name, len(found), tt.reason)
			}
			r := b.get(crmPageURL(acc, tt.c, ""))
			shown := false
			r.doc.Find(`[data-testid="crm-delivery-outcome"]`).Each(func(_ int, s *goquery.Selection) {
				text := strings.Join(strings.Fields(s.Find(".badge").Text()), " ")
				shown = shown || strings.HasPrefix(text, "Needs attention: ") && strings.Contains(text, tt.reason)
			})
			if !shown {
				t.Errorf("%s: the connection page shows no delivery needing attention with %q", tt.name, tt.reason)
			}
		}

		// A person retries one; it still cannot be read, and says so again.
		d := a.deliveries(acc, gen)[0]
		if r := b.post(crmPageURL(acc, gen, "/deliveries/"+itoa(d.ID)+"/retry"), nil); r.status != http.StatusSeeOther {
			t.Fatalf("retry = %d", r.status)
		}
		a.work()
		if d = a.deliveries(acc, gen)[0]; d.WaitingFor != models.WaitingAttention || d.Attempts != 2 {
			t.Errorf("after a retry: %s/%s attempts %d; want needing attention, tried twice", d.Status, d.WaitingFor, d.Attempts)
		}
	})
}

// Pipedrive's "Mark as won" changes the deal's status, not its stage: it
// reaches Meta as a Purchase through the won row of the connection's
// stage table, which means the won stage until mapped otherwise. Lost is
// listed, unmapped, and waits for its mapping.
func TestPipedriveWonStatusBecomesPurchase(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const password = "pd-password-16chars"
		c := a.connection(st.acc, crm.Pipedrive, "Deals", password, pipedriveToken)
		a.pipedrive.AddPerson(8, "jane@example.com", "", nil)
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("leadsignal:"+password))
		wonAt := st.at.Add(3 * time.Hour).UTC()
		// Pipedrive's v2 body when a deal is marked won: status and
		// won_time changed, stage_id as it was (crm-webhooks.md §2b).
		won := `{"meta":{"action":"change","entity":"deal","company_id":"8087566","entity_id":"42","id":"evt-won","timestamp":"` +
			wonAt.Add(time.Second).Format(time.RFC3339Nano) + `","version":"2.0","webhook_id":"4710827","attempt":1},` +
			`"data":{"id":42,"title":"Deal","value":2400,"currency":"GBP","status":"won","pipeline_id":1,"stage_id":4,"person_id":8,` +
			`"update_time":"` + wonAt.Add(time.Second).Format(time.RFC3339) + `","won_time":"` + wonAt.Format(time.RFC3339) + `","lost_time":null},` +
			`"previous":{"status":"open","won_time":null}}`
		if r := a.postHook("/hooks/pipedrive/"+c.Token, []byte(won), "Authorization", auth); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post won = %d %s", r.status, r.raw)
		}
		// v1's lost deal of another person: current and previous status.
		a.pipedrive.AddPerson(9, "other@example.com", "", nil)
		lost := `{"v":1,"retry":0,"event":"updated.deal","meta":{"v":1,"action":"updated","object":"deal","id":43,"timestamp":` +
			itoa(wonAt.Unix()) + `},"current":{"id":43,"status":"lost","stage_id":2,"person_id":9,"lost_time":"` + wonAt.Format(time.DateTime) + `"},` +
			`"previous":{"id":43,"status":"open","stage_id":2,"person_id":9}}`
		if r := a.postHook("/hooks/pipedrive/"+c.Token, []byte(lost), "Authorization", auth); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("post lost = %d %s", r.status, r.raw)
		}
		a.work()

		for _, d := range a.deliveries(st.acc, c) {
			switch d.CRMStageID {
			case crm.StatusWon:
				if d.Status != models.DeliveryDone || d.Stage != models.StageWon || d.LeadID == nil || *d.LeadID != st.leadID {
					t.Errorf("won: %s/%s %q stage %q; want done as won on the lead", d.Status, d.WaitingFor, d.Reason, d.Stage)
				}
			case crm.StatusLost:
				if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingMapping {
					t.Errorf("lost: %s/%s %q; want waiting for its mapping", d.Status, d.WaitingFor, d.Reason)
				}
			default:
				t.Errorf("delivery of CRM stage %q; want won or lost", d.CRMStageID)
			}
		}
		evs := a.stageEvents(st.acc, st.leadID)
		if len(evs) != 3 || evs[2].EventName != "Purchase" || !evs[2].EventTime.Equal(wonAt) {
			t.Fatalf("stage events = %+v; want the Purchase at won_time after the filled-in stages", evs)
		}
		if p := payloadOf(t, evs[2]); p.CustomData.Value == nil || *p.CustomData.Value != 2400 || p.CustomData.Currency != "GBP" {
			t.Errorf("Purchase custom_data = %+v; want the deal's 2400 GBP", p.CustomData)
		}

		b := a.browser()
		b.login("crm-owner@example.com")
		rows := strings.Join(crmStageRows(b.get(crmPageURL(st.acc, c, ""))), "\n")
		if !strings.Contains(rows, "won Won  → won") || !strings.Contains(rows, "lost Lost  →  (waits)") {
			t.Errorf("stage table =\n%s\nwant won mapped to won, lost listed and waited for", rows)
		}
	})
}
