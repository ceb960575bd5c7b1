package googletest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/country"
)

// Request is an ingest request as the fake decodes it: a field it does not
// know refuses the request, as Google's JSON parser does.
type Request struct {
	Destinations []Destination `json:"destinations"`
	Events       []Event       `json:"events"`
	Consent      *Consent      `json:"consent,omitempty"`
	ValidateOnly bool          `json:"validateOnly,omitempty"`
	Encoding     string        `json:"encoding,omitempty"`
}

// Destination is one conversion action of an account.
type Destination struct {
	Reference            string          `json:"reference,omitempty"`
	OperatingAccount     *ProductAccount `json:"operatingAccount,omitempty"`
	LoginAccount         *ProductAccount `json:"loginAccount,omitempty"`
	ProductDestinationID string          `json:"productDestinationId"`
}

// ProductAccount is a Google Ads account.
type ProductAccount struct {
	AccountType string `json:"accountType"`
	AccountID   string `json:"accountId"`
}

// Consent is a request's or an event's consent.
type Consent struct {
	AdUserData        string `json:"adUserData,omitempty"`
	AdPersonalization string `json:"adPersonalization,omitempty"`
}

// Event is one event of a request.
type Event struct {
	DestinationReferences []string       `json:"destinationReferences,omitempty"`
	TransactionID         string         `json:"transactionId,omitempty"`
	EventTimestamp        string         `json:"eventTimestamp,omitempty"`
	EventSource           string         `json:"eventSource,omitempty"`
	ConversionValue       *float64       `json:"conversionValue,omitempty"`
	Currency              string         `json:"currency,omitempty"`
	AdIdentifiers         *AdIdentifiers `json:"adIdentifiers,omitempty"`
	UserData              *UserData      `json:"userData,omitempty"`
	Consent               *Consent       `json:"consent,omitempty"`
}

// AdIdentifiers are an event's click ids.
type AdIdentifiers struct {
	SessionAttributes string `json:"sessionAttributes,omitempty"`
	GCLID             string `json:"gclid,omitempty"`
	GBRAID            string `json:"gbraid,omitempty"`
	WBRAID            string `json:"wbraid,omitempty"`
}

// UserData are an event's user identifiers.
type UserData struct {
	UserIdentifiers []UserIdentifier `json:"userIdentifiers"`
}

// UserIdentifier holds exactly one of its fields.
type UserIdentifier struct {
	EmailAddress string   `json:"emailAddress,omitempty"`
	PhoneNumber  string   `json:"phoneNumber,omitempty"`
	Address      *Address `json:"address,omitempty"`
}

// Address is matched whole: names hashed, region and postal code plain.
type Address struct {
	GivenName  string `json:"givenName"`
	FamilyName string `json:"familyName"`
	RegionCode string `json:"regionCode"`
	PostalCode string `json:"postalCode"`
}

// refusal is why the fake refuses a request; index is the event's, -1
// for the request's own fields.
type refusal struct {
	status                int
	reason, domain, field string
	message               string
	index                 int
}

// invalid is a 400 INVALID_ARGUMENT of event i (-1: of the request).
func invalid(i int, reason, field, format string, args ...any) *refusal {
	return &refusal{status: http.StatusBadRequest, reason: reason, field: field, index: i, message: fmt.Sprintf(format, args...)}
}

func decode(raw []byte) (Request, *refusal) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, invalid(-1, "INVALID_ARGUMENT", "", "Invalid JSON payload received. %v", err)
	}
	return req, nil
}

var eventSources = []string{"WEB", "APP", "IN_STORE", "PHONE", "OTHER"}

