package crmtest

import (
	"encoding/json"
	"strconv"
	"time"
)

// HubSpotDealStage is the body of a HubSpot app webhook delivery of one
// event: deal dealID moved to stageID at at. A numeric dealID is sent as
// a JSON number, as HubSpot does.
func HubSpotDealStage(portalID int, dealID, stageID string, at time.Time) []byte {
	var objectID any = dealID
	if _, err := strconv.ParseInt(dealID, 10, 64); err == nil {
		objectID = json.Number(dealID)
	}
	return mustJSON([]any{struct {
		EventID          int64  `json:"eventId"`
		SubscriptionID   int    `json:"subscriptionId"`
		PortalID         int    `json:"portalId"`
		AppID            int    `json:"appId"`
		OccurredAt       int64  `json:"occurredAt"`
		SubscriptionType string `json:"subscriptionType"`
		AttemptNumber    int    `json:"attemptNumber"`
		ObjectID         any    `json:"objectId"`
		PropertyName     string `json:"propertyName"`
		PropertyValue    string `json:"propertyValue"`
		ChangeSource     string `json:"changeSource"`
		SourceID         string `json:"sourceId"`
	}{at.UnixMilli() % 1e9, 1234, portalID, 54321, at.UnixMilli(), "deal.propertyChange", 0, objectID,
		"dealstage", stageID, "CRM_UI", "userId:45678"}})
}

// PipedriveV2StageChange is the body of a Pipedrive webhooks v2 delivery:
// deal dealID moved from prevStageID to stageID at at, eventID its
// meta.id (the idempotency key). personID 0 is none.
func PipedriveV2StageChange(dealID, stageID, prevStageID, personID int, value float64, currency string, at time.Time, eventID string) []byte {
	return mustJSON(map[string]any{
		"meta": map[string]any{
			"action": "change", "entity": "deal", "entity_id": strconv.Itoa(dealID), "id": eventID,
			"company_id": "8087566", "correlation_id": "c-" + eventID, "is_bulk_edit": false,
			"timestamp": at.UTC().Format(time.RFC3339Nano), "type": "general", "user_id": "12415231",
			"version": "2.0", "webhook_id": "4710827", "webhook_owner_id": "12094821",
			"change_source": "app", "attempt": 1, "host": "example.pipedrive.com",
		},
		"data": map[string]any{
			"id": dealID, "title": "Deal " + strconv.Itoa(dealID), "value": value, "currency": currency,
			"status": "open", "pipeline_id": 1, "stage_id": stageID, "person_id": nullable(personID),
			"update_time": at.UTC().Format(time.RFC3339), "custom_fields": map[string]any{},
		},
		"previous": map[string]any{"stage_id": prevStageID},
	})
}

// PipedriveV1StageChange is the body of a Pipedrive webhooks v1
// delivery (updated.deal): deal dealID moved from prevStageID to stageID
// at at. Its idempotency key is made of the webhook, the deal and at in
// microseconds. personID 0 is none.
func PipedriveV1StageChange(dealID, stageID, prevStageID, personID int, value float64, currency string, at time.Time) []byte {
	deal := func(stage int) map[string]any {
		return map[string]any{"id": dealID, "title": "Deal " + strconv.Itoa(dealID), "value": value, "currency": currency,
			"status": "open", "pipeline_id": 1, "stage_id": stage, "person_id": nullable(personID)}
	}
	return mustJSON(map[string]any{
		"v": 1, "matches_filters": map[string]any{"current": []any{}}, "retry": 0, "event": "updated.deal",
		"meta": map[string]any{
			"v": 1, "action": "updated", "object": "deal", "id": dealID, "company_id": 8087566, "user_id": 12415231,
			"host": "example.pipedrive.com", "timestamp": at.Unix(), "timestamp_micro": at.UnixMicro(),
			"permitted_user_ids": []int{12415231}, "trans_pending": false, "is_bulk_update": false,
			"pipedrive_service_name": false, "webhook_id": "4710827", "change_source": "app",
		},
		"current": deal(stageID), "previous": deal(prevStageID),
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
