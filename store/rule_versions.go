package store

import (
	"encoding/json"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// RuleSnapshot is what a version of a send rule keeps of it: what a person
// set, not its place in the list nor its times. A version stores the rule
// before and after the change as a snapshot's JSON (send_rule_versions
// before and after), and the rule page reads them back with it.
type RuleSnapshot struct {
	Name      string `json:"name"`
	DatasetID int64  `json:"dataset_id"`
	// AlsoDatasetIDs are the destinations after the first; none is left
	// out, so a rule's versions from before it had several read the same.
	AlsoDatasetIDs []int64         `json:"also_dataset_ids,omitempty"`
	Mode           string          `json:"mode"`
	EventName      string          `json:"event_name"`
	ActionSource   string          `json:"action_source,omitempty"`
	Value          *float64        `json:"value,omitempty"`
	ValueField     string          `json:"value_field,omitempty"`
	Currency       string          `json:"currency,omitempty"`
	CurrencyField  string          `json:"currency_field,omitempty"`
	TestEventCode  string          `json:"test_event_code,omitempty"`
	Combinator     string          `json:"combinator"`
	Conditions     json.RawMessage `json:"conditions"`
	Enabled        bool            `json:"enabled"`
	// Stage and Repeatable are a stage mapping's.
	Stage      string `json:"stage,omitempty"`
	Repeatable bool   `json:"repeatable,omitempty"`
}

// SnapshotOf is what a version keeps of r. Conditions that are not JSON
// are kept as none.
func SnapshotOf(r models.SendRule) RuleSnapshot {
	conditions := json.RawMessage(r.Conditions)
	if !json.Valid(conditions) || strings.TrimSpace(r.Conditions) == "" {
		conditions = json.RawMessage("[]")
	}
	return RuleSnapshot{Name: r.Name, DatasetID: r.DatasetID, AlsoDatasetIDs: r.AlsoDatasetIDs, Mode: r.Mode, EventName: r.EventName, ActionSource: r.ActionSource,
		Value: r.Value, ValueField: r.ValueField, Currency: r.Currency, CurrencyField: r.CurrencyField,
		TestEventCode: r.TestEventCode, Combinator: r.Combinator, Conditions: conditions, Enabled: r.Enabled,
		Stage: r.Stage, Repeatable: r.Repeatable}
}

// JSON is the snapshot as a version stores it: two rules with the same
// settings have the same JSON, so a save that changes nothing keeps no
// version.
func (s RuleSnapshot) JSON() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Rule is the send rule the snapshot keeps, without an id, a place in
// the list or times.
func (s RuleSnapshot) Rule() models.SendRule {
	conditions := "[]"
	if len(s.Conditions) > 0 {
		conditions = string(s.Conditions)
	}
	return models.SendRule{Name: s.Name, DatasetID: s.DatasetID, AlsoDatasetIDs: s.AlsoDatasetIDs, Mode: s.Mode, EventName: s.EventName, ActionSource: s.ActionSource,
		Value: s.Value, ValueField: s.ValueField, Currency: s.Currency, CurrencyField: s.CurrencyField,
		TestEventCode: s.TestEventCode, Combinator: s.Combinator, Conditions: conditions, Enabled: s.Enabled,
		Stage: s.Stage, Repeatable: s.Repeatable}
}

// BeforeRule is the rule as the change found it; false when the change
// created it.
func (v RuleVersion) BeforeRule() (models.SendRule, bool) { return snapshotRule(v.Before) }

// AfterRule is the rule as the change left it; false when the change
// deleted it.
func (v RuleVersion) AfterRule() (models.SendRule, bool) { return snapshotRule(v.After) }

// snapshotRule reads a version's side; false when it is empty or cannot
// be read.
func snapshotRule(s string) (models.SendRule, bool) {
	if s == "" {
		return models.SendRule{}, false
	}
	var snap RuleSnapshot
	if err := json.Unmarshal([]byte(s), &snap); err != nil {
		return models.SendRule{}, false
	}
	return snap.Rule(), true
}
