package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// steps reads the getting-started box: each step shown and whether it is
// marked done; nil when the box is not there.
func (r resp) steps() map[string]bool {
	box := r.doc.Find(`[data-testid="getting-started"]`)
	if box.Length() == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, id := range []string{"key", "lead", "dataset"} {
		if s := box.Find(`[data-testid="step-` + id + `"]`); s.Length() > 0 {
			done, _ := s.Attr("data-done")
			out[id] = done == "true"
		}
	}
	return out
}

func wantSteps(t *testing.T, who string, r resp, want map[string]bool) {
	t.Helper()
	wantStatus(t, who+" overview", r, http.StatusOK)
	got := r.steps()
	if len(got) != len(want) || (got == nil) != (want == nil) {
		t.Errorf("%s sees steps %v; want %v", who, got, want)
		return
	}
	for id, done := range want {
		if d, ok := got[id]; !ok || d != done {
			t.Errorf("%s sees steps %v; want %v", who, got, want)
			return
		}
	}
}

// TestOverviewGettingStarted: the steps follow what the account has done
// (an active key, a lead, a dataset), the box goes once all are done, and
// each role sees only what it can act on.
func TestOverviewGettingStarted(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ctx := t.Context()
		owner := a.user("owner@example.com", false)
		acc := a.account("acme", owner)
		for email, role := range map[string]models.Role{"eddie@example.com": models.RoleEditor, "vic@example.com": models.RoleViewer} {
			u := a.user(email, false)
			if err := s.SetMember(ctx, acc.ID, u.ID, role); err != nil {
				t.Fatal(err)
			}
		}
		// Another account that has done everything marks none of acme's
		// steps done.
		other, otherKey := a.ingestAccount("other", "US")
		if r := a.postLead(otherKey, goodLead); r.status != http.StatusCreated {
			t.Fatalf("other lead = %d %s", r.status, r.raw)
		}
		if err := s.CreateDataset(ctx, &models.Dataset{AccountID: other.ID, Name: "Main", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}); err != nil {
			t.Fatal(err)
		}

		ob, eb, vb := a.browser(), a.browser(), a.browser()
		ob.login("owner@example.com")
		eb.login("eddie@example.com")
		vb.login("vic@example.com")
		home := views.AccountURL(acc.ID, "")

		r := ob.get(home)
		wantSteps(t, "owner", r, map[string]bool{"key": false, "lead": false, "dataset": false})
		host, _ := url.Parse(a.srv.URL)
		if curl := r.text("step-curl"); !strings.Contains(curl, "curl -X POST http://"+host.Host+"/api/v1/leads") {
			t.Errorf("curl line = %q; want this server's host", curl)
		}
		for _, link := range []string{home + "/settings/keys", home + "/datasets/new"} {
			if r.doc.Find(`[data-testid="getting-started"] a[href="`+link+`"]`).Length() != 1 {
				t.Errorf("owner has no link to %s", link)
			}
		}
		// Editors set the account up (DESIGN.md, "Roles"): the same steps.
		r = eb.get(home)
		wantSteps(t, "editor", r, map[string]bool{"key": false, "lead": false, "dataset": false})
		if r.has("owner-steps") {
			t.Errorf("editor's note = %q; want none: an editor takes the steps", r.text("owner-steps"))
		}
		r = vb.get(home)
		wantSteps(t, "viewer", r, nil)
		if !r.has("overview-empty") || r.has("headline") {
			t.Error("viewer before the first lead: want the empty state, not the numbers")
		}

		// A key: done. Revoked, it is not a key anyone can post with.
		k, _, err := s.CreateIngestKey(ctx, acc.ID, "website")
		if err != nil {
			t.Fatal(err)
		}
		wantSteps(t, "owner with a key", ob.get(home), map[string]bool{"key": true, "lead": false, "dataset": false})
		if err := s.RevokeIngestKey(ctx, acc.ID, k.ID, a.clock()); err != nil {
			t.Fatal(err)
		}
		wantSteps(t, "owner with a revoked key", ob.get(home), map[string]bool{"key": false, "lead": false, "dataset": false})
		_, key, err := s.CreateIngestKey(ctx, acc.ID, "website")
		if err != nil {
			t.Fatal(err)
		}

		// A lead: done, and the curl line is gone; the count shows it.
		if r := a.postLead(key, goodLead); r.status != http.StatusCreated {
			t.Fatalf("lead = %d %s", r.status, r.raw)
		}
		r = ob.get(home)
		wantSteps(t, "owner with a lead", r, map[string]bool{"key": true, "lead": true, "dataset": false})
		if r.has("step-curl") || r.text("count-leads-2") != "1" {
			t.Errorf("after a lead: curl shown %v, leads count %q", r.has("step-curl"), r.text("count-leads-2"))
		}
		wantSteps(t, "editor with a lead", eb.get(home), map[string]bool{"key": true, "lead": true, "dataset": false})

		// A dataset: all done, the box is gone for everyone.
		d := connect(t, a, ob, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "mode": {"dry_run"}, "ldu": {"off"}})
		if d.AccountID != acc.ID {
			t.Fatalf("dataset of account %d", d.AccountID)
		}
		for who, b := range map[string]*browser{"owner": ob, "editor": eb, "viewer": vb} {
			r := b.get(home)
			wantSteps(t, who+" when all is done", r, nil)
			if r.text("count-leads-2") != "1" {
				t.Errorf("%s: leads count %q", who, r.text("count-leads-2"))
			}
		}
	})
}

// TestOverviewChartStartsAtFirstWeek: a new account's weekly chart starts
// at its first week, not with eleven flat weeks before it existed.
func TestOverviewChartStartsAtFirstWeek(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		if r := a.postLead(key, goodLead); r.status != http.StatusCreated {
			t.Fatalf("lead = %d %s", r.status, r.raw)
		}
		b := a.browser()
		b.login("acme-owner@example.com")
		r := b.get(views.AccountURL(acc.ID, ""))
		wantStatus(t, "overview", r, http.StatusOK)
		if n := r.doc.Find(`[data-testid="chart-table"] tbody tr`).Length(); n != 1 {
			t.Errorf("a new account's chart has %d weeks; want 1", n)
		}
		if got := strings.TrimSpace(r.doc.Find(`[data-testid="weekly-chart"] figcaption`).Text()); !strings.HasSuffix(got, ", this week") {
			t.Errorf("chart title = %q; want it to end %q", got, ", this week")
		}
	})
}
