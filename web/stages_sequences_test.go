package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// sequenceRows are the Sequences section's lines: dataset, events and
// last full week, spaces squeezed.
func sequenceRows(r resp) []string {
	var out []string
	r.doc.Find(`[data-testid="sequence"]`).Each(func(_ int, s *goquery.Selection) {
		t := func(id string) string {
			return strings.Join(strings.Fields(s.Find(`[data-testid="`+id+`"]`).Text()), " ")
		}
		out = append(out, t("sequence-dataset")+" | "+t("sequence-events")+" | "+t("sequence-last-week"))
	})
	return out
}

func sequenceValues(d models.Dataset, initial, final string) url.Values {
	return url.Values{"dataset_id": {itoa(d.ID)}, "initial_event": {initial}, "final_event": {final}}
}

// An editor adds a sequence on the Stages page (htmx swaps the section,
// a plain form redirects back to it), sees it with its last full week,
// and deletes it; another account's sequence answers 404.
func TestSequencesAddAndDelete(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		r := f.b.get(stagesURL(f.acc, ""))
		wantStatus(t, "stages page", r, http.StatusOK)
		if !r.has("sequences") || !r.has("sequences-empty") || !r.has("add-sequence-form") {
			t.Fatal("the Stages page has no Sequences section with its add form")
		}
		// The account's event names from its rules and mappings.
		opts := r.doc.Find(`#sequence-events option`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
		if got := strings.Join(opts, ","); got != "Lead" {
			t.Errorf("event suggestions = %s; want Lead (the default rule's)", got)
		}

		r = f.b.postWith(stagesURL(f.acc, "/sequences"), sequenceValues(f.d, "Lead", "Purchase"), htmx)
		wantStatus(t, "add a sequence", r, http.StatusOK)
		if got := sequenceRows(r); len(got) != 1 || got[0] != "Main | Lead → Purchase | 0 complete learning limited" {
			t.Errorf("sequences = %q", got)
		}
		if !strings.Contains(r.text("sequences"), "Dry-run datasets count the events they would have sent") {
			t.Error("a dry-run dataset's sequence does not say its counts are what Meta would have got")
		}
		r = f.b.post(stagesURL(f.acc, "/sequences"), sequenceValues(f.d, "Contact", "Schedule"))
		if r.status != http.StatusSeeOther || r.location() != stagesURL(f.acc, "#sequences") {
			t.Fatalf("plain add = %d %q", r.status, r.location())
		}
		if got := sequenceRows(f.b.get(stagesURL(f.acc, ""))); len(got) != 2 {
			t.Errorf("after two adds: %q", got)
		}

		// Another account's sequence.
		owner := f.a.user("bo@example.com", false)
		beta := f.a.account("beta", owner)
		bd := models.Dataset{AccountID: beta.ID, Name: "Beta pixel", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &bd); err != nil {
			t.Fatal(err)
		}
		bq := models.Sequence{AccountID: beta.ID, DatasetID: bd.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}
		if err := s.CreateSequence(ctx, &bq); err != nil {
			t.Fatal(err)
		}
		if r := f.b.postWith(stagesURL(f.acc, "/sequences/"+itoa(bq.ID)+"/delete"), nil, htmx); r.status != http.StatusNotFound {
			t.Errorf("delete another account's sequence = %d; want 404", r.status)
		}
		if got, _ := s.Sequences(ctx, beta.ID); len(got) != 1 {
			t.Errorf("beta's sequences = %+v; want its one kept", got)
		}

		seqs, err := s.Sequences(ctx, f.acc.ID)
		if err != nil || len(seqs) != 2 {
			t.Fatalf("sequences = %+v, %v", seqs, err)
		}
		r = f.b.postWith(stagesURL(f.acc, "/sequences/"+itoa(seqs[0].ID)+"/delete"), nil, htmx)
		wantStatus(t, "delete", r, http.StatusOK)
		if got := sequenceRows(r); len(got) != 1 || !strings.Contains(got[0], "Contact → Schedule") {
			t.Errorf("after delete: %q", got)
		}
	})
}

