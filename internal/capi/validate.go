package capi

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/normalize"
)

// Limits Validate applies.
const (
	// MaxAge is how far back event_time may be, 7 days in Meta's
	// documentation: one older event makes Meta refuse the whole request
	// (100/2804003).
	MaxAge = 7 * 24 * time.Hour
	// MaxFutureSkew is how far ahead of the send time event_time may be.
	// Meta rejects future times without publishing the tolerance, so this
	// only forgives small clock differences.
	MaxFutureSkew = time.Minute
	// MaxEventNameLen is the longest event_name Validate lets through
	// [unverified: CAPI publishes no limit; the Pixel's is 50 for custom events].
	MaxEventNameLen = 100
)

// Reasons of the problems callers act on.
const (
	ReasonTooOld = "older than 7 days"
	ReasonFuture = "in the future"
)

// Invalid is one reason Meta would refuse an event: the field (Meta's name,
// "user_data.em" style inside objects) and why.
type Invalid struct {
	Field, Reason string
}

func (e *Invalid) Error() string { return e.Field + ": " + e.Reason }

// Expired reports whether the event is older than 7 days: it can never be
// sent and should be marked expired.
func (e *Invalid) Expired() bool { return e.Field == "event_time" && e.Reason == ReasonTooOld }

// Future reports whether the event is dated ahead of the send time: it is
// not broken, only early, and can be sent once its time has come.
func (e *Invalid) Future() bool { return e.Field == "event_time" && e.Reason == ReasonFuture }

func invalid(field, reason string) *Invalid { return &Invalid{Field: field, Reason: reason} }

// hashedKeys are the user_data keys Meta's documentation wants as SHA-256
// hex; the others (client IP address, user agent, fbc, fbp, lead_id, ...)
// go unhashed.
var hashedKeys = []string{
	normalize.FieldEmail, normalize.FieldPhone, normalize.FieldFirstName, normalize.FieldLastName,
	normalize.FieldCity, normalize.FieldState, normalize.FieldZip, normalize.FieldCountry,
	normalize.FieldGender, normalize.FieldDateOfBirth, normalize.FieldExternalID,
}

// identityKeys can each match an event to a person on their own.
var identityKeys = []string{
	normalize.FieldEmail, normalize.FieldPhone, normalize.FieldExternalID, normalize.FieldFBC, normalize.FieldFBP,
	"lead_id", "ctwa_clid", "subscription_id", "fb_login_id", "madid", "anon_id", "page_scoped_user_id",
}

// messagingEvents are the event names business_messaging accepts
// [unverified: Meta's Business Messaging CAPI page as quoted by integrators;
// the Conversions API reference is silent].
var messagingEvents = map[string]bool{
	"LeadSubmitted": true, "QualifiedLead": true, "Purchase": true, "AddToCart": true,
	"InitiateCheckout": true, "ViewContent": true, "OrderCreated": true, "OrderShipped": true,
	"OrderDelivered": true, "OrderCanceled": true, "OrderReturned": true, "CartAbandoned": true,
	"RatingProvided": true, "ReviewProvided": true,
}

// Validate says why Meta would refuse this one event, or nil. now is the send
// time. The answer is an *Invalid, the first problem found; the time checks
// come first, so an expired event always reports Expired.
func Validate(e ServerEvent, now time.Time) error {
	if inv := validate(e, now); inv != nil {
		return inv
	}
	return nil
}

func validate(e ServerEvent, now time.Time) *Invalid {
	if inv := checkTime(e.EventTime, now); inv != nil {
		return inv
	}
	return validateContent(e, userDataOf(e))
}

// CheckTime says why Meta would refuse an event dated eventTime (Unix
// seconds) when sent at now, or nil: the part of Validate that depends on
// the send time.
func CheckTime(eventTime int64, now time.Time) error {
	if inv := checkTime(eventTime, now); inv != nil {
		return inv
	}
	return nil
}

func checkTime(eventTime int64, now time.Time) *Invalid {
	switch age := now.Unix() - eventTime; {
	case eventTime <= 0:
		return invalid("event_time", "missing")
	case age > int64(MaxAge/time.Second):
		return invalid("event_time", ReasonTooOld)
	case -age > int64(MaxFutureSkew/time.Second):
		return invalid("event_time", ReasonFuture)
	}
	return nil
}

// userData is what validation reads of an event's user_data: the value
// of a key and whether the event carries it. A ServerEvent's map is one
// (mapUserData); Check reads a lead's keys without building the map
// (keysUserData).
type userData interface {
	get(key string) (any, bool)
}

// mapUserData is a built event's user_data.
type mapUserData map[string]any

func (m mapUserData) get(key string) (any, bool) {
	v, ok := m[key]
	return v, ok
}

// userDataOf is e's user_data for validation; nil when e has none.
func userDataOf(e ServerEvent) userData {
	if e.UserData == nil {
		return nil
	}
	return mapUserData(e.UserData)
}

// keysUserData is the user_data Build makes of a lead's keys and Meta lead
// id (buildUserData), read without making it: a hashed key reads as its
// hash, which validation takes as it takes the one-element list Build
// sends.
type keysUserData struct {
	keys   *normalize.Keys
	leadID string // trimmed
}

func (u keysUserData) get(key string) (any, bool) {
	if key == "lead_id" {
		if u.leadID == "" {
			return nil, false
		}
		return leadID(u.leadID), true
	}
	if v, _, present := u.keys.Field(key); present {
		return v, true
	}
	return nil, false
}

