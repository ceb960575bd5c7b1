package tiktok

import (
	"encoding/json"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
)

// defaultEvents are TikTok's names of our (Meta's standard) event names
// where they differ or where TikTok has the same standard event; any other
// name goes as it is, as a custom event, which a CRM event set maps to a
// funnel stage in TikTok's Events Manager.
var defaultEvents = map[string]string{
	"Lead":                 "Lead",
	"CompleteRegistration": "CompleteRegistration",
	"Contact":              "Contact",
	"Schedule":             "Schedule",
	"SubmitApplication":    "ApplicationApproval",
	"FindLocation":         "FindLocation",
	"CustomizeProduct":     "CustomizeProduct",
	"Purchase":             "Purchase",
	"AddPaymentInfo":       "AddPaymentInfo",
	"AddToCart":            "AddToCart",
	"AddToWishlist":        "AddToWishlist",
	"InitiateCheckout":     "InitiateCheckout",
	"Search":               "Search",
	"Subscribe":            "Subscribe",
	"ViewContent":          "ViewContent",
}

// EventName is TikTok's name of our event name ours.
func EventName(ours string) string {
	if n, ok := defaultEvents[ours]; ok {
		return n
	}
	return ours
}

// event is one event as TikTok takes it in a request's data.
type event struct {
	Event          string      `json:"event"`
	EventTime      int64       `json:"event_time"`
	EventID        string      `json:"event_id"`
	User           user        `json:"user"`
	Properties     *properties `json:"properties,omitempty"`
	Page           *page       `json:"page,omitempty"`
	LimitedDataUse bool        `json:"limited_data_use"`
}

// user holds the match keys: email, phone and external id hashed as TikTok
// wants them (arrays, as TikTok's integrators send them), the rest plain.
type user struct {
	Email      []string `json:"email,omitempty"`
	Phone      []string `json:"phone,omitempty"`
	ExternalID []string `json:"external_id,omitempty"`
	TTCLID     string   `json:"ttclid,omitempty"`
	TTP        string   `json:"ttp,omitempty"`
	IP         string   `json:"ip,omitempty"`
	UserAgent  string   `json:"user_agent,omitempty"`
}

type properties struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency,omitempty"`
}

type page struct {
	URL string `json:"url"`
}

// Prepare builds one event's JSON for TikTok, named name (EventName of
// the event's, or the destination's own). err is a *capi.Invalid, with the
// JSON all the same, when TikTok could not use the event: it carries no
// key TikTok matches people by. The event's time is the dispatcher's to
// check.
func Prepare(in capi.BuildInput, name string) ([]byte, error) {
	k := in.Keys
	e := event{
		Event:     name,
		EventTime: in.Event.EventTime.Unix(),
		EventID:   in.Event.EventID,
		User: user{
			Email:      one(k.EmailHash(normalize.TikTok)),
			Phone:      one(k.PhoneHash(normalize.TikTok)),
			ExternalID: one(k.ExternalID.Hash),
			IP:         k.ClientIP,
			UserAgent:  k.UserAgent,
		},
		LimitedDataUse: capi.LimitedDataUse(in.Dataset.LDU, in.Lead),
	}
	fields := destination.CustomFields(in.Lead.Fields)
	e.User.TTCLID, e.User.TTP = fields["ttclid"], fields["ttp"]
	if v := in.Event.Value; v != nil {
		e.Properties = &properties{Value: *v, Currency: capi.Currency(in)}
	}
	if capi.ActionSource(in.Lead.Source, in.Event.Origin) == capi.ActionWebsite {
		if u := strings.TrimSpace(in.Lead.EventSourceURL); u != "" {
			e.Page = &page{URL: u}
		}
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(name) == "":
		return body, &capi.Invalid{Field: "event", Reason: "no TikTok event name"}
	case e.User.Email == nil && e.User.Phone == nil && e.User.ExternalID == nil && e.User.TTCLID == "" && e.User.TTP == "" && e.User.IP == "":
		return body, &capi.Invalid{Field: "user", Reason: "TikTok needs an email, a phone, an external id, a TikTok click id or an IP address"}
	}
	return body, nil
}

func one(hash string) []string {
	if hash == "" {
		return nil
	}
	return []string{hash}
}
