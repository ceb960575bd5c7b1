package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestCRMFormStepsFirst: a connection's form is the CRM's steps in order,
// each secret asked for inside the step that says where it is found and
// what it does, the button, then the step that pastes the URL into the
// CRM; a form sent back with a problem keeps them.
func TestCRMFormStepsFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		for _, tt := range []struct {
			kind crm.Kind
			// steps are the words each step says, in order, and the
			// field each step asks for ("" none).
			steps [][2]string
		}{
			{crm.HubSpot, [][2]string{
				{"Private apps", ""},
				{"crm.objects.deals.read", ""},
				{"reads each deal's contact", "api_token"},
				{"HubSpot signs every delivery with it", "secret"},
				{"Name", "name"},
				{"Target URL", ""},
			}},
			{crm.Pipedrive, [][2]string{
				{"You make it up: Pipedrive sends it with every delivery", "secret"},
				{"Personal preferences → API", "api_token"},
				{"Name", "name"},
				{"HTTP Auth username leadsignal with the password of step 1", ""},
			}},
			{crm.Generic, [][2]string{
				{"Your system signs each delivery with it", "secret"},
				{"dotted path", "field_stage"},
				{"Name", "name"},
				{"a signed curl line", ""},
			}},
		} {
			check := func(what string, r resp) {
				t.Helper()
				steps := r.doc.Find(`[data-testid="crm-step"]`)
				if steps.Length() != len(tt.steps) {
					t.Fatalf("%s %s form has %d steps; want %d", what, tt.kind, steps.Length(), len(tt.steps))
				}
				for i, want := range tt.steps {
					st := steps.Eq(i)
					if text := strings.Join(strings.Fields(st.Text()), " "); !strings.Contains(text, want[0]) {
						t.Errorf("%s %s step %d says %q; want %q", what, tt.kind, i+1, text, want[0])
					}
					if want[1] != "" && st.Find(`[name="`+want[1]+`"]`).Length() != 1 {
						t.Errorf("%s %s step %d does not ask for %s", what, tt.kind, i+1, want[1])
					}
				}
				if steps.Last().Find(`[data-testid="save-crm"]`).Length() != 0 || steps.Eq(len(tt.steps)-2).Find(`[data-testid="save-crm"]`).Length() != 1 {
					t.Errorf("%s %s form's button is not in the step before the last", what, tt.kind)
				}
			}
			r := f.b.get(stagesURL(f.acc, "/crm/new?kind="+string(tt.kind)))
			wantStatus(t, "new "+string(tt.kind), r, http.StatusOK)
			check("new", r)
			r = f.b.post(stagesURL(f.acc, "/crm"), url.Values{"kind": {string(tt.kind)}, "name": {""}, "secret": {"short"}})
			wantStatus(t, "a bad "+string(tt.kind), r, http.StatusUnprocessableEntity)
			check("refused", r)
			if r.text("error-name") == "" || r.text("error-secret") == "" {
				t.Errorf("refused %s form: errors name %q, secret %q; want both", tt.kind, r.text("error-name"), r.text("error-secret"))
			}
			if strings.Contains(r.body, `value="short"`) {
				t.Errorf("refused %s form shows the typed secret again", tt.kind)
			}
		}
	})
}
