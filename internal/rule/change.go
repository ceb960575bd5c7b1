package rule

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/models"
)

// ChangePrefix starts the names of the stage change's fields: the value
// and currency a CRM sent with the change (POST /api/v1/stages). Only a
// stage mapping's conditions read them ("won deals of more than 499.99
// EUR"); a rule of another mode that names one does not compile.
const ChangePrefix = "change."

// changeDefs are the stage change's fields, after the lead's in defs.
//
// change.value reads as a number, "" when the change carried no value (or
// there is no change: a stage filled in before the one that changed has
// no change of its own), so that gt and lt fail and is_empty holds, as for
// any unknown number. change.currency is the change's ISO 4217 code in
// upper case, "" when it sent none: the account's currency, which the
// event then takes, is not the change's.
func changeDefs() []def {
	return []def{
		{Field: Field{Name: ChangePrefix + "value", Label: "Deal value", Kind: Number, Change: true}, get: (*Lead).changeValue},
		{Field: Field{Name: ChangePrefix + "currency", Label: "Deal currency", Kind: Text, Change: true},
			get: (*Lead).changeCurrency, item: currencyItem},
	}
}

// ChangeFields lists the stage change's fields, for the stage mapping
// form's picker.
func ChangeFields() []Field {
	var out []Field
	for _, d := range defs {
		if d.Change {
			out = append(out, d.Field)
		}
	}
	return out
}

// SetChange makes v read c as the stage change whose stage's mappings are
// matched: conditions on change.value and change.currency read it. nil,
// as after NewLead and Reset, is no change: those fields are unknown. c
// must not change while v reads it.
func (v *Lead) SetChange(c *models.StageChange) { v.change = c }

func (v *Lead) changeValue() string {
	if v.change == nil || v.change.Value == nil {
		return ""
	}
	return strconv.FormatFloat(*v.change.Value, 'f', -1, 64)
}

func (v *Lead) changeCurrency() string {
	if v.change == nil {
		return ""
	}
	return strings.ToUpper(strings.TrimSpace(v.change.Currency))
}

// currencyItem wants an ISO 4217 code, the form change.currency has.
func currencyItem(s string) string {
	if !country.ValidCurrency(strings.ToUpper(s)) {
		return "write a 3-letter currency code, like EUR or USD"
	}
	return ""
}

// changeProblem says why a rule of another mode than stage cannot name
// the stage change's field f; in words (Schema.Words), by its label.
func changeProblem(f Field, words bool) string {
	if words {
		return fmt.Sprintf("%s is what a stage change carries: only a stage mapping's conditions can read it, on the Stages page", f.Label)
	}
	return fmt.Sprintf("%s is the %s a stage change carries: only a stage mapping's conditions can read it "+
		"(on the Stages page, or in a setup file's stage_mappings)", f.Name, strings.ToLower(f.Label))
}
