package pinterest

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
)

// Limits and defaults of Pinterest's Conversions API.
const (
	// MaxBatch is the most events one request may carry (Pinterest's API
	// reference: data has 1 to 1000 items).
	MaxBatch = 1000
	// DefaultBaseURL is where the zero Client sends.
	DefaultBaseURL = "https://api.pinterest.com"
)

// Pinterest's action sources leadsignal sends.
const (
	ActionWeb     = "web"
	ActionOffline = "offline"
)

// CustomEvent is Pinterest's name of every event it has no name of its own
// for: qualified leads, bookings, custom stages.
const CustomEvent = "custom"

// OptOutLDP is custom_data.opt_out_type of an event under Limited Data Use:
// Pinterest's Limited Data Processing.
const OptOutLDP = "LDP"

// ClickIDField is the lead's custom field that holds Pinterest's click id,
// the landing page's epik parameter.
const ClickIDField = "epik"

// DefaultEvents maps our event names (Meta's standard names) to Pinterest's.
// EventName sends every name missing here as CustomEvent.
var DefaultEvents = map[string]string{
	"Lead":                 "lead",
	"CompleteRegistration": "signup",
	"Subscribe":            "subscribe",
	"Purchase":             "checkout",
	"Search":               "search",
	"ViewContent":          "page_visit",
	"AddToCart":            "add_to_cart",
	"InitiateCheckout":     "initiate_checkout",
	"AddPaymentInfo":       "add_payment_info",
	"AddToWishlist":        "add_to_wishlist",
	"PageView":             "page_visit",
}

// EventName is Pinterest's name of our event ours: DefaultEvents' when it
// has one, else CustomEvent (Schedule, Contact, QualifiedLead and custom
// stage names have no Pinterest name).
func EventName(ours string) string {
	if name, ok := DefaultEvents[ours]; ok {
		return name
	}
	return CustomEvent
}

// event is one element of the request's data, in Pinterest's field order.
type event struct {
	EventName      string      `json:"event_name"`
	ActionSource   string      `json:"action_source"`
	EventTime      int64       `json:"event_time"`
	EventID        string      `json:"event_id"`
	EventSourceURL string      `json:"event_source_url,omitempty"`
	OptOut         bool        `json:"opt_out"`
	UserData       userData    `json:"user_data"`
	CustomData     *customData `json:"custom_data,omitempty"`
}

// userData holds SHA-256 hashes, each as a one-element list, and the plain
// click id, IP address and user agent.
type userData struct {
	Email       []string `json:"em,omitempty"`
	Phone       []string `json:"ph,omitempty"`
	ExternalID  []string `json:"external_id,omitempty"`
	FirstName   []string `json:"fn,omitempty"`
	LastName    []string `json:"ln,omitempty"`
	City        []string `json:"ct,omitempty"`
	State       []string `json:"st,omitempty"`
	Zip         []string `json:"zp,omitempty"`
	Country     []string `json:"country,omitempty"`
	Gender      []string `json:"ge,omitempty"`
	DateOfBirth []string `json:"db,omitempty"`
	ClientIP    string   `json:"client_ip_address,omitempty"`
	UserAgent   string   `json:"client_user_agent,omitempty"`
	ClickID     string   `json:"click_id,omitempty"`
}

type customData struct {
	Value      string `json:"value,omitempty"`
	Currency   string `json:"currency,omitempty"`
	OrderID    string `json:"order_id,omitempty"`
	OptOutType string `json:"opt_out_type,omitempty"`
}

// Prepare is one event's JSON as Pinterest takes it inside data[], named
// eventName (Pinterest's name, see EventName). err is a *capi.Invalid when
// Pinterest would refuse the event; body is its JSON all the same, for the
// send log. It does not judge the event's age: only the send time can.
func Prepare(in capi.BuildInput, eventName string) (body []byte, err error) {
	e := build(in, eventName)
	body, err = json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if inv := check(e); inv != nil {
		return body, inv
	}
	return body, nil
}

