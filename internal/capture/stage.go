package capture

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
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

// ValidStage is a stage change that passed validation: the key its lead
// is found by and the change to record.
type ValidStage struct {
	Key    store.LeadKey
	Change models.StageChange
}

// DecodeStage reads one JSON stage change, as Decode reads a lead.
func DecodeStage(r io.Reader) (StageRequest, *Error) {
	var req StageRequest
	if err := decodeJSON(r, &req); err != nil {
		return StageRequest{}, err
	}
	return req, nil
}

// maxChangeID is the longest change_id, in bytes.
const maxChangeID = 200

// Validate checks a decoded stage change for acc (whose default country
// reads a phone without a country code). A NUL character or a malformed
// occurred_at is a 400, the rest 422 with the field named.
func (r StageRequest) Validate(acc models.Account, now time.Time) (ValidStage, *Error) {
	var v ValidStage
	texts := []struct {
		field string
		value *string
	}{
		{"lead.external_id", r.Lead.ExternalID}, {"lead.meta_lead_id", r.Lead.MetaLeadID}, {"lead.email", r.Lead.Email},
		{"lead.phone", r.Lead.Phone}, {"stage", &r.Stage}, {"occurred_at", &r.OccurredAt}, {"currency", &r.Currency},
		{"change_id", r.ChangeID},
	}
	for _, t := range texts {
		if t.value == nil {
			continue
		}
		if err := checkText(t.field, t.field, *t.value); err != nil {
			return v, err
		}
		if len(*t.value) > maxShort {
			return v, invalid(t.field, "%s is longer than %d bytes", t.field, maxShort)
		}
	}
	key, err := r.Lead.key(acc)
	if err != nil {
		return v, err
	}
	v.Key = key

	stage := strings.TrimSpace(r.Stage)
	if msg := name.StageProblem(stage); msg != "" {
		return v, invalid("stage", "stage: %s", msg)
	}
	if strings.TrimSpace(r.OccurredAt) == "" {
		return v, invalid("occurred_at", "occurred_at is required: when the lead reached the stage, an RFC 3339 time like 2026-12-01T14:03:00Z")
	}
	at, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.OccurredAt))
	if perr != nil {
		return v, badRequest("invalid_occurred_at", "occurred_at", "occurred_at must be an RFC 3339 time like 2026-12-01T14:03:00Z")
	}
	if at.After(now.Add(5 * time.Minute)) {
		return v, invalid("occurred_at", "occurred_at is in the future")
	}
	c := models.StageChange{AccountID: acc.ID, Stage: stage, OccurredAt: at.UTC(), Value: r.Value}
	if r.Value != nil && (math.IsNaN(*r.Value) || *r.Value < 0 || *r.Value > rule.MaxValue) {
		return v, invalid("value", "value must be a number between 0 and %.0f", float64(rule.MaxValue))
	}
	if cur := strings.ToUpper(strings.TrimSpace(r.Currency)); cur != "" {
		if !country.ValidCurrency(cur) {
			return v, invalid("currency", "currency must be an ISO 4217 code like USD or EUR, not %q", r.Currency)
		}
		c.Currency = cur
	}
	if r.ChangeID != nil {
		id := strings.TrimSpace(*r.ChangeID)
		switch {
		case id == "":
			return v, invalid("change_id", "change_id must not be empty; leave it out instead")
		case len(id) > maxChangeID:
			return v, invalid("change_id", "change_id is longer than %d bytes", maxChangeID)
		case strings.IndexFunc(id, name.Invisible) >= 0:
			return v, invalid("change_id", "change_id holds an invisible or control character")
		}
		c.ChangeID = &id
	}
	v.Change = c
	return v, nil
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
