package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// ReadStages finds leads by keys as a CRM sends them, whatever characters
// they hold (Postgres passes them as one array literal), and only the
// account's own: another account's lead is not found by its id, its
// external id or its email.
func TestReadStagesFindsKeysAsSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC().Truncate(time.Second)
		odd := []string{`quo"te`, `back\slash`, `com,ma`, `{braces}`, ` spaced `, `NULL`, `ünï`, `'single'`, strings.Repeat("x", 40000)}
		var ls []models.Lead
		for i, ext := range odd {
			l := lead(a, now, fmt.Sprintf("odd%d@example.com", i))
			l.ExternalID, l.MetaLeadID, l.PhoneHash = strp(ext), ext, ext
			ls = append(ls, l)
		}
		foreign := lead(b, now, "foreign@example.com")
		foreign.ExternalID = strp("foreign")
		if _, err := insertCaptured(t, s, append(ls, foreign), nil); err != nil {
			t.Fatal(err)
		}
		stored, err := s.Leads(ctx, a.ID, store.LeadFilter{}, nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		byExt := map[string]int64{}
		for _, l := range stored {
			byExt[*l.ExternalID] = l.ID
		}
		var keys []store.LeadKey
		for _, ext := range odd {
			for _, field := range []string{"external_id", "meta_lead_id", "phone"} {
				keys = append(keys, store.LeadKey{Field: field, Value: ext})
			}
		}
		fb, err := s.Leads(ctx, b.ID, store.LeadFilter{}, nil, 1)
		if err != nil || len(fb) != 1 {
			t.Fatalf("the other account's leads = %v, %v", fb, err)
		}
		keys = append(keys, store.LeadKey{Field: "id", Value: fmt.Sprint(fb[0].ID)}, store.LeadKey{Field: "external_id", Value: "foreign"},
			store.LeadKey{Field: "email", Value: fb[0].EmailHash})
		r, err := s.ReadStages(ctx, a.ID, keys, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range odd {
			for _, field := range []string{"external_id", "meta_lead_id", "phone"} {
				got, ok := r.Leads[store.LeadKey{Field: field, Value: ext}]
				if want := byExt[ext]; !ok || got.ID != want {
					t.Errorf("%s %.20q found lead %d (%v), want %d", field, ext, got.ID, ok, want)
				}
			}
		}
		if len(r.Leads) != 3*len(odd) {
			t.Errorf("found %d leads by key, want %d: another account's lead was found", len(r.Leads), 3*len(odd))
		}
	})
}
