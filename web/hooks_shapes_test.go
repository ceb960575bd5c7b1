package web_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// hookShape is one body shape a CRM posts: deal's move to stage at at,
// the n-th change; and the same delivery as the CRM retries it.
type hookShape struct {
	name  string
	kind  crm.Kind
	body  func(deal, n int, stage string, at time.Time) []byte
	retry func(body []byte) []byte
}

func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// hookShapes are the documented bodies of docs/crm.md (examples of
// crm-webhooks.md), with and without their optional fields.
func hookShapes() []hookShape {
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return []byte(strings.Replace(string(b), old, new, 1)) }
	}
	same := func(b []byte) []byte { return b }
	hsEvent := func(typ string) func(int, int, string, time.Time) []byte {
		return func(deal, n int, stage string, at time.Time) []byte {
			e := map[string]any{"eventId": n, "subscriptionId": 1234, "portalId": 62515, "appId": 54321, "occurredAt": at.UnixMilli(),
				"subscriptionType": typ, "attemptNumber": 0, "objectId": deal, "propertyName": "dealstage", "propertyValue": stage,
				"changeSource": "CRM_UI", "sourceId": "userId:45678"}
			if typ == "object.propertyChange" {
				e["objectTypeId"] = "0-3"
			}
			return jsonBody([]any{e})
		}
	}
	pdV2 := func(omit ...string) func(int, int, string, time.Time) []byte {
		return func(deal, n int, stage string, at time.Time) []byte {
			meta := map[string]any{"action": "change", "entity": "deal", "company_id": "8087566", "correlation_id": fmt.Sprintf("c-%d-%d", deal, n),
				"entity_id": strconv.Itoa(deal), "id": fmt.Sprintf("evt-%d-%d", deal, n), "is_bulk_edit": false,
				"timestamp": at.UTC().Format(time.RFC3339Nano), "type": "general", "user_id": "12415231", "version": "2.0",
				"webhook_id": "4710827", "change_source": "app", "attempt": 1, "host": "example.pipedrive.com"}
			b := map[string]any{"meta": meta, "data": map[string]any{"id": deal, "title": "Deal", "value": 100, "currency": "EUR",
				"status": "open", "pipeline_id": 1, "stage_id": stage, "person_id": deal, "stage_change_time": at.UTC().Format(time.RFC3339),
				"update_time": at.UTC().Format(time.RFC3339)}, "previous": map[string]any{"stage_id": n}}
			for _, k := range omit {
				delete(meta, k)
				if k == "previous" {
					delete(b, k)
				}
			}
			return jsonBody(b)
		}
	}
	pdV1 := func(omit ...string) func(int, int, string, time.Time) []byte {
		return func(deal, n int, stage string, at time.Time) []byte {
			d := func(stage any) map[string]any {
				return map[string]any{"id": deal, "title": "Deal", "value": 100, "currency": "EUR", "status": "open", "pipeline_id": 1,
					"stage_id": stage, "person_id": deal, "update_time": at.UTC().Format(time.DateTime)}
			}
			meta := map[string]any{"v": 1, "action": "updated", "object": "deal", "id": deal, "company_id": 8087566, "user_id": 12415231,
				"timestamp": at.Unix(), "timestamp_micro": at.UnixMicro(), "webhook_id": "4710827", "change_source": "app"}
			for _, k := range omit {
				delete(meta, k)
			}
			return jsonBody(map[string]any{"v": 1, "retry": 0, "event": "updated.deal", "meta": meta, "current": d(stage), "previous": d(n)})
		}
	}
	return []hookShape{
		{"HubSpot v3 deal.propertyChange", crm.HubSpot, hsEvent("deal.propertyChange"), replace(`"attemptNumber":0`, `"attemptNumber":1`)},
		{"HubSpot v3 object.propertyChange", crm.HubSpot, hsEvent("object.propertyChange"), replace(`"attemptNumber":0`, `"attemptNumber":1`)},
		{"HubSpot workflow objects API record", crm.HubSpot, func(deal, _ int, stage string, at time.Time) []byte {
			return jsonBody(map[string]any{"id": strconv.Itoa(deal), "properties": map[string]any{"dealstage": stage, "hs_object_id": strconv.Itoa(deal),
				"hs_lastmodifieddate": at.UTC().Format(time.RFC3339Nano)}, "updatedAt": at.UTC().Format(time.RFC3339Nano), "archived": false})
		}, same},
		{"HubSpot workflow legacy deal", crm.HubSpot, func(deal, _ int, stage string, at time.Time) []byte {
			return jsonBody(map[string]any{"portalId": 62515, "dealId": deal, "isDeleted": false, "properties": map[string]any{
				"dealstage": map[string]any{"value": stage, "timestamp": at.UnixMilli(), "source": "CRM_UI", "versions": []any{}}}})
		}, same},
		{"HubSpot workflow chosen properties flat", crm.HubSpot, func(deal, _ int, stage string, at time.Time) []byte {
			return jsonBody(map[string]any{"hs_object_id": strconv.Itoa(deal), "dealstage": stage, "hs_lastmodifieddate": at.UnixMilli()})
		}, same},
		{"Pipedrive v2", crm.Pipedrive, pdV2(), replace(`"attempt":1`, `"attempt":2`)},
		{"Pipedrive v2 without the optional meta fields and previous", crm.Pipedrive,
			pdV2("id", "correlation_id", "timestamp", "webhook_id", "previous"), replace(`"attempt":1`, `"attempt":2`)},
		{"Pipedrive v1", crm.Pipedrive, pdV1(), replace(`"retry":0`, `"retry":1`)},
		{"Pipedrive v1 without the optional meta fields", crm.Pipedrive, pdV1("id", "webhook_id", "timestamp", "timestamp_micro"),
			replace(`"retry":0`, `"retry":1`)},
	}
}

