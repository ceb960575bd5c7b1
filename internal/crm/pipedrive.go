package crm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Pipedrive's won and lost are a deal's status, not a stage: "Mark as
// won" sets status (and won_time) and leaves stage_id as it was. A change
// of status to one of them is a change to the CRM stage id of that name,
// which a Pipedrive connection's stage table always lists (StatusStages).
const (
	StatusWon  = "won"
	StatusLost = "lost"
)

// pipedriveDeal is what a delivery says of a deal (v2's data or previous,
// v1's current or previous), read field by field: types are loose (ids
// are strings in v2's meta and numbers elsewhere), and v2's previous
// holds only the fields that changed.
type pipedriveDeal map[string]json.RawMessage

func (d pipedriveDeal) get(field string) string { return string(get(d, field)) }

func (d pipedriveDeal) has(field string) bool {
	_, ok := d[field]
	return ok
}

// pipedriveDelivery is one delivery, of either version, as the rest of
// the reading needs it.
type pipedriveDelivery struct {
	body []byte
	// created: the deal is new (v2 create, v1 added), or the delivery
	// has no previous to compare with.
	created     bool
	cur, before pipedriveDeal
	// id is the deal's id when its data lacks one (meta's).
	id string
	// eventID is the sender's own id of the event (v2 meta.id).
	eventID string
	// eventTime is when Pipedrive says the event happened (meta), as
	// written; "" when it does not.
	eventTime, eventField string
}

func parsePipedrive(body []byte) ([]Change, int) {
	m := members(body)
	if m == nil {
		return []Change{attention(body, "Pipedrive posts one JSON object, with meta and data (webhooks v2) or current (v1)")}, 0
	}
	meta := members(m["meta"])
	switch {
	case strings.HasPrefix(string(get(meta, "version")), "2") || isObject(m["data"]) && !isObject(m["current"]):
		return pipedriveV2(body, meta, m)
	case isObject(m["current"]) || isObject(m["previous"]) || get(m, "event") != "" || get(meta, "object") != "":
		return pipedriveV1(body, meta, m)
	}
	return []Change{attention(body, "not a Pipedrive webhook: no meta with data (v2) or current (v1)")}, 0
}

// pipedriveV2 reads a v2 delivery (meta, data, previous): a deal created,
// or changed with previous holding its status or stage_id.
func pipedriveV2(body []byte, meta, m map[string]json.RawMessage) ([]Change, int) {
	entity, action := string(get(meta, "entity")), string(get(meta, "action"))
	switch {
	case entity == "" || action == "":
		return []Change{attention(body, "a Pipedrive webhooks v2 delivery without meta.entity or meta.action")}, 0
	case entity != "deal" || action == "delete":
		return nil, 1
	case action != "create" && action != "change":
		return []Change{attention(body, "Pipedrive action %s is not one leadsignal reads (create, change, delete)", quote(action))}, 0
	}
	// A change without previous (which Pipedrive sends, but a relay may
	// drop) is read like a deal created: its status or stage as it is.
	d := pipedriveDelivery{body: body, created: action == "create" || !isObject(m["previous"]),
		cur: members(m["data"]), before: members(m["previous"]), id: string(get(meta, "entity_id")),
		eventID: string(get(meta, "id")), eventTime: string(get(meta, "timestamp")), eventField: "meta.timestamp"}
	return d.change()
}

