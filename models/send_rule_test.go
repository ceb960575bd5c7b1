package models

import (
	"slices"
	"testing"
)

// IDs reads back what it writes, takes an empty column as none, and
// refuses what is not a list of ids.
func TestIDs(t *testing.T) {
	for _, tt := range []struct {
		ids  IDs
		text string
	}{
		{nil, "[]"},
		{IDs{3, 7}, "[3,7]"},
	} {
		v, err := tt.ids.Value()
		if err != nil || v != tt.text {
			t.Errorf("IDs(%v).Value() = %v, %v; want %q", tt.ids, v, err, tt.text)
		}
		var back IDs
		if err := back.Scan([]byte(tt.text)); err != nil || !slices.Equal(back, tt.ids) {
			t.Errorf("Scan(%q) = %v, %v; want %v", tt.text, back, err, tt.ids)
		}
	}
	for _, src := range []any{"", nil} {
		ids := IDs{1}
		if err := ids.Scan(src); err != nil || ids != nil {
			t.Errorf("Scan(%#v) = %v, %v; want none", src, ids, err)
		}
	}
	for _, src := range []any{"not json", "{}", "[1.5]", 42} {
		var ids IDs
		if err := ids.Scan(src); err == nil {
			t.Errorf("Scan(%#v) = %v; want an error", src, ids)
		}
	}
}

// SetDestinations keeps a rule's destinations in the order of their ids,
// whatever order they are named in; Destinations, SendsTo and
// SharesDestination read them back.
func TestSetDestinations(t *testing.T) {
	var r SendRule
	r.SetDestinations([]int64{9, 2, 5})
	if r.DatasetID != 2 || !slices.Equal(r.AlsoDatasetIDs, IDs{5, 9}) || !slices.Equal(r.Destinations(), []int64{2, 5, 9}) {
		t.Errorf("SetDestinations(9, 2, 5) = %d + %v; want 2 + [5 9]", r.DatasetID, r.AlsoDatasetIDs)
	}
	if !r.SendsTo(9) || r.SendsTo(3) {
		t.Errorf("SendsTo(9), SendsTo(3) = %v, %v; want true, false", r.SendsTo(9), r.SendsTo(3))
	}
	o := SendRule{DatasetID: 4, AlsoDatasetIDs: IDs{5}}
	if !r.SharesDestination(o) || r.SharesDestination(SendRule{DatasetID: 4}) {
		t.Error("SharesDestination: want true with a rule to 4 and 5, false with one to 4")
	}
	r.SetDestinations(nil)
	if r.DatasetID != 0 || r.AlsoDatasetIDs != nil {
		t.Errorf("SetDestinations(nil) = %d + %v; want none", r.DatasetID, r.AlsoDatasetIDs)
	}
}
