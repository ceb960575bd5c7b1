package setup

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// A send rule or stage mapping names where its events go in one of two
// ways: "dataset", one name, or "destinations", a list of names of any
// kind (Meta's datasets by their names too), in any order: the rule keeps
// them in the order of their ids (models.SendRule SetDestinations).
// Export writes "dataset" for a rule whose only destination is a Meta
// dataset, as files always had it, and "destinations" for any other.

// destinationsWant is what the file's "destinations" key takes.
const destinationsWant = `a list of destination names, like ["Main", "TikTok"]`

// destinationNames reads the names of a rule's or mapping's destinations
// key, each a string; nil when the key is absent or null, empty (not nil)
// for an empty list, which Validate refuses.
func (d *decoder) destinationNames(path string, items []json.RawMessage) []string {
	if items == nil {
		return nil
	}
	out := make([]string, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		if err := json.Unmarshal(item, &out[i]); err != nil {
			d.add(p, "must be a string: the name of a destination, not "+kind(item))
			continue
		}
		if mangled(item, out[i]) {
			d.add(p, notUTF8)
		} else if strings.ContainsRune(out[i], 0) {
			d.add(p, `contains a NUL character (\u0000); remove it`)
		}
	}
	return out
}

// cleanNames trims each name of a destinations list, keeping nil (no
// list) apart from an empty one.
func cleanNames(ns []string) []string {
	if ns == nil {
		return nil
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strings.TrimSpace(n)
	}
	return out
}

// destinationsKey is the key a clean rule or mapping names its
// destinations with: destinations when it has that list, else dataset.
func destinationsKey(dests []string) string {
	if dests != nil {
		return "destinations"
	}
	return "dataset"
}

// targets are the names of a clean rule's or mapping's destinations, in
// order: its destinations, else its dataset.
func targets(dataset string, dests []string) []string {
	if dests != nil {
		return dests
	}
	return []string{dataset}
}

// destinationProblems lists what is wrong with how the clean rule or
// mapping at path names its destinations: dataset or destinations, one of
// them; each a known name, none twice (ignoring case, as names are
// found), at most store.MaxDestinations.
func (d *datasetRefs) destinationProblems(path, dataset string, dests []string) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case dests == nil && dataset == "":
		add(path+".dataset", "required: the name of one of the datasets, or destinations: %s", destinationsWant)
		return ps
	case dests == nil:
		if msg := d.problem(dataset); msg != "" {
			add(path+".dataset", "%s", msg)
		}
		return ps
	case dataset != "":
		add(path+".destinations", "give dataset or destinations, not both: destinations names every destination, Meta datasets too, like [\"Main\", \"TikTok\"]")
		return ps
	case len(dests) == 0:
		add(path+".destinations", "must name at least one destination, like [\"Main\", \"TikTok\"]")
		return ps
	case len(dests) > store.MaxDestinations:
		add(path+".destinations", "use at most %d destinations, not %d: each is one more event for every lead that matches", store.MaxDestinations, len(dests))
		return ps
	}
	first := map[string]int{}
	for i, n := range dests {
		p := fmt.Sprintf("%s.destinations[%d]", path, i)
		l := strings.ToLower(n)
		if j, ok := first[l]; ok {
			add(p, "%q is also destinations[%d]; name each destination once (ignoring case)", n, j)
			continue
		}
		first[l] = i
		if n == "" {
			add(p, "required: the name of a destination")
		} else if msg := name.Problem(n); msg != "" {
			// No name of this shape is a destination's: say so without
			// quoting all of it.
			add(p, "%s", msg)
		} else if !d.has(n) {
			if d.names == nil {
				d.names = knownDatasetNames(d.datasets, d.k)
			}
			add(p, "%s", destinationRefProblem(n, d.names))
		}
	}
	return ps
}

// has reports whether ref names a destination of the file or of the
// account; without the account (a nil k) any name may be one of its.
func (d *datasetRefs) has(ref string) bool {
	_, inAccount := d.k.dataset(ref)
	_, inFile := d.inFile[strings.ToLower(ref)]
	return inFile || inAccount || d.k == nil
}

// destinationRefProblem says that a rule names a destination neither the
// file nor the account has, and which ones there are
// (knownDatasetNames).
func destinationRefProblem(ref string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("no destination is named %q: the account has none yet; add it to datasets or destinations", ref)
	}
	return fmt.Sprintf("no destination is named %q in the file or the account; there are %s", ref, strings.Join(quoteAll(names), ", "))
}

// destinationIDs are the ids of the destinations a clean, valid rule or
// mapping names, in order (ids: the account's, by lower-case name).
func destinationIDs(dataset string, dests []string, ids map[string]int64) []int64 {
	ns := targets(dataset, dests)
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = ids[strings.ToLower(n)]
	}
	return out
}

// destinationsText names a stored rule's destinations for a change:
// "Main", "Main and TikTok", "Main, TikTok and Pinterest".
func destinationsText(r models.SendRule, names map[int64]string) string {
	ids := r.Destinations()
	ns := make([]string, len(ids))
	for i, id := range ids {
		ns[i] = names[id]
	}
	return andList(ns)
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b
// and c".
func andList(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// destinationChange reports a change of a rule's or mapping's
// destinations at path, the key the file names them with (dataset or
// destinations).
func (a *applier) destinationChange(path string, old, want models.SendRule, names map[int64]string) {
	if !slices.Equal(old.Destinations(), want.Destinations()) {
		a.change(path, "%s → %s", destinationsText(old, names), destinationsText(want, names))
	}
}

// destinationsOf names a stored rule's destinations as the file writes
// them (byID: the account's destinations): dataset for a rule whose only
// destination is a Meta dataset, else destinations, in the rule's order.
func destinationsOf(r models.SendRule, byID map[int64]models.Dataset) (dataset string, dests []string) {
	ids := r.Destinations()
	if d := byID[ids[0]]; len(ids) == 1 && d.Of() == models.KindMeta {
		return d.Name, nil
	}
	dests = make([]string, len(ids))
	for i, id := range ids {
		dests[i] = byID[id].Name
	}
	return "", dests
}

// sharedText names the destinations a warning is about, as the file
// named them: `dataset "Main"` for a rule's dataset key, else
// `destination "TikTok"` or `destinations "Main", "TikTok"`.
func sharedText(dests []string, shared []string) string {
	switch {
	case dests == nil:
		return fmt.Sprintf("dataset %q", shared[0])
	case len(shared) == 1:
		return fmt.Sprintf("destination %q", shared[0])
	}
	return "destinations " + strings.Join(quoteAll(shared), ", ")
}
