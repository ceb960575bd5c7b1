package google

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
)

// Limits and defaults of the Data Manager API (google/ads/datamanager/v1,
// ingestion_service.proto and user_data.proto).
const (
	// MaxBatch is the most events one request may carry.
	MaxBatch = 2000
	// MaxIdentifiers is the most user identifiers one event may carry.
	MaxIdentifiers = 10
	// MaxDestinations is the most destinations (conversion actions) one
	// request may name.
	MaxDestinations = 10
	// DefaultBaseURL is where the Data Manager API is.
	DefaultBaseURL = "https://datamanager.googleapis.com"
	// DefaultTokenURL is Google's OAuth 2.0 token endpoint.
	DefaultTokenURL = "https://oauth2.googleapis.com/token"
)

// Event sources Prepare writes (Data Manager's EventSource enum).
const (
	sourceWeb   = "WEB"
	sourcePhone = "PHONE"
	sourceOther = "OTHER"
)

// ReasonNoIdentifiers is the Reason of an event Google cannot match to
// anyone: Data Manager refuses it with NO_IDENTIFIERS_PROVIDED.
const ReasonNoIdentifiers = "no email, phone, full name with country and postal code, " +
	"or Google click id (gclid, gbraid, wbraid) to match the lead by"

// event is one element of an ingest request's events[], as Data Manager's
// JSON (lowerCamelCase) names its fields.
type event struct {
	DestinationReferences []string       `json:"destinationReferences,omitempty"`
	TransactionID         string         `json:"transactionId,omitempty"`
	EventTimestamp        string         `json:"eventTimestamp,omitempty"`
	EventSource           string         `json:"eventSource,omitempty"`
	ConversionValue       *float64       `json:"conversionValue,omitempty"`
	Currency              string         `json:"currency,omitempty"`
	AdIdentifiers         *adIdentifiers `json:"adIdentifiers,omitempty"`
	UserData              *userData      `json:"userData,omitempty"`
}

type adIdentifiers struct {
	GCLID  string `json:"gclid,omitempty"`
	GBRAID string `json:"gbraid,omitempty"`
	WBRAID string `json:"wbraid,omitempty"`
}

type userData struct {
	UserIdentifiers []userIdentifier `json:"userIdentifiers"`
}

// userIdentifier holds exactly one of its fields.
type userIdentifier struct {
	EmailAddress string   `json:"emailAddress,omitempty"`
	PhoneNumber  string   `json:"phoneNumber,omitempty"`
	Address      *address `json:"address,omitempty"`
}

// address is matched all at once: names hashed, region and postal code
// plain.
type address struct {
	GivenName  string `json:"givenName"`
	FamilyName string `json:"familyName"`
	RegionCode string `json:"regionCode"`
	PostalCode string `json:"postalCode"`
}

// Prepare builds one event's JSON as it goes in the events[] of an ingest
// request, routed to conversionAction (a Google Ads conversion action id)
// by its destinationReferences, so that one request can carry events of
// several conversion actions. err is a *capi.Invalid when Google would
// refuse the event; the JSON is returned all the same, for the send log.
// It does not check the event's age: the dispatcher does.
func Prepare(in capi.BuildInput, conversionAction string) ([]byte, error) {
	e, inv := build(in, conversionAction)
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if inv != nil {
		return body, inv
	}
	return body, nil
}

