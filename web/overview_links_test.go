package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// The leads list's reached_from and reached_to keep the leads that first
// reached a stage in those days, under any of its labels: one recorded
// under a CRM's label before it became an alias counts. Unreadable dates
// are named, not an error.
func TestLeadsReachedInDays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		var ids []int64
		for _, email := range []string{"ann@example.com", "bo@example.com", "cy@example.com"} {
			r := a.postLead(key, `{"email":"`+email+`"}`)
			if r.status != http.StatusCreated {
				t.Fatalf("post %s = %d", email, r.status)
			}
			ids = append(ids, r.LeadID)
		}
		mark := func(id int64, stage string, at time.Time) {
			t.Helper()
			if _, err := decidetest.Mark(t.Context(), s, models.StageChange{AccountID: acc.ID, LeadID: id, Stage: stage, OccurredAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		now := a.clock()
		mark(ids[0], "SQL", now)                 // a CRM's label, not yet an alias
		mark(ids[1], models.StageQualified, now) // today
		mark(ids[2], models.StageQualified, now) // today, and again later: still once
		mark(ids[2], models.StageQualified, now.Add(time.Minute))
		stages, err := s.Stages(t.Context(), acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddStageAlias(t.Context(), acc.ID, stages[0].ID, "sql"); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		day := now.Format("2006-01-02")
		list := func(q url.Values) int {
			t.Helper()
			r := b.get(views.AccountURL(acc.ID, "/leads?"+q.Encode()))
			wantStatus(t, "leads", r, http.StatusOK)
			return r.doc.Find(`[data-testid="lead-row"]`).Length()
		}
		if n := list(url.Values{"reached": {"qualified"}, "reached_from": {day}, "reached_to": {day}}); n != 3 {
			t.Errorf("leads that reached qualified today = %d; want 3 (the alias's too)", n)
		}
		yesterday := now.AddDate(0, 0, -1).Format("2006-01-02")
		if n := list(url.Values{"reached": {"qualified"}, "reached_from": {yesterday}, "reached_to": {yesterday}}); n != 0 {
			t.Errorf("leads that reached qualified yesterday = %d; want 0", n)
		}
		if n := list(url.Values{"reached": {"booked"}, "reached_from": {day}, "reached_to": {day}}); n != 0 {
			t.Errorf("leads that reached booked today = %d; want 0", n)
		}
		r := b.get(views.AccountURL(acc.ID, "/leads?"+url.Values{"reached": {"qualified"}, "reached_from": {"soon"}}.Encode()))
		if r.status != http.StatusOK || !strings.Contains(r.body, "Could not read") {
			t.Errorf("an unreadable reached_from = %d; want the list, with the date named", r.status)
		}
		r = b.get(views.AccountURL(acc.ID, "/leads?"+url.Values{"reached": {"qualified"}, "reached_from": {"\x00" + day}}.Encode()))
		if r.status != http.StatusBadRequest {
			t.Errorf("a reached_from with a NUL byte = %d; want 400", r.status)
		}
	})
}
