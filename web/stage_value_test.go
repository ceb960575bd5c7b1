package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestStageFormRefusesBadValues: a stage's value is a finite amount from 0
// to a trillion and its currency an ISO 4217 code; anything else comes back
// with an inline error and what was typed, and nothing is stored.
func TestStageFormRefusesBadValues(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		lead := a.postLead(key, goodLead)
		b := a.browser()
		b.login("acme-owner@example.com")
		lp := fmt.Sprintf("%s/leads/%d", views.AccountURL(acc.ID, ""), lead.LeadID)

		tests := []struct {
			stage, value, currency string
			field                  string // the field whose error is shown
			want                   string // in that error
		}{
			{"won", "1e308", "XXX", "value", "1,000,000,000,000"},
			{"won", "1000000000000.01", "USD", "value", "1,000,000,000,000"},
			{"won", "-5", "USD", "value", "from 0"},
			{"won", "NaN", "USD", "value", "1,000,000,000,000"},
			{"won", "Inf", "USD", "value", "1,000,000,000,000"},
			{"won", "0x1p4", "USD", "value", "1,000,000,000,000"},
			{"won", "1,250", "USD", "value", "like 1250"},
			{"won", "1250", "US", "currency", "ISO 4217"},
			// A value goes to Meta with its currency at any stage.
			{"qualified", "100", "ABC", "currency", "ISO 4217"},
			// Codes that are not a currency a sale is made in.
			{"won", "100", "XXX", "currency", "ISO 4217"},
			{"won", "100", "XAU", "currency", "ISO 4217"},
		}
		for _, tt := range tests {
			r := b.post(lp+"/stages", url.Values{"stage": {tt.stage}, "value": {tt.value}, "currency": {tt.currency}})
			what := fmt.Sprintf("%s %q %q", tt.stage, tt.value, tt.currency)
			if r.status != http.StatusUnprocessableEntity {
				t.Errorf("%s = %d; want 422", what, r.status)
				continue
			}
			if msg := r.text("error-" + tt.field); !strings.Contains(msg, tt.want) {
				t.Errorf("%s: %s error = %q; want it to say %q", what, tt.field, msg, tt.want)
			}
			stage, _ := r.doc.Find(`select[name="stage"] option[selected]`).Attr("value")
			if stage != tt.stage || r.inputValue("value") != tt.value || r.inputValue("currency") != tt.currency {
				t.Errorf("%s: form kept %q %q %q; want what was typed", what, stage, r.inputValue("value"), r.inputValue("currency"))
			}
		}
		changes, err := s.StageChanges(t.Context(), acc.ID, lead.LeadID)
		if err != nil || len(changes) != 0 {
			t.Errorf("stage changes after refusals = %+v, %v; want none", changes, err)
		}
		if l, _ := s.Lead(t.Context(), acc.ID, lead.LeadID); l.Stage != "" {
			t.Errorf("lead stage = %q after refusals; want none", l.Stage)
		}

		// The bound itself is a value; the currency is read in any case.
		r := b.post(lp+"/stages", url.Values{"stage": {"won"}, "value": {"1000000000000"}, "currency": {"eur"}})
		wantStatus(t, "won at the bound", r, http.StatusSeeOther)
		changes, _ = s.StageChanges(t.Context(), acc.ID, lead.LeadID)
		if len(changes) != 1 || changes[0].Value == nil || *changes[0].Value != 1e12 || changes[0].Currency != "EUR" {
			t.Errorf("stored %+v; want one change of 1e12 EUR", changes)
		}
	})
}

// TestLeadPageShowsHugeStoredValue: a value stored before values were
// bounded still shows in a few characters.
func TestLeadPageShowsHugeStoredValue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		lead := a.postLead(key, goodLead)
		// Written as it was then: the recorder now refuses such a value.
		huge := 1e308
		read, err := s.ReadStages(t.Context(), acc.ID, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.Lead(t.Context(), acc.ID, lead.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		c := models.StageChange{ID: read.ChangeIDs[0], AccountID: acc.ID, LeadID: l.ID, Stage: models.StageWon, OccurredAt: a.clock(),
			Value: &huge, Currency: "XXX"}
		won := l
		won.Stage = models.StageWon
		if _, err := s.ChangeLeads(t.Context(), acc.ID, map[int64]time.Time{l.ID: l.UpdatedAt}, []store.LeadChange{{Change: &c, After: &won}}); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		r := b.get(fmt.Sprintf("%s/leads/%d", views.AccountURL(acc.ID, ""), lead.LeadID))
		wantStatus(t, "lead page", r, http.StatusOK)
		cell := strings.TrimSpace(r.doc.Find(`[data-testid="stage-value"]`).Text())
		if cell != "1e+308 XXX" {
			t.Errorf("value cell = %q; want 1e+308 XXX", cell)
		}
	})
}
