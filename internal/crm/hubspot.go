package crm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// hubspotEvent is one event of a HubSpot webhook delivery (an array of
// them). The type is subscriptionType in most deliveries, eventType in
// some of HubSpot's own examples.
type hubspotEvent struct {
	SubscriptionType string `json:"subscriptionType"`
	EventType        string `json:"eventType"`
	ObjectTypeID     scalar `json:"objectTypeId"`
	PortalID         scalar `json:"portalId"`
	ObjectID         scalar `json:"objectId"`
	PropertyName     string `json:"propertyName"`
	PropertyValue    scalar `json:"propertyValue"`
	OccurredAt       scalar `json:"occurredAt"`
}

// dealStage reports whether e is a change of a deal's stage: a
// deal.propertyChange, or an object.propertyChange on a deal (objectTypeId
// 0-3), of dealstage.
func (e hubspotEvent) dealStage() bool {
	typ := e.SubscriptionType
	if typ == "" {
		typ = e.EventType
	}
	if e.PropertyName != "dealstage" {
		return false
	}
	return typ == "deal.propertyChange" || typ == "object.propertyChange" && e.ObjectTypeID == "0-3"
}

func parseHubSpot(body []byte) ([]Change, int, error) {
	els, err := elements(body)
	if err != nil {
		return nil, 0, err
	}
	var changes []Change
	ignored := 0
	for i, el := range els {
		var e hubspotEvent
		if err := json.Unmarshal(el, &e); err != nil {
			return nil, 0, fmt.Errorf("hubspot event %d: %w", i, err)
		}
		if e.SubscriptionType == "" && e.EventType == "" {
			// Not an app webhook's event: a workflow's "Send a webhook"
			// action posts the deal record itself.
			ch, ok, err := hubspotRecord(el)
			if err != nil {
				return nil, 0, fmt.Errorf("hubspot record %d: %w", i, err)
			}
			if !ok {
				ignored++
				continue
			}
			changes = append(changes, ch)
			continue
		}
		if !e.dealStage() {
			ignored++
			continue
		}
		if e.ObjectID == "" || e.PropertyValue == "" {
			return nil, 0, fmt.Errorf("hubspot event %d: a dealstage change without objectId or propertyValue", i)
		}
		var at time.Time
		if e.OccurredAt != "" {
			if at, err = parseTime(string(e.OccurredAt)); err != nil {
				return nil, 0, fmt.Errorf("hubspot event %d: occurredAt: %w", i, err)
			}
		}
		changes = append(changes, Change{
			// eventId is not unique: HubSpot's idempotency key is
			// what the change is (docs/crm.md).
			Key:        strings.Join([]string{string(e.PortalID), string(e.ObjectID), e.PropertyName, string(e.PropertyValue), string(e.OccurredAt)}, ":"),
			Body:       el,
			ObjectID:   string(e.ObjectID),
			StageID:    string(e.PropertyValue),
			OccurredAt: at,
		})
	}
	return changes, ignored, nil
}

// hubspotProperty is a record's property: its value, written plain
// ("closedwon") or, in legacy workflow webhooks, as {"value", "timestamp"}.
type hubspotProperty struct {
	Value     scalar
	Timestamp scalar
}

func (p *hubspotProperty) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var v struct {
			Value     scalar `json:"value"`
			Timestamp scalar `json:"timestamp"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		p.Value, p.Timestamp = v.Value, v.Timestamp
		return nil
	}
	return json.Unmarshal(b, &p.Value)
}

// hubspotRecord reads a deal record a HubSpot workflow posts (docs/crm.md):
// the object as HubSpot's objects API returns it ({"id", "properties":
// {...}}), a legacy workflow webhook's ({"objectId", "properties":
// {"dealstage": {"value", "timestamp"}}}), or the chosen properties flat
// ({"hs_object_id", "dealstage", ...}). It reports false for a record
// without a deal stage: not a stage change.
func hubspotRecord(raw json.RawMessage) (Change, bool, error) {
	var r struct {
		ObjectID   scalar                     `json:"objectId"`
		ID         scalar                     `json:"id"`
		HSObjectID scalar                     `json:"hs_object_id"`
		PortalID   scalar                     `json:"portalId"`
		UpdatedAt  scalar                     `json:"updatedAt"`
		DealStage  *hubspotProperty           `json:"dealstage"`
		Properties map[string]hubspotProperty `json:"properties"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Change{}, false, err
	}
	prop := func(name string) hubspotProperty { return r.Properties[name] }
	stage := prop("dealstage")
	if r.DealStage != nil {
		stage = *r.DealStage
	}
	if stage.Value == "" {
		return Change{}, false, nil
	}
	id := firstOf(r.ObjectID, r.ID, r.HSObjectID, prop("hs_object_id").Value)
	if id == "" {
		return Change{}, false, errors.New("a deal record with a dealstage but no objectId, id or hs_object_id")
	}
	when := firstOf(stage.Timestamp, prop("hs_lastmodifieddate").Value, r.UpdatedAt)
	at, err := parseTime(string(when))
	if err != nil {
		return Change{}, false, err
	}
	value, err := parseValue(string(prop("amount").Value))
	if err != nil {
		value = nil // an amount HubSpot's API gives again, or not at all
	}
	key := "workflow:" + strings.Join([]string{string(r.PortalID), string(id), string(stage.Value), string(when)}, ":")
	if when == "" {
		key += ":" + bodyHash(raw)
	}
	return Change{Key: key, Body: raw, ObjectID: string(id), StageID: string(stage.Value), OccurredAt: at,
		Value: value, Currency: string(prop("deal_currency_code").Value)}, true, nil
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
