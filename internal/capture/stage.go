package capture

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// StageRequest is the body of POST /api/v1/stages (docs/api.md, "Stage
// changes").
type StageRequest struct {
	Lead       StageLead `json:"lead"`
	Stage      string    `json:"stage"`
	OccurredAt string    `json:"occurred_at"`
	Value      *float64  `json:"value"`
	Currency   string    `json:"currency"`
	ChangeID   *string   `json:"change_id"`
}

// StageLead names the lead of a stage change by one of its keys; when
// several are given, the first in this order decides.
type StageLead struct {
	ID         *int64  `json:"id"`
	ExternalID *string `json:"external_id"`
	MetaLeadID *string `json:"meta_lead_id"`
	Email      *string `json:"email"`
	Phone      *string `json:"phone"`
}

// DecodeStage reads one JSON stage change, as Decode reads a lead.
func DecodeStage(r io.Reader) (StageRequest, *Error) {
	var req StageRequest
	if err := decodeJSON(r, &req); err != nil {
		return StageRequest{}, err
	}
	return req, nil
}

// Change decodes a stage change for acc (whose default country reads a
// phone without a country code) into what the recorder takes: the key of
// its lead and its time. A NUL character or a malformed occurred_at is a
// 400, a missing lead key 422; every rule of accepting the change is the
// recorder's (internal/decide, accept.go), the lengths of the stage, the
// currency and the change_id among them. The fields read here, the lead
// keys and the time, are as long as a lead's own fields may be.
func (r StageRequest) Change(acc models.Account) (decide.Change, *Error) {
	texts := []struct {
		field string
		value *string
		read  bool // read here, not only handed to the recorder
	}{
		{"lead.external_id", r.Lead.ExternalID, true}, {"lead.meta_lead_id", r.Lead.MetaLeadID, true},
		{"lead.email", r.Lead.Email, true}, {"lead.phone", r.Lead.Phone, true}, {"occurred_at", &r.OccurredAt, true},
		{"stage", &r.Stage, false}, {"currency", &r.Currency, false}, {"change_id", r.ChangeID, false},
	}
	for _, t := range texts {
		if t.value == nil {
			continue
		}
		if err := checkText(t.field, t.field, *t.value); err != nil {
			return decide.Change{}, err
		}
		if t.read && len(*t.value) > maxShort {
			return decide.Change{}, invalid(t.field, "%s is longer than %d bytes", t.field, maxShort)
		}
	}
	key, err := r.Lead.key(acc)
	if err != nil {
		return decide.Change{}, err
	}
	c := decide.Change{Keys: []store.LeadKey{key}, Stage: r.Stage, Value: r.Value, Currency: r.Currency, ChangeID: r.ChangeID}
	if at := strings.TrimSpace(r.OccurredAt); at != "" {
		t, perr := time.Parse(time.RFC3339Nano, at)
		if perr != nil {
			return decide.Change{}, badRequest("invalid_occurred_at", "occurred_at", "occurred_at must be an RFC 3339 time like 2026-12-01T14:03:00Z")
		}
		c.OccurredAt = t
	}
	return c, nil
}

// key is the lead key the request names: the first of id, external_id,
// meta_lead_id, email and phone that it gives. An email or phone is looked
// up by its match key's hash, normalised as capture normalises it.
func (l StageLead) key(acc models.Account) (store.LeadKey, *Error) {
	text := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	switch {
	case l.ID != nil:
		if *l.ID <= 0 {
			return store.LeadKey{}, invalid("lead.id", "lead.id must be a lead's id, a positive integer")
		}
		return store.LeadKey{Field: "id", Value: strconv.FormatInt(*l.ID, 10)}, nil
	case text(l.ExternalID) != "":
		return store.LeadKey{Field: "external_id", Value: text(l.ExternalID)}, nil
	case text(l.MetaLeadID) != "":
		if !metaLeadIDRE.MatchString(text(l.MetaLeadID)) {
			return store.LeadKey{}, invalid("lead.meta_lead_id", "lead.meta_lead_id must be Meta's 15 to 17 digit lead id")
		}
		return store.LeadKey{Field: "meta_lead_id", Value: text(l.MetaLeadID)}, nil
	case text(l.Email) != "":
		k := normalize.Normalize(normalize.Input{Email: text(l.Email)})
		if k.Email.Hash == "" {
			return store.LeadKey{}, invalid("lead.email", "lead.email is not an email address")
		}
		return store.LeadKey{Field: "email", Value: k.Email.Hash}, nil
	case text(l.Phone) != "":
		k := normalize.Normalize(normalize.Input{Phone: text(l.Phone), DefaultCountry: acc.DefaultCountry})
		if k.Phone.Hash == "" {
			return store.LeadKey{}, invalid("lead.phone", "lead.phone is not a phone number with a country code (or of the account's default country)")
		}
		return store.LeadKey{Field: "phone", Value: k.Phone.Hash}, nil
	}
	return store.LeadKey{}, invalid("lead", "lead must name the lead by one of id, external_id, meta_lead_id, email or phone")
}
