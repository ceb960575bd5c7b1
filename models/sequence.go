package models

import "time"

// Sequence is a pair of a dataset's events that a lead goes through: an
// initial event, then a final one. A lead's sequence is complete when its
// final event is later than its initial one; Meta learns from the final
// events, and the Stages page counts complete sequences per week against
// its learning threshold.
type Sequence struct {
	ID           int64
	AccountID    int64
	DatasetID    int64
	InitialEvent string
	FinalEvent   string
	CreatedAt    time.Time
}
