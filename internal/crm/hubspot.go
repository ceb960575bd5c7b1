package crm

import (
	"encoding/json"
	"slices"
	"strings"
)

// hubspotActions are the actions of HubSpot's webhook subscription types
// (<object>.<action>, e.g. contact.creation, deal.propertyChange,
// object.propertyChange): an event of one of them that is no deal's stage
// change is acknowledged and ignored; any other type needs attention.
var hubspotActions = []string{"creation", "deletion", "propertyChange", "merge", "restore", "associationChange",
	"privacyDeletion", "newMessage"}

func parseHubSpot(body []byte) ([]Change, int) {
	els, err := elements(body)
	if err != nil {
		return []Change{attention(body, "HubSpot posts an array of events or one deal record: %v", err)}, 0
	}
	var changes []Change
	ignored := 0
	for _, el := range els {
		m := members(el)
		typ := string(get(m, "subscriptionType"))
		if typ == "" {
			typ = string(get(m, "eventType"))
		}
		if typ == "" {
			// Not an app webhook's event: a workflow's "Send a webhook"
			// action posts the deal record itself.
			changes = append(changes, hubspotRecord(el, m))
			continue
		}
		ch, ok := hubspotEvent(el, m, typ)
		if !ok {
			ignored++
			continue
		}
		changes = append(changes, ch)
	}
	return changes, ignored
}

// hubspotEvent reads one event of a Webhooks API delivery: a change of a
// deal's dealstage, as deal.propertyChange or as object.propertyChange on
// a deal (objectTypeId 0-3). It reports false for an event of a known type
// that is no stage change.
func hubspotEvent(el json.RawMessage, m map[string]json.RawMessage, typ string) (Change, bool) {
	object, action, _ := strings.Cut(typ, ".")
	if object == "" || !slices.Contains(hubspotActions, action) {
		return attention(el, "HubSpot event type %s is not one leadsignal reads: subscribe to deal.propertyChange on dealstage", quote(typ)), true
	}
	deal := object == "deal" || object == "object" && get(m, "objectTypeId") == "0-3"
	if action != "propertyChange" || !deal || get(m, "propertyName") != "dealstage" {
		return Change{}, false
	}
	portal, id, stage, when := get(m, "portalId"), get(m, "objectId"), get(m, "propertyValue"), get(m, "occurredAt")
	switch {
	case id == "":
		return attention(el, "a HubSpot dealstage change without objectId (the deal id)"), true
	case stage == "":
		return attention(el, "a HubSpot dealstage change of deal %s without propertyValue (the stage id)", quote(string(id))), true
	}
	at, err := parseTime(string(when))
	if err != nil {
		return attention(el, "HubSpot occurredAt: %v", err), true
	}
	// eventId is not unique (HubSpot says so): the key is what the change
	// is, its deal, stage and time (docs/crm.md).
	key := strings.Join([]string{string(portal), string(id), "dealstage", string(stage), string(when)}, ":")
	if when == "" {
		// No time to tell two moves to one stage apart: the event's own
		// content without its attempt number, which a retry changes.
		key += ":" + hashWithout(m, "attemptNumber")
	}
	return Change{Key: key, Body: el, ObjectID: string(id), StageID: string(stage), OccurredAt: at}, true
}

// hubspotRecord reads a deal record a HubSpot workflow's "Send a webhook"
// action posts (docs/crm.md), in any of its shapes: the object as
// HubSpot's objects API returns it ({"id", "properties": {"dealstage":
// "closedwon", ...}}), a legacy workflow's ({"dealId" or "objectId",
// "properties": {"dealstage": {"value", "timestamp", ...}}}), or the
// chosen properties flat ({"hs_object_id", "dealstage", ...}).
func hubspotRecord(el json.RawMessage, m map[string]json.RawMessage) Change {
	props := members(m["properties"])
	// prop is a property as the record has it: under properties (its
	// value, or a legacy {"value", "timestamp"}'s value), else flat.
	prop := func(name string) scalar {
		if v := get(props, name); v != "" {
			return v
		}
		return get(m, name)
	}
	stage := prop("dealstage")
	id := firstOf(get(m, "objectId"), get(m, "dealId"), get(m, "id"), prop("hs_object_id"))
	switch {
	case stage == "" && id == "":
		return attention(el, "neither a HubSpot webhook event (no subscriptionType) nor a deal record (no dealstage, no deal id)")
	case stage == "":
		return attention(el, "HubSpot deal %s has no dealstage: add the deal stage to the properties the workflow's webhook sends", quote(string(id)))
	case id == "":
		return attention(el, "a HubSpot deal record with a dealstage but no objectId, dealId, id or hs_object_id")
	}
	// The time it entered the stage: a legacy property's timestamp, else
	// HubSpot's own record of it, else the record's last change.
	var legacy struct {
		Timestamp scalar `json:"timestamp"`
	}
	raw, ok := props["dealstage"]
	if !ok {
		raw = m["dealstage"]
	}
	if isObject(raw) {
		_ = json.Unmarshal(raw, &legacy) // a timestamp of an odd type is none
	}
	when := firstOf(legacy.Timestamp, prop("hs_v2_date_entered_current_stage"), prop("hs_date_entered_"+string(stage)),
		prop("hs_lastmodifieddate"), get(m, "updatedAt"))
	at, err := parseTime(string(when))
	if err != nil {
		return attention(el, "HubSpot deal %s: the time of its stage: %v", quote(string(id)), err)
	}
	value, err := parseValue(string(prop("amount")))
	if err != nil {
		value = nil // an amount HubSpot's API gives again, or not at all
	}
	key := "workflow:" + strings.Join([]string{string(get(m, "portalId")), string(id), string(stage), string(when)}, ":")
	if when == "" {
		key += ":" + bodyHash(el)
	}
	return Change{Key: key, Body: el, ObjectID: string(id), StageID: string(stage), OccurredAt: at,
		Value: value, Currency: string(prop("deal_currency_code"))}
}

// firstOf is the first of vs that is not empty.
func firstOf(vs ...scalar) scalar {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// hashWithout is the SHA-256 of an object's members but those named:
// the same for two copies of an event that differ only there.
func hashWithout(m map[string]json.RawMessage, names ...string) string {
	kept := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if !slices.Contains(names, k) {
			kept[k] = v
		}
	}
	b, _ := json.Marshal(kept) // raw JSON members, keys sorted: cannot fail
	return bodyHash(b)
}
