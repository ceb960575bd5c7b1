package crm

import (
	"encoding/json"
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
