// Package platform is where a destination's kind picks its platform's code:
// each event's JSON (Prepare, Check), what a prepared payload depends on
// (Stamp), the platform's names of our events (EventName) and its limits.
// Meta's is internal/capi; TikTok's internal/tiktok. The decider and the
// dispatcher ask this package and never switch on a kind themselves.
package platform

import (
	"encoding/json"
	"hash/fnv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capi"
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

// MaxBatch is the most events one request of the kind may carry.
func MaxBatch(k models.Kind) int {
	switch k {
	case models.KindTikTok:
		return tiktok.MaxBatch
	}
	return capi.MaxBatch
}

// Supported reports whether leadsignal can send to destinations of kind k.
func Supported(k models.Kind) bool {
	return k == models.KindMeta || k == models.KindTikTok
}

// EventName is the destination's name of our event name ours: its own
// (Dataset.EventNames), else its kind's default. Meta's are ours.
func EventName(d models.Dataset, ours string) string {
	if d.Of() == models.KindMeta {
		return ours
	}
	if own, ok := EventNames(d)[ours]; ok && own != "" {
		return own
	}
	switch d.Of() {
	case models.KindTikTok:
		return tiktok.EventName(ours)
	}
	return ours
}

// EventNames reads a destination's own names of our events; a value that
// cannot be read is none (the page and the setup file check it when saved).
func EventNames(d models.Dataset) map[string]string {
	m := map[string]string{}
	if strings.TrimSpace(d.EventNames) != "" {
		_ = json.Unmarshal([]byte(d.EventNames), &m)
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