// The add form refuses, inline and keeping what was typed: the same event
// twice, another account's dataset, a bad event name, a sequence the
// dataset has, and more than store.MaxSequences.
func TestSequenceFormProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		owner := f.a.user("bo@example.com", false)
		beta := f.a.account("beta", owner)
		bd := models.Dataset{AccountID: beta.ID, Name: "Beta pixel", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &bd); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSequence(ctx, &models.Sequence{AccountID: f.acc.ID, DatasetID: f.d.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name           string
			values         url.Values
			errID, errText string
		}{
			{"same event", sequenceValues(f.d, "Lead", "Lead"), "error-final_event", "other than the initial one"},
			{"another account's dataset", sequenceValues(bd, "Lead", "Schedule"), "error-dataset", "Choose one of this account's datasets"},
			{"no dataset", url.Values{"dataset_id": {"x"}, "initial_event": {"Lead"}, "final_event": {"Schedule"}}, "error-dataset", "Choose one"},
			{"bad event name", sequenceValues(f.d, "Lead", "Won!"), "error-final_event", "not allowed in an event name"},
			{"standard name in another case", sequenceValues(f.d, "lead", "Schedule"), "error-initial_event", "Write Lead"},
			{"empty", sequenceValues(f.d, "", "Schedule"), "error-initial_event", "Choose an event"},
			{"the dataset has it", sequenceValues(f.d, "Lead", "Purchase"), "error-sequence", "has this sequence already"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, h := range []http.Header{htmx, nil} {
					r := f.b.postWith(stagesURL(f.acc, "/sequences"), tt.values, h)
					wantStatus(t, "add", r, http.StatusUnprocessableEntity)
					if got := r.text(tt.errID); !strings.Contains(got, tt.errText) {
						t.Errorf("htmx %v: %s = %q; want %q", h != nil, tt.errID, got, tt.errText)
					}
					for _, k := range []string{"initial_event", "final_event"} {
						if got := r.inputValue(k); got != strings.TrimSpace(tt.values.Get(k)) {
							t.Errorf("htmx %v: %s keeps %q; want %q", h != nil, k, got, tt.values.Get(k))
						}
					}
				}
			})
		}
		if got, _ := s.Sequences(ctx, f.acc.ID); len(got) != 1 {
			t.Errorf("sequences = %+v; want the one made before", got)
		}

		for i := 1; i < store.MaxSequences; i++ {
			if err := s.CreateSequence(ctx, &models.Sequence{AccountID: f.acc.ID, DatasetID: f.d.ID, InitialEvent: "Lead", FinalEvent: fmt.Sprintf("Step%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		r := f.b.get(stagesURL(f.acc, ""))
		if !r.has("sequences-full") || r.has("add-sequence-form") {
			t.Error("an account at the limit is offered the add form")
		}
		r = f.b.postWith(stagesURL(f.acc, "/sequences"), sequenceValues(f.d, "Contact", "Schedule"), htmx)
		wantStatus(t, "sequence over the limit", r, http.StatusUnprocessableEntity)
		if got, _ := s.Sequences(ctx, f.acc.ID); len(got) != store.MaxSequences {
			t.Errorf("%d sequences; want %d", len(got), store.MaxSequences)
		}
	})
}

// Sales read the Sequences section without its forms, and its POSTs
// answer them 403.
func TestSequencesSales(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		q := models.Sequence{AccountID: f.acc.ID, DatasetID: f.d.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}
		if err := s.CreateSequence(ctx, &q); err != nil {
			t.Fatal(err)
		}
		viewer := f.a.user("vera@example.com", false) // sales: reads the Stages page, changes none of it
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleSales); err != nil {
			t.Fatal(err)
		}
		b := f.a.browser()
		b.login(viewer.Email)
		r := b.get(stagesURL(f.acc, ""))
		wantStatus(t, "viewer's stages page", r, http.StatusOK)
		if !r.has("sequences") || r.text("sequence-events") == "" {
			t.Error("sales do not see the sequences")
		}
		if r.has("add-sequence-form") || r.has("delete-sequence") {
			t.Error("sales may add or delete a sequence")
		}
		for _, p := range []string{"/sequences", "/sequences/" + itoa(q.ID) + "/delete"} {
			if r := b.post(stagesURL(f.acc, p), sequenceValues(f.d, "Contact", "Schedule")); r.status != http.StatusForbidden {
				t.Errorf("viewer POST %s = %d; want 403", p, r.status)
			}
		}
		if got, _ := s.Sequences(ctx, f.acc.ID); len(got) != 1 {
			t.Errorf("sequences = %+v; want the one unchanged", got)
		}
	})
}