func build(in capi.BuildInput, eventName string) event {
	e := event{
		EventName:    eventName,
		ActionSource: ActionOffline,
		EventTime:    in.Event.EventTime.Unix(),
		EventID:      in.Event.EventID,
		UserData:     buildUserData(in),
	}
	if capi.ActionSource(in.Lead.Source, in.Event.Origin) == capi.ActionWebsite {
		e.ActionSource = ActionWeb
		e.EventSourceURL = strings.TrimSpace(in.Lead.EventSourceURL)
	}
	if in.Event.EventTime.IsZero() {
		e.EventTime = 0 // written as 0, not as Go's year 1 in Unix seconds
	}
	cd := buildCustomData(in)
	if cd != (customData{}) {
		e.CustomData = &cd
	}
	return e
}

func buildUserData(in capi.BuildInput) userData {
	k := in.Keys
	return userData{
		Email:       one(k.EmailHash(normalize.Pinterest)),
		Phone:       one(k.PhoneHash(normalize.Pinterest)),
		ExternalID:  one(k.ExternalID.Hash),
		FirstName:   one(k.FirstName.Hash),
		LastName:    one(k.LastName.Hash),
		City:        one(k.City.Hash),
		State:       one(k.State.Hash),
		Zip:         one(k.Zip.Hash),
		Country:     one(k.Country.Hash),
		Gender:      one(k.Gender.Hash),
		DateOfBirth: one(k.DateOfBirth.Hash),
		ClientIP:    k.ClientIP,
		UserAgent:   k.UserAgent,
		ClickID:     destination.CustomFields(in.Lead.Fields)[ClickIDField],
	}
}

// one is a hash as the one-element list Pinterest takes; nil for none.
func one(hash string) []string {
	if hash == "" {
		return nil
	}
	return []string{hash}
}

func buildCustomData(in capi.BuildInput) customData {
	var cd customData
	if v := in.Event.Value; v != nil {
		cd.Value = value(*v)
		cd.Currency = capi.Currency(in)
		// Pinterest deduplicates on event_id and recommends order_id too.
		cd.OrderID = in.Event.EventID
	}
	if capi.LimitedDataUse(in.Dataset.LDU, in.Lead) {
		cd.OptOutType = OptOutLDP
	}
	return cd
}

// value is a value as Pinterest takes it: a decimal string, which it parses
// to a double. NaN and infinities are written as they are, for check to
// refuse.
func value(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// check says why Pinterest would refuse e, nil when it would take it; its
// time aside, which only the send can judge.
func check(e event) *capi.Invalid {
	switch {
	case strings.TrimSpace(e.EventName) == "":
		return &capi.Invalid{Field: "event_name", Reason: "missing"}
	case strings.TrimSpace(e.EventID) == "":
		return &capi.Invalid{Field: "event_id", Reason: "missing"}
	case e.EventTime <= 0:
		return &capi.Invalid{Field: "event_time", Reason: "missing"}
	}
	// A phone, names or an external id alone do not do: Pinterest needs
	// one of em, hashed_maids (apps only) or the IP address with the user
	// agent.
	ud := e.UserData
	if len(ud.Email) == 0 && (ud.ClientIP == "" || ud.UserAgent == "") {
		return &capi.Invalid{Field: "user_data",
			Reason: "Pinterest needs an email, or both the IP address and the browser's user agent"}
	}
	if cd := e.CustomData; cd != nil {
		if cd.Value != "" {
			if f, err := strconv.ParseFloat(cd.Value, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return &capi.Invalid{Field: "custom_data.value", Reason: "not a number"}
			}
		}
		if cd.Currency != "" && !country.ValidCurrency(cd.Currency) {
			return &capi.Invalid{Field: "custom_data.currency", Reason: "not an ISO 4217 currency code"}
		}
	}
	return nil
}
