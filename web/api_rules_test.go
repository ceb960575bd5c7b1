package web_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Two automatic rules of one dataset with the same event name (the new
// rule form's defaults beside the dataset's default rule) make one event
// for a lead that matches both, owned by the first rule: the lead is
// stored and answered, never failed.
func TestAPIRulesSharingAnEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		ctx := t.Context()
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		def, err := s.SendRules(ctx, acc.ID)
		if err != nil || len(def) != 1 {
			t.Fatalf("rules = %v, %v; want the default rule", def, err)
		}
		second := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Also Lead", Mode: "automatic_match", EventName: "Lead",
			Combinator: "and", Conditions: `[{"field":"email","match_type":"not_empty","pattern":""}]`, Enabled: true}
		if err := s.CreateSendRule(ctx, &second, nil); err != nil {
			t.Fatal(err)
		}
		r := a.postLead(key, `{"email":"both@example.com","client_ip_address":"203.0.113.7",
			"client_user_agent":"Mozilla/5.0","event_source_url":"https://example.com/form"}`)
		if r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Fatalf("post = %d %s; want 2xx", r.status, r.raw)
		}
		if len(r.Events) != 1 {
			t.Fatalf("reply events = %s; want one", r.raw)
		}
		var e struct {
			EventName string `json:"event_name"`
			Status    string `json:"status"`
		}
		if err := json.Unmarshal(r.Events[0], &e); err != nil || e.EventName != "Lead" || e.Status != string(models.EventQueued) {
			t.Errorf("event = %s, %v; want one queued Lead", r.Events[0], err)
		}
		evs, err := s.LeadEvents(ctx, acc.ID, r.LeadID)
		if err != nil || len(evs) != 1 || evs[0].OriginID == nil || *evs[0].OriginID != def[0].ID {
			t.Errorf("stored events = %+v, %v; want one, owned by the default rule %d", evs, err, def[0].ID)
		}
	})
}
