package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// A name with an invisible or bidi-control character (a right-to-left
// override shows "gpj.exe" as "exe.jpg") is refused inline, the typed
// value kept, on every form that names something.
func TestNamesRefuseInvisibleCharacters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := a.browser()
		b.login("acme-owner@example.com")
		const bad = "Main\u202egpj.exe"
		r := b.post(views.AccountURL(acc.ID, "/datasets"), url.Values{"name": {bad}, "pixel_id": {"123456789012345"},
			"mode": {"dry_run"}, "ldu": {"off"}, "api_version": {"v24.0"}})
		wantStatus(t, "dataset named with an override", r, http.StatusUnprocessableEntity)
		if msg := r.text("error-name"); !strings.Contains(msg, "invisible") {
			t.Errorf("dataset name error = %q; want it to name the invisible character", msg)
		}
		if r.inputValue("name") != bad {
			t.Errorf("typed name = %q; want it kept", r.inputValue("name"))
		}
		if ds, err := s.Datasets(t.Context(), acc.ID); err != nil || len(ds) != 0 {
			t.Errorf("datasets = %v, %v; want none stored", ds, err)
		}
	})
}

// An unknown page is a 404 whoever asks: not the 403 of the admin,
// editor or owner pages that share its path's prefix.
func TestUnknownPagesAreNotFound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("owner@example.com", false)
		acc := a.account("acme", owner)
		viewer := a.user("viewer@example.com", false)
		if err := s.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("viewer@example.com")
		for _, path := range []string{"/no-such-page", "/admin/nope", views.AccountURL(acc.ID, "/no-such-page"), views.AccountURL(acc.ID, "/settings/x")} {
			if r := b.get(path); r.status != http.StatusNotFound {
				t.Errorf("GET %s as a viewer = %d; want 404", path, r.status)
			}
		}
		if r := b.get(views.AccountURL(acc.ID, "/settings")); r.status != http.StatusForbidden {
			t.Errorf("GET settings as a viewer = %d; want 403", r.status)
		}
	})
}

// Stage mappings are the Stages page's: the Rules page neither lists them
// nor opens one in the rule form, and moving a rule skips them.
func TestRulesPageLeavesStageMappingsOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		ctx := t.Context()
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		m := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "won to Purchase", Mode: "stage", Stage: models.StageWon,
			EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(ctx, &m, nil); err != nil {
			t.Fatal(err)
		}
		last := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Later", Mode: "automatic_match", EventName: "Contact",
			Combinator: "and", Conditions: `[{"field":"email","match_type":"not_empty","pattern":""}]`, Enabled: true}
		if err := s.CreateSendRule(ctx, &last, nil); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		r := b.get(views.AccountURL(acc.ID, "/rules"))
		if strings.Contains(r.body, "won to Purchase") {
			t.Error("the Rules page lists a stage mapping")
		}
		if r := b.get(views.AccountURL(acc.ID, fmt.Sprintf("/rules/%d", m.ID))); r.status != http.StatusNotFound {
			t.Errorf("a stage mapping in the rule form = %d; want 404", r.status)
		}
		// "Later" moves up past the mapping to before the default rule.
		if err := s.MoveSendRule(ctx, acc.ID, last.ID, -1); err != nil {
			t.Fatal(err)
		}
		rules, _ := s.SendRules(ctx, acc.ID)
		var order []string
		for _, r := range rules {
			if r.Mode != "stage" {
				order = append(order, r.Name)
			}
		}
		if len(order) != 2 || order[0] != "Later" {
			t.Errorf("rules after moving Later up = %v; want it first", order)
		}
	})
}
