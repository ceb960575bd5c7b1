package setup

import (
	"encoding/json"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// A send rule's or stage mapping's value and currency, as the file writes
// them and as a stored rule keeps them.

// ValueSpec is a send rule's event value: a fixed number, written as one
// (250), or the lead field each lead's value is read from, written
// {"field": "fields.budget"}; for a stage mapping also the stage change's
// own value, written "from_change".
type ValueSpec struct {
	Fixed      float64
	Field      string
	FromChange bool
}

// fromChange is how the file writes a stage mapping's value or currency
// taken from the stage change.
const fromChange = "from_change"

// MarshalJSON writes a number, {"field": name}, or "from_change".
func (v ValueSpec) MarshalJSON() ([]byte, error) {
	if v.FromChange {
		return json.Marshal(fromChange)
	}
	if v.Field != "" {
		return json.Marshal(fieldRef{Field: v.Field})
	}
	return json.Marshal(v.Fixed)
}

// CurrencySpec is a send rule's currency: a fixed ISO 4217 code ("EUR"),
// or the lead field it is read from, written {"field": "fields.currency"};
// for a stage mapping also the stage change's own, written "from_change".
type CurrencySpec struct {
	Code       string
	Field      string
	FromChange bool
}

// MarshalJSON writes the code, {"field": name}, or "from_change".
func (c CurrencySpec) MarshalJSON() ([]byte, error) {
	if c.FromChange {
		return json.Marshal(fromChange)
	}
	if c.Field != "" {
		return json.Marshal(fieldRef{Field: c.Field})
	}
	return json.Marshal(c.Code)
}

// fieldRef is the JSON of a value or currency read from a lead field.
type fieldRef struct {
	Field string `json:"field"`
}

// cleanValue trims the field a value is read from.
func cleanValue(v *ValueSpec) *ValueSpec {
	if v == nil {
		return nil
	}
	c := *v
	c.Field = strings.TrimSpace(c.Field)
	return &c
}

// cleanCurrency trims a currency; one that sets nothing is none.
func cleanCurrency(v *CurrencySpec) *CurrencySpec {
	if v == nil {
		return nil
	}
	c := CurrencySpec{Code: strings.TrimSpace(v.Code), Field: strings.TrimSpace(v.Field), FromChange: v.FromChange}
	if c == (CurrencySpec{}) {
		return nil
	}
	return &c
}

// setValue sets r's value and currency columns from the file's.
func setValue(r *models.SendRule, v *ValueSpec, c *CurrencySpec) {
	r.Value, r.ValueField = nil, ""
	switch {
	case v == nil:
	case v.FromChange:
		r.ValueField = models.StageValueFromChange
	case v.Field != "":
		r.ValueField = v.Field
	default:
		n := v.Fixed
		r.Value = &n
	}
	r.Currency, r.CurrencyField = "", ""
	switch {
	case c == nil:
	case c.FromChange:
		r.CurrencyField = models.StageValueFromChange
	default:
		r.Currency, r.CurrencyField = c.Code, c.Field
	}
}

// valueSpecOf is a stored rule's value as the file writes it; nil for
// none.
func valueSpecOf(r models.SendRule) *ValueSpec {
	switch {
	case r.ValueField == models.StageValueFromChange && isMapping(r):
		return &ValueSpec{FromChange: true}
	case r.ValueField != "":
		return &ValueSpec{Field: r.ValueField}
	case r.Value != nil:
		return &ValueSpec{Fixed: *r.Value}
	}
	return nil
}

// currencySpecOf is a stored rule's currency as the file writes it; nil
// for none.
func currencySpecOf(r models.SendRule) *CurrencySpec {
	switch {
	case r.CurrencyField == models.StageValueFromChange && isMapping(r):
		return &CurrencySpec{FromChange: true}
	case r.CurrencyField != "":
		return &CurrencySpec{Field: r.CurrencyField}
	case r.Currency != "":
		return &CurrencySpec{Code: r.Currency}
	}
	return nil
}

// value reads a rule's value: absent or null for none, a number, or
// {"field": name}; for a stage mapping (stage) also "from_change".
func (d *decoder) value(path string, raw json.RawMessage, stage bool) *ValueSpec {
	if raw == nil || isNull(raw) {
		return nil
	}
	want := `must be a number like 250, or {"field": "fields.budget"} to read it from each lead`
	if stage {
		want = `must be a number like 250, "from_change" to take the value the stage change carries (a deal's), or {"field": "fields.budget"} to read it from the lead`
	}
	if kind(raw) == "a string" {
		if isFromChange(raw) {
			if stage {
				return &ValueSpec{FromChange: true}
			}
			d.add(path, fromChangeOnlyStage)
			return nil
		}
	}
	if kind(raw) == "a number" {
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			d.add(path, want)
			return nil
		}
		return &ValueSpec{Fixed: n}
	}
	if kind(raw) != "an object" {
		d.add(path, want+", not "+kind(raw))
		return nil
	}
	ref, ok := d.fieldRef(path, raw, want)
	if !ok {
		return nil
	}
	return &ValueSpec{Field: ref}
}

// currency reads a rule's currency: absent, null or "" for the account's,
// a code, or {"field": name}; for a stage mapping (stage) also
// "from_change".
func (d *decoder) currency(path string, raw json.RawMessage, stage bool) *CurrencySpec {
	if raw == nil || isNull(raw) {
		return nil
	}
	want := `must be an ISO 4217 code like "EUR", or {"field": "fields.currency"} to read it from each lead`
	if stage {
		want = `must be an ISO 4217 code like "EUR", "from_change" to take the currency the stage change carries, or {"field": "fields.currency"} to read it from the lead`
	}
	switch kind(raw) {
	case "a string":
		if isFromChange(raw) {
			if stage {
				return &CurrencySpec{FromChange: true}
			}
			d.add(path, fromChangeOnlyStage)
			return nil
		}
		var code string
		if err := json.Unmarshal(raw, &code); err != nil {
			d.add(path, want)
			return nil
		}
		if mangled(raw, code) {
			d.add(path, notUTF8)
			return nil
		}
		if strings.TrimSpace(code) == "" {
			return nil
		}
		return &CurrencySpec{Code: code}
	case "an object":
		ref, ok := d.fieldRef(path, raw, want)
		if !ok {
			return nil
		}
		return &CurrencySpec{Field: ref}
	}
	d.add(path, want+", not "+kind(raw))
	return nil
}

// fieldRef reads {"field": name}; field is required.
func (d *decoder) fieldRef(path string, raw json.RawMessage, want string) (string, bool) {
	var ref string
	n := len(d.problems)
	present := d.fields(path, raw, want, []field{{"field", &ref, "a string: a lead field like fields.budget"}})
	if len(d.problems) > n {
		return "", false
	}
	if !present["field"] {
		d.add(join(path, "field"), "required: the lead field to read, like fields.budget")
		return "", false
	}
	return ref, true
}

// fromChangeOnlyStage is the problem of a send rule's "from_change".
const fromChangeOnlyStage = `"from_change" takes the value or currency of a CRM stage change, which only stage_mappings have: ` +
	`a send rule sends when a lead comes in; give a number, a code or {"field": ...}`

// isFromChange reports whether raw is the JSON string "from_change",
// with spaces around it or not.
func isFromChange(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == fromChange
}
