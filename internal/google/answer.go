package google

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/destination"
)

// apiError is what Send reads of a REST error body:
// {"error":{"code","message","status","details":[...]}}.
type apiError struct {
	Message string
	Status  string
	// Reasons are the distinct reasons of the details, in order.
	Reasons   []string
	RequestID string
}

// has reports whether any of e's reasons is in set.
func (e apiError) has(set map[string]bool) bool {
	for _, r := range e.Reasons {
		if set[r] {
			return true
		}
	}
	return false
}

// refusedReasons refuse a request for a reason no event of it causes:
// splitting the batch cannot help. Some need a person in Google Ads
// (enhanced conversions for leads off, terms not signed), some a fix to
// the destination's settings (a conversion action that is not the
// account's).
var refusedReasons = map[string]bool{
	"DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS": true,
	"DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED":      true,
	"DESTINATION_ACCOUNT_DATA_POLICY_PROHIBITS_ENHANCED_CONVERSIONS": true,
	"TERMS_AND_CONDITIONS_NOT_SIGNED":                                true,
	"INVALID_CONVERSION_ACTION_ID":                                   true,
	"INVALID_CONVERSION_ACTION_TYPE":                                 true,
	"INVALID_DESTINATION":                                            true,
	"DUPLICATE_DESTINATION_REFERENCE":                                true,
	"TOO_MANY_EVENTS":                                                true,
	"TOO_MANY_DESTINATIONS":                                          true,
}

// transient statuses and reasons are Google failing, not the request.
var transient = map[string]bool{
	"RESOURCE_EXHAUSTED": true,
	"DEADLINE_EXCEEDED":  true,
	"UNAVAILABLE":        true,
	"INTERNAL":           true,
	"INTERNAL_ERROR":     true,
}

// answer maps Google's reply to the dispatcher's Answer.
func answer(status int, raw []byte, n int, secrets []string) destination.Answer {
	a := destination.Answer{HTTPStatus: status, Body: destination.LogBody(raw, secrets)}
	if status/100 == 2 {
		var ok struct {
			RequestID string `json:"requestId"`
		}
		_ = json.Unmarshal(raw, &ok) // validateOnly answers no requestId
		a.Verdict, a.Received, a.RequestID = destination.Accepted, n, ok.RequestID
		return a
	}
	e := parseError(raw)
	a.Verdict = verdict(status, e)
	a.RequestID = e.RequestID
	a.Message = string(destination.LogBody([]byte(e.words(status)), secrets))
	return a
}

// verdict is what the dispatcher does after a refusal: Google failing
// (429, 5xx) waits; a reason no event causes pauses the destination;
// refused credentials pause it until new ones are saved; an invalid
// argument is an event's (Google refuses the whole request for one bad
// record), which the dispatcher finds by splitting the batch.
func verdict(status int, e apiError) destination.Verdict {
	switch {
	case status == http.StatusTooManyRequests || status >= 500 || transient[e.Status] || e.has(transient):
		return destination.Unavailable
	case e.has(refusedReasons):
		return destination.Refused
	case status == http.StatusUnauthorized || e.Status == "UNAUTHENTICATED":
		return destination.AuthRefused
	case status == http.StatusForbidden && e.Status == "PERMISSION_DENIED":
		return destination.AuthRefused
	case status == http.StatusBadRequest && e.Status == "INVALID_ARGUMENT":
		return destination.EventRefused
	}
	return destination.Refused
}

// words are the refusal as a person reads it:
// "Google 400 INVALID_ARGUMENT (INVALID_SHA256_FORMAT): <Google's message>".
func (e apiError) words(status int) string {
	var b strings.Builder
	b.WriteString("Google " + strconv.Itoa(status))
	if e.Status != "" {
		b.WriteString(" " + e.Status)
	}
	var reasons []string
	for _, r := range e.Reasons {
		if r != e.Status {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) > 0 {
		b.WriteString(" (" + strings.Join(reasons, ", ") + ")")
	}
	msg := e.Message
	if msg == "" && e.Status == "" {
		msg = http.StatusText(status)
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// parseError reads a REST error body. The layout of Data Manager's
// details is not documented, so a reason is taken from any detail that
// has one: google.rpc.ErrorInfo's reason, or a BadRequest field
// violation's. Some Google front ends wrap the body in a one-element list.
func parseError(raw []byte) apiError {
	type body struct {
		Error struct {
			Message string            `json:"message"`
			Status  string            `json:"status"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	var b body
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		var list []body
		if json.Unmarshal(t, &list) == nil && len(list) > 0 {
			b = list[0]
		}
	} else {
		_ = json.Unmarshal(t, &b) // a body that is not JSON leaves the HTTP status alone
	}
	e := apiError{Message: b.Error.Message, Status: b.Error.Status}
	add := func(r string) {
		if r != "" && !slices.Contains(e.Reasons, r) {
			e.Reasons = append(e.Reasons, r)
		}
	}
	for _, raw := range b.Error.Details {
		var d struct {
			Reason          string `json:"reason"`
			RequestID       string `json:"requestId"`
			FieldViolations []struct {
				Reason string `json:"reason"`
			} `json:"fieldViolations"`
		}
		if json.Unmarshal(raw, &d) != nil {
			continue
		}
		add(d.Reason)
		for _, v := range d.FieldViolations {
			add(v.Reason)
		}
		if e.RequestID == "" {
			e.RequestID = d.RequestID
		}
	}
	return e
}