// Two successive changes of one deal are both recorded, their events
// queued, and a redelivery is stored once, whatever shape the CRM posts
// them in (docs/crm.md).
func TestHookShapesRecordEveryChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		const secret = "shape-secret-16chars"
		for i, sh := range hookShapes() {
			deal := 100 + i
			email := fmt.Sprintf("shape-%d@example.com", i)
			r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"shape-%d","email":%q,"created_at":%q}`, i, email, st.at.Format(time.RFC3339)))
			if r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
			c := a.connection(st.acc, sh.kind, sh.name, secret, map[crm.Kind]string{crm.HubSpot: hubspotToken, crm.Pipedrive: pipedriveToken}[sh.kind])
			stages := map[string]string{"1": models.StageQualified, "2": models.StageBooked}
			if sh.kind == crm.HubSpot {
				stages = map[string]string{"qualifiedtobuy": models.StageQualified, "presentationscheduled": models.StageBooked}
				a.hubspot.AddDeal(strconv.Itoa(deal), "presentationscheduled", "", "", strconv.Itoa(deal))
				a.hubspot.AddContact(strconv.Itoa(deal), email, "", nil)
			} else {
				a.pipedrive.AddPerson(deal, email, "", nil)
			}
			if err := s.MapCRMStages(t.Context(), st.acc.ID, c.ID, stages, a.clock()); err != nil {
				t.Fatal(err)
			}
			first, second := "1", "2"
			if sh.kind == crm.HubSpot {
				first, second = "qualifiedtobuy", "presentationscheduled"
			}
			post := func(body []byte) hookReply {
				if sh.kind == crm.HubSpot {
					return a.postHubSpot(c, secret, body)
				}
				return a.postHook("/hooks/pipedrive/"+c.Token, body, "Authorization",
					"Basic "+base64.StdEncoding.EncodeToString([]byte("leadsignal:"+secret)))
			}
			one := sh.body(deal, 0, first, st.at.Add(time.Hour))
			two := sh.body(deal, 1, second, st.at.Add(2*time.Hour))
			for j, p := range []struct {
				body   []byte
				stored int
			}{{one, 1}, {two, 1}, {sh.retry(one), 0}, {two, 0}} {
				if r := post(p.body); r.status != http.StatusOK || r.Received != 1 || r.Stored != p.stored || r.Attention != 0 {
					t.Errorf("%s: post %d = %d %s; want 200, 1 received, %d stored", sh.name, j+1, r.status, r.raw, p.stored)
				}
			}
			a.work()
			ds := a.deliveries(st.acc, c)
			if len(ds) != 2 {
				t.Fatalf("%s: %d deliveries; want 2", sh.name, len(ds))
			}
			for _, d := range ds {
				if d.Status != models.DeliveryDone || d.StageChangeID == nil {
					t.Errorf("%s: delivery %s: %s/%s %q; want done, a stage change recorded", sh.name, d.CRMStageID, d.Status, d.WaitingFor, d.Reason)
				}
			}
			var names []string
			for _, e := range a.stageEvents(st.acc, *ds[0].LeadID) {
				names = append(names, e.EventName)
			}
			if got := strings.Join(names, " "); got != "QualifiedLead Schedule" {
				t.Errorf("%s: stage events = %q; want QualifiedLead Schedule", sh.name, got)
			}
		}
	})
}