// build makes the event and the first reason Google would refuse it.
func build(in capi.BuildInput, conversionAction string) (event, *capi.Invalid) {
	e := event{
		TransactionID: in.Event.EventID,
		EventSource:   eventSource(in),
		AdIdentifiers: clickID(in.Lead.Fields),
		UserData:      identifiers(in.Keys),
	}
	if conversionAction != "" {
		e.DestinationReferences = []string{conversionAction}
	}
	if !in.Event.EventTime.IsZero() {
		e.EventTimestamp = in.Event.EventTime.UTC().Format(time.RFC3339)
	}
	badValue := false
	if v := in.Event.Value; v != nil {
		// JSON has no NaN: such a value is left out, and the event refused.
		badValue = math.IsNaN(*v) || math.IsInf(*v, 0)
		if !badValue {
			e.ConversionValue = v
			e.Currency = capi.Currency(in)
		}
	}
	var inv *capi.Invalid
	switch {
	case conversionAction == "":
		inv = &capi.Invalid{Field: "conversion_action",
			Reason: "no Google Ads conversion action is mapped to " + strconv.Quote(in.Event.EventName)}
	case !normalize.AllDigits(conversionAction):
		inv = &capi.Invalid{Field: "conversion_action",
			Reason: strconv.Quote(conversionAction) + " is not a Google Ads conversion action id (digits only)"}
	case strings.TrimSpace(e.TransactionID) == "":
		inv = &capi.Invalid{Field: "transaction_id", Reason: "missing"}
	case e.EventTimestamp == "":
		inv = &capi.Invalid{Field: "event_timestamp", Reason: "missing"}
	case e.UserData == nil && e.AdIdentifiers == nil:
		inv = &capi.Invalid{Field: "user_data", Reason: ReasonNoIdentifiers}
	case e.Currency != "" && !country.ValidCurrency(e.Currency):
		inv = &capi.Invalid{Field: "currency", Reason: strconv.Quote(e.Currency) + " is not an ISO 4217 currency code"}
	case badValue:
		inv = &capi.Invalid{Field: "conversion_value", Reason: "not a number"}
	}
	return e, inv
}

// eventSource is WEB for a website lead's events and PHONE for a phone
// lead's, as capi.ActionSource decides them for Meta (a send rule's
// override included); OTHER for the rest, stage events among them: the
// stage changed in the CRM.
func eventSource(in capi.BuildInput) string {
	action := capi.ActionSource(in.Lead.Source, in.Event.Origin)
	if in.Event.ActionSource != "" {
		action = in.Event.ActionSource
	}
	switch action {
	case capi.ActionWebsite:
		return sourceWeb
	case capi.ActionPhoneCall:
		return sourcePhone
	}
	return sourceOther
}

// clickID is the lead's Google click id from its custom fields: gclid, or
// else gbraid, or else wbraid, never two (Google refuses gbraid with
// wbraid). nil when it has none; custom fields that are not a JSON object
// of strings count as none.
func clickID(fields string) *adIdentifiers {
	f := destination.CustomFields(fields)
	switch {
	case f["gclid"] != "":
		return &adIdentifiers{GCLID: f["gclid"]}
	case f["gbraid"] != "":
		return &adIdentifiers{GBRAID: f["gbraid"]}
	case f["wbraid"] != "":
		return &adIdentifiers{WBRAID: f["wbraid"]}
	}
	return nil
}

// identifiers are the lead's user identifiers as Google hashes them; nil
// when it has none.
func identifiers(k normalize.Keys) *userData {
	var ids []userIdentifier
	if h := k.EmailHash(normalize.Google); h != "" {
		ids = append(ids, userIdentifier{EmailAddress: h})
	}
	if h := k.PhoneHash(normalize.Google); h != "" {
		ids = append(ids, userIdentifier{PhoneNumber: h})
	}
	if a := addressOf(k); a != nil {
		ids = append(ids, userIdentifier{Address: a})
	}
	if len(ids) == 0 {
		return nil
	}
	if len(ids) > MaxIdentifiers {
		ids = ids[:MaxIdentifiers]
	}
	return &userData{UserIdentifiers: ids}
}

// addressOf is the lead's address identifier, which Google matches only
// whole: nil unless the first and last names, the country and the postal
// code are all there. A country or postal code that came hashed cannot be
// sent plain, as Google wants them.
func addressOf(k normalize.Keys) *address {
	region := strings.ToUpper(k.Country.Normalized)
	zip := k.Zip.Normalized
	if !k.FirstName.Present() || !k.LastName.Present() || len(region) != 2 ||
		zip == "" || normalize.IsHashed(zip) {
		return nil
	}
	return &address{GivenName: k.FirstName.Hash, FamilyName: k.LastName.Hash, RegionCode: region, PostalCode: zip}
}
