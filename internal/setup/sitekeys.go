package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/site"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// SiteKeySpec is one site key of the account (docs/capture-js.md): its
// name, which identifies it, and the origins its snippet may post from.
// The key itself is never in a file: apply makes a new one, shown on the
// account's Site snippet settings, and an export leaves it out.
type SiteKeySpec struct {
	Name    string   `json:"name"`
	Origins []string `json:"origins"`
}

func (d *decoder) siteKeys(path string, raw json.RawMessage) []SiteKeySpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of site keys, not "+kind(raw))
		return nil
	}
	out := make([]SiteKeySpec, len(items))
	for i, item := range items {
		k := &out[i]
		d.fields(fmt.Sprintf("%s[%d]", path, i), item, `must be an object like {"name": "Website", "origins": ["https://www.example.com"]}`, []field{
			{"name", &k.Name, "a string"},
			{"origins", &k.Origins, "a list of strings like https://www.example.com"},
		})
	}
	return out
}

// cleanSiteKeys trims the names and reads each origin as browsers send it
// (site.ParseOrigin); an origin it cannot read stays as typed, for
// siteKeyProblems to name. nil stays nil (absent).
func cleanSiteKeys(ks []SiteKeySpec) []SiteKeySpec {
	if ks == nil {
		return nil
	}
	out := make([]SiteKeySpec, len(ks))
	for i, k := range ks {
		out[i] = SiteKeySpec{Name: strings.TrimSpace(k.Name), Origins: []string{}}
		for _, o := range k.Origins {
			if p, err := site.ParseOrigin(o); err == nil {
				o = p
			}
			if !slices.Contains(out[i].Origins, o) {
				out[i].Origins = append(out[i].Origins, o)
			}
		}
	}
	return out
}

// siteKeyProblems checks the file's clean site keys: at most
// store.MaxSiteKeys, each named once, with 1 to site.MaxOrigins origins.
func (f File) siteKeyProblems() []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(f.SiteKeys) > store.MaxSiteKeys {
		add("site_keys", "use at most %d site keys, not %d", store.MaxSiteKeys, len(f.SiteKeys))
		return ps
	}
	first := map[string]int{}
	for i, k := range f.SiteKeys {
		p := fmt.Sprintf("site_keys[%d]", i)
		switch {
		case k.Name == "":
			add(p+".name", "give the site key a name, like Website")
		case len(k.Name) > 100:
			add(p+".name", "use at most 100 characters")
		default:
			if j, ok := first[strings.ToLower(k.Name)]; ok {
				add(p+".name", "is also site_keys[%d]'s name: a site key is known by its name", j)
			} else {
				first[strings.ToLower(k.Name)] = i
			}
		}
		if len(k.Origins) == 0 || len(k.Origins) > site.MaxOrigins {
			add(p+".origins", "list 1 to %d origins, like [\"https://www.example.com\"]: the snippet works only on their pages", site.MaxOrigins)
		}
		for j, o := range k.Origins {
			if _, err := site.ParseOrigin(o); err != nil {
				add(fmt.Sprintf("%s.origins[%d]", p, j), "%s", err.Error())
			}
		}
	}
	return ps
}

// siteKeys makes the account's live site keys the file's: a key of a name
// it has gets the file's origins, a missing one is made (its key is shown
// on the account's Site snippet settings), and a live key the file leaves
// out is revoked.
func (a *applier) siteKeys(ctx context.Context, accountID int64, specs []SiteKeySpec) error {
	cur, err := a.tx.SiteKeys(ctx, accountID)
	if err != nil {
		return err
	}
	live := map[string]models.SiteKey{}
	for _, k := range cur {
		if k.RevokedAt == nil {
			live[strings.ToLower(k.Name)] = k
		}
	}
	now := time.Now()
	for i, spec := range specs {
		p := fmt.Sprintf("site_keys[%d]", i)
		k, ok := live[strings.ToLower(spec.Name)]
		delete(live, strings.ToLower(spec.Name))
		if !ok {
			if _, err := a.tx.CreateSiteKey(ctx, accountID, spec.Name, spec.Origins, now); err != nil {
				return err
			}
			a.change(p, "created site key %q, allowed from %s; its snippet is on Settings → Site snippet", spec.Name, strings.Join(spec.Origins, ", "))
			a.report.Summary.SiteKeysAdded++
			continue
		}
		var had []string
		for _, o := range k.Origins {
			had = append(had, o.Origin)
			if !slices.Contains(spec.Origins, o.Origin) {
				if err := a.tx.RemoveSiteKeyOrigin(ctx, accountID, k.ID, o.Origin); err != nil {
					return err
				}
				a.change(p+".origins", "%q no longer allowed from %s", spec.Name, o.Origin)
			}
		}
		for _, o := range spec.Origins {
			if !slices.Contains(had, o) {
				if err := a.tx.AddSiteKeyOrigin(ctx, accountID, k.ID, o, now); err != nil {
					return err
				}
				a.change(p+".origins", "%q allowed from %s", spec.Name, o)
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(had)), slices.Sorted(slices.Values(spec.Origins))) {
			a.report.Summary.SiteKeysChanged++
		}
	}
	for _, k := range cur {
		if _, gone := live[strings.ToLower(k.Name)]; gone && k.RevokedAt == nil {
			if err := a.tx.RevokeSiteKey(ctx, accountID, k.ID, now); err != nil {
				return err
			}
			a.change("site_keys", "revoked site key %q: pages with its snippet send nothing from now on", k.Name)
			a.report.Summary.SiteKeysRevoked++
		}
	}
	return nil
}

// exportSiteKeys lists the account's live site keys with their origins,
// never the keys themselves; an empty list when it has none.
func exportSiteKeys(ks []models.SiteKey) []SiteKeySpec {
	out := []SiteKeySpec{}
	for _, k := range ks {
		if k.RevokedAt != nil {
			continue
		}
		spec := SiteKeySpec{Name: k.Name, Origins: []string{}}
		for _, o := range k.Origins {
			spec.Origins = append(spec.Origins, o.Origin)
		}
		out = append(out, spec)
	}
	slices.Reverse(out) // oldest first, as they were made
	return out
}