// validateContent is everything Validate checks but the time, of e with
// the user data ud.
func validateContent(e ServerEvent, ud userData) *Invalid {
	switch name := e.EventName; {
	case strings.TrimSpace(name) == "":
		return invalid("event_name", "missing")
	case len([]rune(name)) > MaxEventNameLen:
		return invalid("event_name", "longer than "+strconv.Itoa(MaxEventNameLen)+" characters")
	}
	if strings.TrimSpace(e.EventID) == "" {
		return invalid("event_id", "missing")
	}
	if !actionSources[e.ActionSource] {
		if e.ActionSource == "" {
			return invalid("action_source", "missing")
		}
		return invalid("action_source", "unknown value "+strconv.Quote(e.ActionSource))
	}
	if ud == nil {
		return invalid("user_data", "missing")
	}
	if inv := validateUserData(ud); inv != nil {
		return inv
	}
	switch e.ActionSource {
	case ActionWebsite:
		if strings.TrimSpace(e.EventSourceURL) == "" {
			return invalid("event_source_url", "required for website events")
		}
		if ua, _ := ud.get(normalize.FieldUserAgent); str(ua) == "" {
			return invalid("user_data.client_user_agent", "required for website events")
		}
	case ActionBusinessMessaging:
		if e.MessagingChannel == "" {
			return invalid("messaging_channel", "required for business_messaging events")
		}
		if !messagingEvents[e.EventName] {
			return invalid("event_name", "business_messaging accepts only Meta's messaging events "+
				"(LeadSubmitted, QualifiedLead, Purchase, ...), not "+strconv.Quote(e.EventName))
		}
	}
	if !hasIdentity(ud, e.ActionSource) {
		return invalid("user_data", "no customer information key (em, ph, external_id, fbc, fbp, lead_id"+
			", or client_ip_address with client_user_agent on a website event)")
	}
	if inv := validateCustomData(e); inv != nil {
		return inv
	}
	return validateLDU(e)
}

func validateUserData(ud userData) *Invalid {
	for _, k := range hashedKeys {
		v, ok := ud.get(k)
		if !ok {
			continue
		}
		vals, ok := strs(v)
		if !ok || len(vals) == 0 {
			return invalid("user_data."+k, "not a string or a list of strings")
		}
		for _, s := range vals {
			if !normalize.IsHashed(s) {
				return invalid("user_data."+k, "not a SHA-256 hash (raw contact data is never sent)")
			}
		}
	}
	if v, ok := ud.get(normalize.FieldFBC); ok {
		s := str(v)
		if got, rebuilt, ok := normalize.FBC(s, "", time.Time{}); !ok || rebuilt || got != s {
			return invalid("user_data.fbc", "malformed (want fb.<index>.<ms>.<fbclid>[.<appendix>])")
		}
	}
	if v, ok := ud.get(normalize.FieldFBP); ok {
		s := str(v)
		if got, ok := normalize.FBP(s); !ok || got != s {
			return invalid("user_data.fbp", "malformed (want fb.<index>.<ms>.<random>[.<appendix>])")
		}
	}
	if v, ok := ud.get(normalize.FieldClientIP); ok {
		if _, ok := normalize.ClientIP(str(v)); !ok {
			return invalid("user_data.client_ip_address", "not a public IP address")
		}
	}
	if v, ok := ud.get("lead_id"); ok {
		if s := digits(v); len(s) < 15 || len(s) > 17 {
			return invalid("user_data.lead_id", "not a 15-17 digit Meta lead id")
		}
	}
	return nil
}

func hasIdentity(ud userData, action string) bool {
	has := func(k string) bool {
		v, _ := ud.get(k)
		return present(v)
	}
	for _, k := range identityKeys {
		if has(k) {
			return true
		}
	}
	return action == ActionWebsite && has(normalize.FieldClientIP) && has(normalize.FieldUserAgent)
}

func validateCustomData(e ServerEvent) *Invalid {
	cd := e.CustomData
	value, hasValue := cd["value"]
	if hasValue {
		f, ok := number(value)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return invalid("custom_data.value", "not a number")
		}
	}
	cur, hasCurrency := cd["currency"]
	if hasCurrency {
		if s, ok := cur.(string); !ok || !country.ValidCurrency(strings.ToUpper(s)) {
			return invalid("custom_data.currency", "not an ISO 4217 currency code")
		}
	}
	if e.EventName == "Purchase" {
		if !hasValue {
			return invalid("custom_data.value", "required for Purchase")
		}
		if !hasCurrency {
			return invalid("custom_data.currency", "required for Purchase")
		}
	}
	return nil
}

func validateLDU(e ServerEvent) *Invalid {
	for _, o := range e.DataProcessingOptions {
		if o != "LDU" {
			return invalid("data_processing_options", "unknown option "+strconv.Quote(o))
		}
	}
	return nil
}

// str is v when it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

// strs reads a user_data value: a string or a list of strings.
func strs(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []string:
		return v, true
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func present(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(v) != ""
	case []string:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return true
}

// number reads a JSON number however it was decoded or built.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// digits is the decimal text of an integer-valued lead_id, else "".
func digits(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case json.Number:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case int:
		s = strconv.Itoa(v)
	case float64:
		// A payload decoded without UseNumber; only the length matters here.
		s = strconv.FormatFloat(v, 'f', -1, 64)
	}
	if !normalize.AllDigits(s) {
		return ""
	}
	return s
}
