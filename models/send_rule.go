package models

import (
	"database/sql/driver"
	"slices"
	"time"
)

// SendRule decides which leads of an account become which events of its
// destinations (internal/rule compiles and matches it).
type SendRule struct {
	ID        int64
	AccountID int64
	// DatasetID is the rule's first destination, AlsoDatasetIDs the
	// others, in the order of their ids (Destinations, SetDestinations).
	DatasetID      int64
	AlsoDatasetIDs IDs
	Name           string
	// Mode is a rule.Mode: when the rule sends.
	Mode      string
	EventName string
	// ActionSource, when set, replaces the one the lead's source gives.
	ActionSource string
	// Value is a fixed value, or ValueField names the lead field it is
	// read from; neither means no value.
	Value      *float64
	ValueField string
	// Currency is a fixed ISO 4217 code, or CurrencyField names the lead
	// field it is read from; neither means the account's currency.
	Currency      string
	CurrencyField string
	// TestEventCode, when set, sends this rule's events to Meta's Test
	// Events tool, whatever the dataset's mode.
	TestEventCode string
	Combinator    string
	// Conditions is the JSON list of the rule's conditions
	// ([]rule.Condition).
	Conditions string
	Enabled    bool
	Position   int
	// Stage is the CRM stage a stage mapping (mode "stage") sends for.
	Stage string
	// Repeatable: a stage mapping sends one event per stage change (a
	// second sale), not one per lead and stage.
	Repeatable bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Destinations are the ids of the rule's destinations, first its
// DatasetID.
func (r SendRule) Destinations() []int64 {
	return append([]int64{r.DatasetID}, r.AlsoDatasetIDs...)
}

// SendsTo reports whether destination id is one of the rule's.
func (r SendRule) SendsTo(id int64) bool {
	return id == r.DatasetID || slices.Contains(r.AlsoDatasetIDs, id)
}

// SharesDestination reports whether r and o send to a destination in
// common.
func (r SendRule) SharesDestination(o SendRule) bool {
	return slices.ContainsFunc(r.Destinations(), o.SendsTo)
}

// SetDestinations makes ids the rule's destinations, kept in the order
// of their ids: the order they are named in says nothing (each gets its
// own event), so a rule saved from a form, a setup file or its own export
// reads the same. The first is its DatasetID (0 for none).
func (r *SendRule) SetDestinations(ids []int64) {
	r.DatasetID, r.AlsoDatasetIDs = 0, nil
	if len(ids) > 0 {
		sorted := slices.Sorted(slices.Values(ids))
		r.DatasetID = sorted[0]
		r.AlsoDatasetIDs = append(IDs(nil), sorted[1:]...)
	}
}

// IDs is a list of ids that a column keeps as one JSON array ("[3,7]").
type IDs []int64

// Value is the list as its column keeps it: "[]" for none.
func (ids IDs) Value() (driver.Value, error) { return jsonList(ids) }

// Scan reads the list from its column; an empty text is none.
func (ids *IDs) Scan(src any) error {
	var out []int64
	if err := scanJSON(src, "ids", &out); err != nil {
		return err
	}
	*ids = nil
	if len(out) > 0 {
		*ids = out
	}
	return nil
}

// StageValueFromChange is a stage mapping's ValueField (and
// CurrencyField) when the value (currency) is the stage change's own.
const StageValueFromChange = "change"