// check says why Google would refuse the whole request, nil when it would
// take it.
func check(req Request) *refusal {
	switch {
	case len(req.Destinations) == 0:
		return invalid(-1, "REQUIRED_FIELD_MISSING", "destinations", "Destinations are required.")
	case len(req.Destinations) > MaxDestinations:
		return invalid(-1, "TOO_MANY_DESTINATIONS", "destinations", "At most %d destinations are allowed per request.", MaxDestinations)
	case req.Encoding != "" && req.Encoding != "HEX" && req.Encoding != "BASE64":
		return invalid(-1, "INVALID_ENUM_VALUE", "encoding", "Invalid value for encoding: %q", req.Encoding)
	case len(req.Events) == 0:
		return invalid(-1, "REQUIRED_FIELD_MISSING", "events", "Events are required.")
	case len(req.Events) > MaxBatch:
		return invalid(-1, "TOO_MANY_EVENTS", "events", "At most %d events are allowed per request.", MaxBatch)
	}
	if f := checkConsent(-1, "consent", req.Consent); f != nil {
		return f
	}
	refs := map[string]bool{}
	for j, d := range req.Destinations {
		if f := checkDestination(j, d); f != nil {
			return f
		}
		if d.Reference != "" && refs[d.Reference] {
			return invalid(-1, "DUPLICATE_DESTINATION_REFERENCE", fmt.Sprintf("destinations[%d].reference", j),
				"Two destinations have the reference %q.", d.Reference)
		}
		refs[d.Reference] = true
	}
	for i, e := range req.Events {
		if f := checkEvent(i, e, req.Encoding, refs); f != nil {
			return f
		}
	}
	return nil
}

func checkDestination(j int, d Destination) *refusal {
	field := fmt.Sprintf("destinations[%d]", j)
	a := d.OperatingAccount
	switch {
	case a == nil || a.AccountID == "":
		return invalid(-1, "REQUIRED_FIELD_MISSING", field+".operatingAccount", "The operating account is required.")
	case a.AccountType != "GOOGLE_ADS":
		return invalid(-1, "INVALID_ENUM_VALUE", field+".operatingAccount.accountType", "Invalid account type %q.", a.AccountType)
	case a.AccountID != OperatingAccount:
		return &refusal{status: http.StatusForbidden, reason: "PERMISSION_DENIED", index: -1,
			message: fmt.Sprintf("The caller does not have permission to account %s.", a.AccountID)}
	case d.LoginAccount != nil && d.LoginAccount.AccountID != LoginAccount:
		return &refusal{status: http.StatusForbidden, reason: "PERMISSION_DENIED", index: -1,
			message: fmt.Sprintf("The caller does not have permission through login account %s.", d.LoginAccount.AccountID)}
	case !slices.Contains(ConversionActions, d.ProductDestinationID):
		return invalid(-1, "INVALID_CONVERSION_ACTION_ID", field+".productDestinationId",
			"Conversion action %q is not valid for account %s.", d.ProductDestinationID, a.AccountID)
	}
	return nil
}

func checkConsent(i int, field string, c *Consent) *refusal {
	if c == nil {
		return nil
	}
	for _, v := range []string{c.AdUserData, c.AdPersonalization} {
		if v != "" && v != "CONSENT_GRANTED" && v != "CONSENT_DENIED" {
			return invalid(i, "INVALID_ENUM_VALUE", field, "Invalid consent value %q.", v)
		}
	}
	return nil
}

