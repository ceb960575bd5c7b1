package capi

import (
	"hash/fnv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// buildVersion names what Build writes. Bump it whenever a change to Build
// or MarshalJSON changes the JSON of some event: payloads prepared before
// are then built again before they are sent.
const buildVersion = "2"

// Stamp identifies what an event's payload is built from besides its lead
// and the event itself: the build code and the account's and dataset's
// settings that appear in payloads (Limited Data Use, the currency of
// valued events, the CRM name of Conversion Leads events). A payload
// prepared when the event was queued is sent as it is only while its stamp
// is the dataset's current one; after a settings change the dispatcher
// builds it again. Never 0, which marks an event with no prepared payload.
func Stamp(acc models.Account, ds models.Dataset) int64 {
	h := fnv.New64a()
	for _, s := range []string{buildVersion, string(ds.LDU),
		strings.ToUpper(strings.TrimSpace(acc.Currency)), strings.TrimSpace(acc.CRMName)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if v := int64(h.Sum64()); v != 0 {
		return v
	}
	return 1
}

// Prepared reports whether a queued event carries a payload prepared with
// stamp, the current Stamp of its account and dataset: one the dispatcher
// sends as it is.
func Prepared(e models.Event, stamp int64) bool {
	return e.PayloadStamp == stamp && e.Payload != ""
}

// Check is Prepare without the JSON: an *Invalid when Meta would refuse
// the event, its time aside, else nil. It builds no payload: the checks
// Validate makes read the lead's keys where the event's user_data would
// carry them (keysUserData). The rule preview asks it of every lead it
// counts as sendable.
func Check(in BuildInput) error {
	if inv := validateContent(buildEvent(in), keysUserData{keys: &in.Keys, leadID: strings.TrimSpace(in.Lead.MetaLeadID)}); inv != nil {
		return inv
	}
	return nil
}

// Prepare builds an event, encodes it and checks all that Validate checks
// but the time, which only the send can: its answer holds when the event
// is sent later, for as long as its Stamp stays the same. err is an
// *Invalid when Meta would refuse the event; body is its JSON all the same,
// for the send log.
func Prepare(in BuildInput) (e ServerEvent, body []byte, err error) {
	e = Build(in)
	// MarshalJSON directly: json.Marshal would check and compact its
	// output again.
	if body, err = e.MarshalJSON(); err != nil {
		return e, nil, err
	}
	if inv := validateContent(e, userDataOf(e)); inv != nil {
		return e, body, inv
	}
	return e, body, nil
}
