// Package platform is where a destination's kind picks its platform's code:
// each event's JSON (Prepare, Check), what a prepared payload depends on
// (Stamp), the platform's names of our events (EventName) and its limits.
// Meta's is internal/capi; TikTok's internal/tiktok, Pinterest's
// internal/pinterest, Google's internal/google. The decider and the
// dispatcher ask this package and never switch on a kind themselves.
package platform

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/pinterest"
	"github.com/leadsignal/leadsignal/internal/tiktok"
	"github.com/leadsignal/leadsignal/models"
)

// Name is how pages and reasons name the platform of a kind.
func Name(k models.Kind) string {
	switch k {
	case models.KindTikTok:
		return "TikTok"
	case models.KindGoogle:
		return "Google Ads"
	case models.KindPinterest:
		return "Pinterest"
	}
	return "Meta"
}

// RefusedBy begins the reason of an event the platform of kind k refused
// (models.ReasonMetaRefused for Meta's): "TikTok refused: ". It reads as
// failed (models.Event.State).
func RefusedBy(k models.Kind) string { return Name(k) + " refused: " }

// TrimRefused is the reason of an event a platform refused without the
// platform's prefix (RefusedBy): the platform's own words.
func TrimRefused(reason string) string {
	for _, k := range models.Kinds {
		if rest, ok := strings.CutPrefix(reason, RefusedBy(k)); ok {
			return rest
		}
	}
	return reason
}

// MaxBatch is the most events one request of the kind may carry.
func MaxBatch(k models.Kind) int {
	switch k {
	case models.KindTikTok:
		return tiktok.MaxBatch
	case models.KindPinterest:
		return pinterest.MaxBatch
	case models.KindGoogle:
		return google.MaxBatch
	}
	return capi.MaxBatch
}

// Supported reports whether leadsignal can send to destinations of kind k.
func Supported(k models.Kind) bool {
	return slices.Contains(models.Kinds, k)
}

// EventName is the destination's name of our event name ours: its own
// (Dataset.EventNames), else its kind's default. Meta's are ours. Google's
// are its conversion actions' ids, which have no default: "" when the
// destination maps none to ours.
func EventName(d models.Dataset, ours string) string {
	if d.Of() == models.KindMeta {
		return ours
	}
	if own := ownNames(d.EventNames)[ours]; own != "" {
		return own
	}
	switch d.Of() {
	case models.KindTikTok:
		return tiktok.EventName(ours)
	case models.KindPinterest:
		return pinterest.EventName(ours)
	case models.KindGoogle:
		return ""
	}
	return ours
}

// FirstMapped is the first of our event names (in alphabetical order) the
// destination names itself, "" when it names none: Google's test event
// goes to its first conversion action.
func FirstMapped(d models.Dataset) string {
	names := ownNames(d.EventNames)
	if len(names) == 0 {
		return ""
	}
	return slices.Sorted(maps.Keys(names))[0]
}

// ownNames reads a destination's own names of our events
// (Dataset.EventNames); a value that cannot be read is none: the page and
// the setup file check it when saved (ParseEventNames).
func ownNames(eventNames string) map[string]string {
	m := map[string]string{}
	if strings.TrimSpace(eventNames) != "" {
		_ = json.Unmarshal([]byte(eventNames), &m)
	}
	return m
}

// Prepare builds an event's JSON for its destination's platform and checks
// what the platform would refuse, its time aside (capi.Prepare for Meta).
// err is a *capi.Invalid, with the JSON all the same, when the platform
// would refuse the event.
func Prepare(in capi.BuildInput) ([]byte, error) {
	switch in.Dataset.Of() {
	case models.KindMeta:
		_, body, err := capi.Prepare(in)
		return body, err
	case models.KindTikTok:
		return tiktok.Prepare(in, EventName(in.Dataset, in.Event.EventName))
	case models.KindPinterest:
		return pinterest.Prepare(in, EventName(in.Dataset, in.Event.EventName))
	case models.KindGoogle:
		return google.Prepare(in, EventName(in.Dataset, in.Event.EventName))
	}
	return nil, &capi.Invalid{Field: "destination", Reason: Name(in.Dataset.Of()) + " cannot be sent to yet"}
}

// Check is nil when the event's platform would take it, its time aside;
// else the *capi.Invalid Prepare would give. For Meta it builds no JSON
// (capi.Check), which the rule preview asks of every lead it counts.
func Check(in capi.BuildInput) error {
	if in.Dataset.Of() == models.KindMeta {
		return capi.Check(in)
	}
	_, err := Prepare(in)
	return err
}

// Stamp identifies what an event's prepared payload is built from besides
// its lead and the event (capi.Stamp for Meta): for the other platforms
// also the kind and the destination's own event names. Never 0.
func Stamp(acc models.Account, d models.Dataset) int64 {
	s := capi.Stamp(acc, d)
	if d.Of() == models.KindMeta {
		return s
	}
	h := fnv.New64a()
	for _, part := range []string{string(d.Of()), d.EventNames} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	if v := int64(h.Sum64()) ^ s; v != 0 {
		return v
	}
	return 1
}

// URLs are the platforms' API base URLs (internal/config), "" for each
// platform's own.
type URLs struct {
	TikTok    string
	Pinterest string
	// Google is the Data Manager API's, GoogleToken the OAuth token
	// endpoint's.
	Google      string
	GoogleToken string
}

// Senders are the dispatcher's senders of the kinds other than Meta.
func Senders(u URLs) map[models.Kind]destination.Sender {
	return map[models.Kind]destination.Sender{
		models.KindTikTok:    &tiktok.Client{BaseURL: u.TikTok},
		models.KindPinterest: &pinterest.Client{BaseURL: u.Pinterest},
		models.KindGoogle:    &google.Client{BaseURL: u.Google, TokenURL: u.GoogleToken},
	}
}
