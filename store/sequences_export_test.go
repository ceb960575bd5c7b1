package store

import "time"

// SequenceWeeksQuery is the statement SequenceWeeks runs for the weeks
// that start at starts, with its arguments, for EXPLAIN in tests.
func SequenceWeeksQuery(dialect string, accountID int64, starts []time.Time) (string, map[string]any) {
	return sequenceWeeksQuery(dialect, []accountWeeks{{accountID: accountID, starts: starts}}, MaxWeekCount)
}
