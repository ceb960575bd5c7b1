package setup

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Pipedrive's won status maps to the won stage until a file (or a person)
// maps it otherwise: a file may name it, and one that leaves it out, as
// files written before it was read do, keeps its mapping.
func TestApplyPipedriveWonStatus(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		vars := crmEnv()
		vars["PIPEDRIVE_SECRET_DEALS"], vars["PIPEDRIVE_API_TOKEN_DEALS"] = "pd-password-5555", "pd-api-6666"
		decoded, problems := Decode(strings.NewReader(`{"account": {"slug": "acme"}, "crm_connections": [{"kind": "pipedrive", "name": "Deals",
			"secret_env": "PIPEDRIVE_SECRET_DEALS", "api_token_env": "PIPEDRIVE_API_TOKEN_DEALS", "stage_ids": {"won": "won", "12": "qualified"}}]}`))
		if len(problems) > 0 {
			t.Fatalf("Decode: %v", problems)
		}
		f := acmeFile()
		f.CRMConnections = decoded.CRMConnections
		apply := func(stageIDs map[string]string) []string {
			t.Helper()
			f.CRMConnections[0].StageIDs = stageIDs
			r, err := Apply(t.Context(), s, box, env(vars), f, Options{})
			if err != nil {
				t.Fatalf("Apply(stage_ids %v): %v", stageIDs, err)
			}
			return changesUnder(r.Changes, "crm_connections[0].stage_ids")
		}
		table := func() map[string]string {
			t.Helper()
			return stageTable(t, s, connectionNamed(t, crmOf(t, s, "acme"), "Deals"))
		}

		// won is the won stage already: only 12 changes.
		if got, want := apply(f.CRMConnections[0].StageIDs), []string{"crm_connections[0].stage_ids.12: unmapped → qualified"}; !slices.Equal(got, want) {
			t.Errorf("first apply changes = %q; want %q", got, want)
		}
		if got := apply(map[string]string{"won": "won", "12": "qualified"}); len(got) != 0 {
			t.Errorf("second apply changes = %q; want none", got)
		}
		if got := apply(map[string]string{"won": "booked", "lost": "qualified"}); !slices.Equal(got, []string{
			"crm_connections[0].stage_ids.12: qualified → unmapped",
			"crm_connections[0].stage_ids.lost: unmapped → qualified",
			"crm_connections[0].stage_ids.won: won → booked",
		}) {
			t.Errorf("remapping changes = %q", got)
		}
		// Left out, won and lost keep what they were mapped to.
		if got := apply(map[string]string{"12": "qualified"}); !slices.Equal(got, []string{"crm_connections[0].stage_ids.12: unmapped → qualified"}) {
			t.Errorf("a file without won or lost changes = %q; want only 12", got)
		}
		if got, want := table(), map[string]string{"12": "qualified", "won": "booked", "lost": "qualified"}; !maps.Equal(got, want) {
			t.Errorf("stage table = %v; want %v", got, want)
		}

		exported, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range exported.CRMConnections {
			if c.Kind == crm.Pipedrive && !maps.Equal(c.StageIDs, map[string]string{"12": "qualified", "won": "booked", "lost": "qualified"}) {
				t.Errorf("exported stage_ids = %v; want won and lost with the rest", c.StageIDs)
			}
		}
	})
}
