package setup

import (
	"errors"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// site_keys makes the account's live site keys the file's by name: a new
// one is made, a known one keeps its key and gets the file's origins, one
// left out is revoked; bad origins are problems before anything changes;
// an export lists the keys' origins, never the keys.
func TestApplySiteKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		ctx := t.Context()
		f := acmeFile()
		f.SiteKeys = []SiteKeySpec{{Name: " Website ", Origins: []string{"https://www.acme.example/contact", "https://acme.example"}}}
		r := mustApply(t, s, box, acmeEnv(), f)
		if r.Summary.SiteKeysAdded != 1 {
			t.Errorf("summary %+v; want one site key added", r.Summary)
		}
		a, _ := s.AccountBySlug(ctx, "acme")
		keys, _ := s.SiteKeys(ctx, a.ID)
		if len(keys) != 1 || keys[0].Name != "Website" || len(keys[0].Origins) != 2 {
			t.Fatalf("site keys %+v", keys)
		}
		key := keys[0].Key

		f.SiteKeys = []SiteKeySpec{{Name: "website", Origins: []string{"https://acme.example", "https://shop.acme.example"}}}
		r = mustApply(t, s, box, acmeEnv(), f)
		keys, _ = s.SiteKeys(ctx, a.ID)
		var origins []string
		for _, o := range keys[0].Origins {
			origins = append(origins, o.Origin)
		}
		if r.Summary.SiteKeysChanged != 1 || len(keys) != 1 || keys[0].Key != key || strings.Join(origins, ",") != "https://acme.example,https://shop.acme.example" {
			t.Errorf("after new origins: summary %+v, keys %+v", r.Summary, keys)
		}
		if r := mustApply(t, s, box, acmeEnv(), f); len(changesUnder(r.Changes, "site_keys")) != 0 {
			t.Errorf("the same file again changed %q", r.Changes)
		}

		exported, _, err := Export(ctx, s, a.Slug, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(exported.SiteKeys) != 1 || exported.SiteKeys[0].Name != "Website" || len(exported.SiteKeys[0].Origins) != 2 {
			t.Errorf("export %+v", exported.SiteKeys)
		}

		bad := f
		bad.SiteKeys = []SiteKeySpec{{Name: "Website", Origins: []string{"javascript:alert(1)"}}, {Name: "website", Origins: nil}}
		_, err = Apply(ctx, s, box, env(acmeEnv()), bad, Options{})
		if inv := new(*Invalid); !errors.As(err, inv) || len((*inv).Problems) != 3 {
			t.Errorf("bad site keys: %v; want three problems (the origin, the name twice, no origins)", err)
		}

		f.SiteKeys = []SiteKeySpec{}
		if r := mustApply(t, s, box, acmeEnv(), f); r.Summary.SiteKeysRevoked != 1 {
			t.Errorf("an empty list: summary %+v; want the key revoked", r.Summary)
		}
		if _, _, err := s.SiteKeyAccount(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the revoked key still works: %v", err)
		}
	})
}
