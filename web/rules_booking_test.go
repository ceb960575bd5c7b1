package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The rule form offers no booking mode: a lead reaching the booking stage
// is sent by the stage's mappings. A form posted by hand with mode booking,
// new or over a saved rule, is refused at the mode with where to go
// instead, and nothing is saved.
func TestRuleFormRefusesBooking(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		r := f.b.get(f.url("/new"))
		wantStatus(t, "new rule form", r, http.StatusOK)
		if n := r.doc.Find(`#f-mode option[value="booking"], [data-mode="booking"]`).Length(); n != 0 || r.doc.Find(`#f-mode option`).Length() != 4 {
			t.Errorf("the form offers booking (%d) or not the 4 modes", n)
		}
		before, err := s.SendRules(t.Context(), f.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"", "/" + itoa(before[0].ID)} {
			r := f.b.post(f.url(path), ruleValues("Booked calls", f.d, "booking", "Schedule", "and"))
			if msg := r.text("error-mode"); r.status != http.StatusUnprocessableEntity ||
				!strings.Contains(strings.ToLower(msg), "booking is no longer a send mode") || !strings.Contains(msg, "Stages page") {
				t.Errorf("post mode booking to %q = %d, mode error %q; want 422 saying a stage mapping sends it", path, r.status, msg)
			}
		}
		after, err := s.SendRules(t.Context(), f.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) || after[0].Mode != before[0].Mode || after[0].Name != before[0].Name {
			t.Errorf("rules after refused posts = %+v; want %+v", after, before)
		}
	})
}
