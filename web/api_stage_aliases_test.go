package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// stageWarnings decodes the warnings of a stage reply.
type stageWarnings struct {
	Warnings []struct {
		Code  string `json:"code"`
		Stage string `json:"stage"`
	} `json:"warnings"`
}

// A label the account does not know is recorded as it came, sends nothing
// and is warned about; once it is an alias of won, the same label (any
// case, spaces or punctuation) records won and sends its Purchase, and a
// CRM connection's label mapped to a stage works as an alias too.
func TestAPIStageAliases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		when := st.at.Add(time.Minute).Format(time.RFC3339)

		r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"Closed Won","occurred_at":%q,"value":10}`, when))
		var w stageWarnings
		decodeRaw(t, r.raw, &w)
		if r.status != http.StatusCreated || len(r.Events) != 0 || r.Change.Stage != "Closed Won" ||
			len(w.Warnings) != 1 || w.Warnings[0].Code != "unmapped_stage" || w.Warnings[0].Stage != "Closed Won" {
			t.Fatalf("unknown label: %d %s; want 201, no events, an unmapped_stage warning", r.status, r.raw)
		}

		stages, err := s.Stages(ctx, st.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		won := stages[slices.IndexFunc(stages, func(x models.Stage) bool { return x.Name == models.StageWon })]
		if _, err := s.AddStageAlias(ctx, st.acc.ID, won.ID, "Closed Won"); err != nil {
			t.Fatal(err)
		}
		// The label is taken now: another stage cannot have it, in any spelling.
		booked := stages[slices.IndexFunc(stages, func(x models.Stage) bool { return x.Name == models.StageBooked })]
		var ae *store.AliasError
		if _, err := s.SetStageAliases(ctx, st.acc.ID, booked.ID, []string{"closed-won"}); !errors.As(err, &ae) || ae.Alias != "closed-won" {
			t.Errorf("booked aliased as closed-won: %v; want an AliasError naming it", err)
		}
		if _, err := s.AppendStage(ctx, st.acc.ID, "CLOSED WON"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a new stage named CLOSED WON: %v; want ErrConflict", err)
		}

		later := st.at.Add(2 * time.Minute).Format(time.RFC3339)
		r = a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"closed-won","occurred_at":%q,"value":10,"currency":"usd"}`, later))
		w = stageWarnings{}
		decodeRaw(t, r.raw, &w)
		if r.status != http.StatusCreated || r.Change.Stage != models.StageWon || len(w.Warnings) != 0 {
			t.Fatalf("aliased label: %d %s; want won recorded with no warning", r.status, r.raw)
		}
		var names []string
		for _, e := range r.Events {
			names = append(names, e.EventName)
		}
		// qualified and booked are filled in; the first change under the
		// label, an alias now, did not reach won in the lead's history
		// as far as Meta knows, so won sends its Purchase.
		if !slices.Contains(names, "Purchase") {
			t.Errorf("aliased label's events = %v; want a Purchase", names)
		}

		// A CRM connection's stage table label counts as an alias.
		conn := models.CRMConnection{AccountID: st.acc.ID, Kind: "generic", Name: "Zap", Token: store.NewCRMToken(), Fields: "{}"}
		if err := s.CreateCRMConnection(ctx, &conn); err != nil {
			t.Fatal(err)
		}
		if err := s.ListCRMStages(ctx, st.acc.ID, conn.ID, []models.CRMStage{{CRMStageID: "s1", Label: "Sales Qualified"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.MapCRMStages(ctx, st.acc.ID, conn.ID, map[string]string{"s1": models.StageQualified}, time.Now()); err != nil {
			t.Fatal(err)
		}
		r = a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"sales qualified","occurred_at":%q}`, later))
		if r.status != http.StatusCreated || r.Change.Stage != models.StageQualified {
			t.Errorf("CRM label: %d %s; want qualified recorded", r.status, r.raw)
		}
		// Another stage cannot take that label as an alias.
		if _, err := s.SetStageAliases(ctx, st.acc.ID, won.ID, []string{"Closed Won", "SALES-QUALIFIED"}); !errors.As(err, &ae) ||
			ae.Alias != "SALES-QUALIFIED" {
			t.Errorf("won aliased as a CRM label of qualified: %v; want an AliasError naming it", err)
		}
	})
}

func decodeRaw(t *testing.T, raw string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