// pipedriveV1 reads a v1 delivery (meta, current, previous, event): a deal
// added, or updated with a status or stage_id other than previous's.
func pipedriveV1(body []byte, meta, m map[string]json.RawMessage) ([]Change, int) {
	action, object := string(get(meta, "action")), string(get(meta, "object"))
	if a, o, ok := strings.Cut(string(get(m, "event")), "."); ok {
		if action == "" {
			action = a
		}
		if object == "" {
			object = o
		}
	}
	switch {
	case object == "" || action == "":
		return []Change{attention(body, "a Pipedrive webhooks v1 delivery without meta.action and meta.object (or event)")}, 0
	case object != "deal" || action == "deleted" || action == "merged":
		return nil, 1
	case action != "added" && action != "updated":
		return []Change{attention(body, "Pipedrive action %s is not one leadsignal reads (added, updated, merged, deleted)", quote(action))}, 0
	}
	d := pipedriveDelivery{body: body, cur: members(m["current"]), before: members(m["previous"]), id: string(get(meta, "id"))}
	d.created = action == "added" || d.before == nil
	// v1 has no event id; its time is the event's, to the microsecond
	// when it says so.
	if us := string(get(meta, "timestamp_micro")); us != "" {
		n, err := strconv.ParseInt(us, 10, 64)
		if err != nil || n <= 0 {
			return []Change{attention(body, "Pipedrive meta.timestamp_micro %s is not microseconds", quote(us))}, 0
		}
		d.eventTime, d.eventField = time.UnixMicro(n).UTC().Format(time.RFC3339Nano), "meta.timestamp_micro"
	} else {
		d.eventTime, d.eventField = string(get(meta, "timestamp")), "meta.timestamp"
	}
	return d.change()
}

// change is the change a deal's delivery makes: its status to won or lost
// (what Meta must learn, even when stage_id changed too), else its stage;
// none (ignored) when neither changed. Its time is won_time or lost_time
// for a status, else Pipedrive's time of the event, else the deal's
// stage_change_time or update_time; without previous, the deal's own time
// of its stage comes first, since the event may be a later edit.
func (d pipedriveDelivery) change() ([]Change, int) {
	cur, before := d.cur, d.before
	status := cur.get("status")
	var field, from, to string
	var times []string // "" is the event's time
	switch {
	case (status == StatusWon || status == StatusLost) && (d.created || before.has("status") && before.get("status") != status):
		field, from, to = "status", before.get("status"), status
		times = []string{status + "_time", "update_time", ""}
	case d.created || before.has("stage_id") && before.get("stage_id") != cur.get("stage_id"):
		field, from, to = "stage", before.get("stage_id"), cur.get("stage_id")
		times = []string{"", "stage_change_time", "update_time"}
		if d.created {
			times = []string{"stage_change_time", "", "update_time"}
		}
	default:
		return nil, 1
	}
	id := cur.get("id")
	if id == "" {
		id = d.id
	}
	switch {
	case id == "":
		return []Change{attention(d.body, "a Pipedrive deal change without the deal's id")}, 0
	case to == "":
		return []Change{attention(d.body, "Pipedrive deal %s changed without a stage_id", quote(id))}, 0
	}
	var at, event time.Time
	for _, f := range times {
		text, name := cur.get(f), f
		if f == "" {
			text, name = d.eventTime, d.eventField
		}
		if text == "" || f != "" && !at.IsZero() {
			continue
		}
		t, err := parseTime(text)
		if err != nil {
			return []Change{attention(d.body, "Pipedrive %s: %v", name, err)}, 0
		}
		if f == "" {
			event = t
		}
		if at.IsZero() {
			at = t
		}
	}
	key := "v2:" + d.eventID
	if d.eventID == "" {
		// No event id (v1, or a v2 body without its optional meta.id):
		// the change itself, so that two changes of one deal never share
		// a key, and a retry, or a later edit of a deal delivered without
		// previous, shares its change's. Its time is the event's, the most
		// precise, when previous says what this event changed.
		when := at
		if !d.created && !event.IsZero() {
			when = event
		}
		key = "deal:" + id + ":" + field + ":" + from + ">" + to + ":" + timeKey(when)
		if when.IsZero() {
			// Not even a time: the deal as it is now, which a retry
			// repeats and the next change alters.
			key += hashWithout(cur)
		}
	}
	// A value that is not a number is left out rather than refusing the
	// stage change: the worker asks the API when it needs one.
	value, _ := parseValue(cur.get("value"))
	return []Change{{
		Key:        key,
		Body:       bytes.Clone(bytes.TrimSpace(d.body)),
		ObjectID:   id,
		StageID:    to,
		OccurredAt: at,
		PersonID:   cur.get("person_id"),
		Value:      value,
		Currency:   cur.get("currency"),
	}}, 0
}

// timeKey is a time as a key writes it; "" for none.
func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func bodyHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
