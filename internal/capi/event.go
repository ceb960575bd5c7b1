package capi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// EventID is the deterministic event id (docs/api.md, "Event ids"):
// hex(sha256(pixelID + "|" + eventName + "|" + recordKey)). The same lead,
// event and dataset always give the same id, so Meta (and the outbox's
// UNIQUE(dataset_id, event_id)) absorb every resend as a duplicate.
func EventID(pixelID, eventName, recordKey string) string {
	sum := sha256.Sum256([]byte(pixelID + "|" + eventName + "|" + recordKey))
	return hex.EncodeToString(sum[:])
}

// RecordKey is the lead's external_id when it has one, else its own id as
// decimal. The external_id is used exactly as stored, so that a website can
// compute the same event id for its browser pixel's eventID.
func RecordKey(l models.Lead) string {
	if l.ExternalID != nil && strings.TrimSpace(*l.ExternalID) != "" {
		return *l.ExternalID
	}
	// Namespaced, so lead #57 and a lead whose external_id is "57" never
	// share an event id.
	return "lead:" + strconv.FormatInt(l.ID, 10)
}

// StageRecordKey is the record key of a stage event: "<lead key>:<stage>",
// one event per lead and stage however often the CRM repeats it, and
// "<lead key>:<stage>:<changeKey>" for a repeatable mapping (changeKey is the
// stage change's own key; "" for a mapping that is not repeatable). The
// stage is lower-cased: stages are matched ignoring case, so a booking
// rule and a mapping of "Booked" make one event.
func StageRecordKey(l models.Lead, stage, changeKey string) string {
	k := RecordKey(l) + ":" + strings.ToLower(stage)
	if changeKey != "" {
		k += ":" + changeKey
	}
	return k
}

// Action sources Meta accepts, as Meta's documentation lists them.
const (
	ActionWebsite           = "website"
	ActionApp               = "app"
	ActionEmail             = "email"
	ActionPhoneCall         = "phone_call"
	ActionChat              = "chat"
	ActionPhysicalStore     = "physical_store"
	ActionSystemGenerated   = "system_generated"
	ActionBusinessMessaging = "business_messaging"
	ActionOther             = "other"
)

// ActionSources lists the action sources Meta accepts, for a send rule's
// override.
var ActionSources = []string{ActionWebsite, ActionSystemGenerated, ActionPhoneCall, ActionBusinessMessaging, ActionEmail,
	ActionChat, ActionApp, ActionPhysicalStore, ActionOther}

var actionSources = func() map[string]bool {
	m := map[string]bool{}
	for _, a := range ActionSources {
		m[a] = true
	}
	return m
}()

// ServerEvent is one event as Meta's /events endpoint takes it.
type ServerEvent struct {
	EventName      string         `json:"event_name"`
	EventTime      int64          `json:"event_time"`
	EventID        string         `json:"event_id"`
	ActionSource   string         `json:"action_source"`
	EventSourceURL string         `json:"event_source_url,omitempty"`
	UserData       map[string]any `json:"user_data"`
	CustomData     map[string]any `json:"custom_data,omitempty"`
	// MessagingChannel is "whatsapp" for business_messaging events.
	MessagingChannel string `json:"messaging_channel,omitempty"`
	// DataProcessingOptions is ["LDU"] when Limited Data Use applies and []
	// when it does not (sent, not omitted: Meta's documentation makes an
	// empty list the explicit opt-out). Nil is omitted; Build never leaves it
	// nil.
	DataProcessingOptions []string `json:"data_processing_options,omitzero"`
	// DataProcessingOptionsCountry and DataProcessingOptionsState go with
	// LDU: 1 and 1000 for California, 0 and 0 to let Meta geolocate.
	DataProcessingOptionsCountry *int `json:"data_processing_options_country,omitempty"`
	DataProcessingOptionsState   *int `json:"data_processing_options_state,omitempty"`
}

// ParseEvent decodes a stored payload (as Build and json.Marshal made it)
// back into a ServerEvent. Numbers stay json.Number, so a 17-digit lead_id
// keeps every digit.
func ParseEvent(payload []byte) (ServerEvent, error) {
	var e ServerEvent
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if err := d.Decode(&e); err != nil {
		return ServerEvent{}, err
	}
	return e, nil
}

// BatchEvent finds the event with eventID in a request's "data" array, as
// send logs kept it before events kept their JSON after the send (migration
// 0010), and returns its JSON as sent, or nil.
func BatchEvent(data []byte, eventID string) json.RawMessage {
	var events []json.RawMessage
	if json.Unmarshal(data, &events) != nil {
		return nil
	}
	for _, e := range events {
		var id struct {
			EventID string `json:"event_id"`
		}
		if json.Unmarshal(e, &id) == nil && id.EventID == eventID {
			return e
		}
	}
	return nil
}