// checkEvent says what Google refuses of event i.
func checkEvent(i int, e Event, encoding string, refs map[string]bool) *refusal {
	at := func(field string) string { return fmt.Sprintf("events[%d].%s", i, field) }
	switch {
	case e.TransactionID == "":
		return invalid(i, "REQUIRED_FIELD_MISSING", at("transactionId"), "The transaction id is required.")
	case e.EventTimestamp == "":
		return invalid(i, "REQUIRED_FIELD_MISSING", at("eventTimestamp"), "The event timestamp is required.")
	case !rfc3339(e.EventTimestamp):
		return invalid(i, "INVALID_FORMAT", at("eventTimestamp"), "Invalid timestamp %q.", e.EventTimestamp)
	case e.EventSource != "" && !slices.Contains(eventSources, e.EventSource):
		return invalid(i, "INVALID_ENUM_VALUE", at("eventSource"), "Invalid event source %q.", e.EventSource)
	case e.Currency != "" && !country.ValidCurrency(e.Currency):
		return invalid(i, "INVALID_CURRENCY_CODE", at("currency"), "The currency code %q is not supported.", e.Currency)
	}
	for _, ref := range e.DestinationReferences {
		if !refs[ref] {
			return invalid(i, "INVALID_DESTINATION", at("destinationReferences"), "No destination has the reference %q.", ref)
		}
	}
	if f := checkConsent(i, at("consent"), e.Consent); f != nil {
		return f
	}
	ad := e.AdIdentifiers
	if ad != nil && ad.GBRAID != "" && ad.WBRAID != "" {
		return invalid(i, "INVALID_EVENT", at("adIdentifiers"), "gbraid and wbraid cannot both be set.")
	}
	if e.UserData != nil {
		if f := checkUserData(i, at("userData"), *e.UserData, encoding); f != nil {
			return f
		}
	}
	if (e.UserData == nil || len(e.UserData.UserIdentifiers) == 0) && (ad == nil || ad.GCLID == "" && ad.GBRAID == "" && ad.WBRAID == "") {
		return invalid(i, "NO_IDENTIFIERS_PROVIDED", at("userData"), "The event has no user identifiers or ad identifiers.")
	}
	return nil
}

func checkUserData(i int, field string, u UserData, encoding string) *refusal {
	switch {
	case encoding == "":
		return invalid(-1, "REQUIRED_FIELD_MISSING", "encoding", "The encoding is required to send user data.")
	case len(u.UserIdentifiers) > MaxIdentifiers:
		return invalid(i, "TOO_MANY_USER_IDENTIFIERS", field+".userIdentifiers",
			"At most %d user identifiers are allowed per event.", MaxIdentifiers)
	}
	for j, id := range u.UserIdentifiers {
		at := fmt.Sprintf("%s.userIdentifiers[%d]", field, j)
		set := 0
		for _, ok := range []bool{id.EmailAddress != "", id.PhoneNumber != "", id.Address != nil} {
			if ok {
				set++
			}
		}
		if set != 1 {
			return invalid(i, "INVALID_FORMAT", at, "A user identifier must have exactly one of emailAddress, phoneNumber and address.")
		}
		hashes := [][2]string{{"emailAddress", id.EmailAddress}, {"phoneNumber", id.PhoneNumber}}
		if a := id.Address; a != nil {
			switch {
			case a.GivenName == "" || a.FamilyName == "" || a.RegionCode == "" || a.PostalCode == "":
				return invalid(i, "REQUIRED_FIELD_MISSING", at+".address", "An address needs givenName, familyName, regionCode and postalCode.")
			case len(a.RegionCode) != 2 || strings.Trim(a.RegionCode, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "":
				return invalid(i, "INVALID_COUNTRY_CODE", at+".address.regionCode", "Invalid region code %q.", a.RegionCode)
			}
			hashes = [][2]string{{"address.givenName", a.GivenName}, {"address.familyName", a.FamilyName}}
		}
		for _, h := range hashes {
			if h[1] != "" && !sha256Encoded(h[1], encoding) {
				return invalid(i, "INVALID_SHA256_FORMAT", at+"."+h[0], "The value is not a SHA-256 hash in %s.", encoding)
			}
		}
	}
	return nil
}

// sha256Encoded reports whether s is a SHA-256 hash in the encoding: 64
// lowercase hex digits, or the base64 of 32 bytes.
func sha256Encoded(s, encoding string) bool {
	if encoding == "BASE64" {
		b, err := base64.StdEncoding.DecodeString(s)
		return err == nil && len(b) == 32
	}
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

func rfc3339(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
