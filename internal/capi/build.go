package capi

import (
	"encoding/json"
	"strings"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

// DefaultCRMName is lead_event_source when the account names no CRM.
const DefaultCRMName = "leadsignal"

// Custom data keys leadsignal sets besides value and currency.
const (
	// LeadTypePartial is custom_data.lead_type of a partial lead's events.
	LeadTypePartial = "partial"
	// EventSourceCRM is custom_data.event_source of Conversion Leads events.
	EventSourceCRM = "crm"
)

// BuildInput is what an event is built from.
type BuildInput struct {
	Account models.Account
	Dataset models.Dataset
	Lead    models.Lead
	Keys    normalize.Keys // the lead's stored match keys
	Event   models.Event   // EventName, EventID, EventTime, Value, Currency, Origin, ActionSource
}

// Build turns one outbox event of a lead into the ServerEvent Meta takes.
// It copies the event's stored EventID (it cannot recompute a stage event's
// record key) and needs no clock; Validate checks the result.
func Build(in BuildInput) ServerEvent {
	e := buildEvent(in)
	e.UserData = in.Keys.UserData()
	if id := strings.TrimSpace(in.Lead.MetaLeadID); id != "" {
		e.UserData["lead_id"] = leadID(id)
	}
	return e
}

// buildEvent is Build without the user_data, which Check reads from the
// keys instead (keysUserData).
func buildEvent(in BuildInput) ServerEvent {
	action := ActionSource(in.Lead.Source, in.Event.Origin)
	if in.Event.ActionSource != "" {
		// The send rule's override.
		action = in.Event.ActionSource
	}
	e := ServerEvent{
		EventName:    in.Event.EventName,
		EventTime:    in.Event.EventTime.Unix(),
		EventID:      in.Event.EventID,
		ActionSource: action,
	}
	if action == ActionWebsite {
		e.EventSourceURL = strings.TrimSpace(in.Lead.EventSourceURL)
	}
	if action == ActionBusinessMessaging {
		e.MessagingChannel = "whatsapp"
	}
	e.CustomData = customData(in)
	setLDU(&e, in.Dataset.LDU, in.Lead)
	return e
}

// ActionSource is the action_source of a lead's event. Stage events are
// system_generated whatever the lead's source: the stage changed in the CRM.
// Other events follow the lead's source: website -> website, instant_form
// and crm -> system_generated, whatsapp -> business_messaging, phone ->
// phone_call. An empty or unknown source is website, the ingest default.
func ActionSource(s models.Source, origin string) string {
	if origin == models.OriginStage {
		return ActionSystemGenerated
	}
	switch s {
	case models.SourceInstantForm, models.SourceCRM:
		return ActionSystemGenerated
	case models.SourceWhatsApp:
		return ActionBusinessMessaging
	case models.SourcePhone:
		return ActionPhoneCall
	}
	return ActionWebsite
}

// leadID is Meta's lead id as a JSON integer written digit for digit (the
// payload spec types it integer; a float64 would lose the 17th digit). A
// value that is not all digits stays a string, which Validate refuses:
// json.Number would make the whole batch fail to encode.
func leadID(s string) any {
	if normalize.AllDigits(s) {
		return json.Number(s)
	}
	return s
}

func customData(in BuildInput) map[string]any {
	cd := map[string]any{}
	if v := in.Event.Value; v != nil {
		cd["value"] = *v
		if cur := Currency(in); cur != "" {
			cd["currency"] = cur
		}
	}
	if in.Lead.Partial {
		cd["lead_type"] = LeadTypePartial
	}
	if in.Lead.Source == models.SourceInstantForm || in.Lead.Source == models.SourceCRM || in.Event.Origin == models.OriginStage {
		cd["event_source"] = EventSourceCRM
		name := strings.TrimSpace(in.Account.CRMName)
		if name == "" {
			name = in.Event.LeadEventSource
		}
		if name == "" {
			name = DefaultCRMName
		}
		cd["lead_event_source"] = name
	}
	if len(cd) == 0 {
		return nil
	}
	return cd
}

// Limited Data Use codes (Meta's documentation: data processing options).
const (
	LDUCountryGeolocate = 0
	LDUStateGeolocate   = 0
	LDUCountryUS        = 1
	LDUStateCalifornia  = 1000
)

// Currency is the currency of a valued event: its own, else its account's,
// in capitals; every platform sends it so.
func Currency(in BuildInput) string {
	cur := strings.ToUpper(strings.TrimSpace(in.Event.Currency))
	if cur == "" {
		cur = strings.ToUpper(strings.TrimSpace(in.Account.Currency))
	}
	return cur
}

// LimitedDataUse reports whether a destination's Limited Data Use setting
// covers a lead: always, or for a lead from California. Meta's data
// processing options, TikTok's limited_data_use and Pinterest's LDP opt-out
// all follow it.
func LimitedDataUse(ldu models.LDU, l models.Lead) bool {
	return ldu == models.LDUAlways || ldu == models.LDUCalifornia && FromCalifornia(l)
}

// setLDU sets the data processing options of the dataset's LDU setting:
// off (or unknown) -> []; always -> ["LDU"] with 0/0 so Meta geolocates;
// california -> ["LDU"] with 1/1000 for a lead from California, else [].
func setLDU(e *ServerEvent, ldu models.LDU, l models.Lead) {
	switch {
	case ldu == models.LDUAlways:
		e.DataProcessingOptions = []string{"LDU"}
		e.DataProcessingOptionsCountry = new(LDUCountryGeolocate)
		e.DataProcessingOptionsState = new(LDUStateGeolocate)
	case ldu == models.LDUCalifornia && FromCalifornia(l):
		e.DataProcessingOptions = []string{"LDU"}
		e.DataProcessingOptionsCountry = new(LDUCountryUS)
		e.DataProcessingOptionsState = new(LDUStateCalifornia)
	default:
		e.DataProcessingOptions = []string{}
	}
}

// FromCalifornia reports whether a lead is from California: its country is
// the US (a code or an English name) or absent, and its state is CA or
// California, in any case.
func FromCalifornia(l models.Lead) bool {
	if c := strings.TrimSpace(l.Country); c != "" {
		if cc, ok := country.Code(c); !ok || cc != "US" {
			return false
		}
	}
	st, ok := normalize.State(l.State, "US")
	return ok && st == "ca"
}
