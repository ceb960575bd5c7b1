package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A won mapping for deals over 499.99 EUR, through the stage API: a 300
// EUR deal and a 600 USD one queue nothing, a 600 EUR one its Purchase
// (after the stages it skipped, filled in), and a won change without a
// value is refused, as for any Purchase from the change's value.
func TestAPIStageChangeConditions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		won := st.won
		won.Conditions = `[{"field":"change.value","match_type":"gt","pattern":"499.99"},` +
			`{"field":"change.currency","match_type":"equals","pattern":"EUR"}]`
		won.Repeatable = true // every deal may send its own Purchase
		if err := s.SaveSendRule(t.Context(), &won, nil); err != nil {
			t.Fatal(err)
		}
		post := func(n int, deal string) stageAPIReply {
			t.Helper()
			return a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"change_id":"deal-%d"%s}`,
				st.at.Add(time.Duration(n)*time.Hour).Format(time.RFC3339), n, deal))
		}
		events := func(r stageAPIReply) string {
			var out []string
			for _, e := range r.Events {
				out = append(out, fmt.Sprintf("%s/%v/%s", e.EventName, e.FilledIn, e.Status))
			}
			return strings.Join(out, " ")
		}

		for i, deal := range []string{`,"value":300,"currency":"EUR"`, `,"value":600,"currency":"USD"`, `,"value":600`} {
			if r := post(i+1, deal); r.status != http.StatusCreated || len(r.Events) != 0 {
				t.Errorf("won with %s = %d, events %q; want 201 and none: the mapping's conditions fail", deal, r.status, events(r))
			}
		}
		r := post(4, `,"value":600,"currency":"eur"`)
		if want := "QualifiedLead/true/queued Schedule/true/queued Purchase/false/queued"; r.status != http.StatusCreated || events(r) != want {
			t.Fatalf("won with 600 EUR = %d, events %q; want 201 and %s (%s)", r.status, events(r), want, r.raw)
		}
		evs, err := s.StageChangeEvents(t.Context(), st.acc.ID, r.Change.ID)
		if err != nil || len(evs) != 3 {
			t.Fatalf("stored events = %v, %v", evs, err)
		}
		var p struct {
			CustomData map[string]any `json:"custom_data"`
		}
		if err := json.Unmarshal([]byte(evs[2].Payload), &p); err != nil || p.CustomData["value"] != 600.0 || p.CustomData["currency"] != "EUR" {
			t.Errorf("Purchase payload = %s (%v); want value 600, currency EUR", evs[2].Payload, err)
		}

		r = post(5, "")
		if r.status != http.StatusUnprocessableEntity || r.Error.Field != "value" {
			t.Errorf("won without a value = %d %s; want 422 at value", r.status, r.raw)
		}
	})
}
