package overview

import (
	"sort"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Key is a match key whose coverage the Overview shows, with what to do to
// send it more often.
type Key struct {
	Name string // as Meta names it: em, ph, ...
	Hint string
}

// Keys are the match keys of the coverage table, in Meta's priority order
// (meta-capi.md): the hint of the weakest one says what to capture next.
var Keys = []Key{
	{"em", "ask for an email address on every form, or post the one your CRM has"},
	{"ph", "ask for a phone number, and set the account's default country for numbers without a code"},
	{"fbc", "post the _fbc cookie, or the fbclid of the landing page's URL, with each website lead"},
	{"fbp", "post the _fbp cookie of the visitor's browser with each website lead"},
	{"external_id", "post your own lead or contact id as external_id"},
	{"lead_id", "post Meta's leadgen id as meta_lead_id with each Instant Form lead"},
	{"client_ip_address", "forward the visitor's IP address from your form handler"},
	{"client_user_agent", "forward the visitor's browser user agent from your form handler"},
}

func keyCount(k store.KeyCounts, name string) int64 {
	switch name {
	case "em":
		return k.Em
	case "ph":
		return k.Ph
	case "fbc":
		return k.FBC
	case "fbp":
		return k.FBP
	case "external_id":
		return k.ExternalID
	case "lead_id":
		return k.LeadID
	case "client_ip_address":
		return k.IP
	case "client_user_agent":
		return k.UA
	}
	return 0
}

// Coverage is how many of the events named EventName that Meta received
// (or, in dry run, that were built for it) carry each of Keys.
type Coverage struct {
	EventName string
	Events    int64
	// Carry is per key of Keys.
	Carry []int64
	// Website counts the website leads' events among them, and
	// InstantForm the Instant Form leads': IP, user agent and the click
	// keys come with website leads, the lead id with Instant Form ones.
	Website, InstantForm int64
}

// covered are the statuses of events whose keys reached Meta or would
// have: sent, and built in dry run.
var covered = []models.EventStatus{models.EventSent, models.EventDryRun}

// Coverages lists span's coverage per event name, most events first.
func Coverages(c store.Counts, span int) []Coverage {
	by := map[string]*Coverage{}
	for _, e := range c.Events {
		if e.Span != span || (e.Status != covered[0] && e.Status != covered[1]) {
			continue
		}
		cv := by[e.EventName]
		if cv == nil {
			cv = &Coverage{EventName: e.EventName, Carry: make([]int64, len(Keys))}
			by[e.EventName] = cv
		}
		cv.Events += e.N
		for i, k := range Keys {
			cv.Carry[i] += keyCount(e.Keys, k.Name)
		}
		switch e.Source {
		case models.SourceWebsite, "":
			cv.Website += e.N
		case models.SourceInstantForm:
			cv.InstantForm += e.N
		}
	}
	out := make([]Coverage, 0, len(by))
	for _, cv := range by {
		out = append(out, *cv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Events != out[j].Events {
			return out[i].Events > out[j].Events
		}
		return out[i].EventName < out[j].EventName
	})
	return out
}

// Base is how many of cv's events could carry key i of Keys: the lead id
// comes with Instant Form leads, the browser's keys (click ids, IP, user
// agent) with website leads, the others with any lead.
func (cv Coverage) Base(i int) int64 {
	switch Keys[i].Name {
	case "lead_id":
		return cv.InstantForm
	case "fbc", "fbp", "client_ip_address", "client_user_agent":
		return cv.Website
	}
	return cv.Events
}

// Weakest is the index in Keys of the key that the smallest share of the
// events that could carry it do (Base). -1 when every key is on every
// event that could carry it.
func (cv Coverage) Weakest() int {
	best, bestShare := -1, 1.0
	for i := range Keys {
		base := cv.Base(i)
		if base == 0 {
			continue
		}
		if share := float64(cv.Carry[i]) / float64(base); share < bestShare {
			best, bestShare = i, share
		}
	}
	return best
}
