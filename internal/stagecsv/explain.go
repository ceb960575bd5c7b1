package stagecsv

import (
	"strings"
)

// The mapping step says which column it took for each field and why, so
// that a person can trust the guess or change it: a contact column gives
// its email, a status column makes won and lost rows, and a file's several
// date columns each serve their rows.

// Why says what column m takes for t does, given the file's header and a
// sample value of each column; "" when the column is read as it is.
func (m Mapping) Why(t Target, header, samples []string) string {
	c := m.Column(t)
	if c < 0 || c >= len(header) {
		return ""
	}
	sample := ""
	if c < len(samples) {
		sample = samples[c]
	}
	switch t {
	case Email:
		if sample == "" || ContactEmail(sample) == sample {
			return ""
		}
		shape := "Name (email)"
		if strings.Contains(sample, "<") {
			shape = "Name <email>"
		}
		return "the email in \u2018" + shape + "\u2019; of several contacts, the first that has one"
	case MetaLeadID:
		if aliases[fold(header[c])] == ID {
			return "its values are Meta's lead ids (15 to 17 digits)"
		}
	case Stage:
		if s := m.Column(Status); s >= 0 && s < len(header) {
			return "Won or Lost in " + quoteName(header[s]) + " makes a row's stage won or lost"
		}
	case Status:
		return "Won or Lost makes the row's stage won or lost, whatever its stage"
	case WonAt, OccurredAt, UpdatedAt:
		return m.DateRule(header)
	case Value:
		if m.Column(Currency) >= 0 {
			return "a currency sign in it ($, €, £, …) gives the currency of a row whose currency cell is empty"
		}
		return "a currency sign in it ($, €, £, …) gives the row's currency; none, the account's"
	}
	return ""
}

// DateRule says which of m's date columns gives which rows their date,
// by their names: "Deal - Won time: the won date, for won rows;
// Deal - Update time for the others". "" without a date column.
func (m Mapping) DateRule(header []string) string {
	name := func(t Target) string {
		c := m.Column(t)
		if c < 0 || c >= len(header) {
			return ""
		}
		return quoteName(header[c])
	}
	var others []string
	for _, t := range []Target{OccurredAt, UpdatedAt} {
		if n := name(t); n != "" {
			others = append(others, n)
		}
	}
	won := name(WonAt)
	switch {
	case won != "" && len(others) > 0:
		return won + ": the won date, for won rows (a Won status or stage); " + strings.Join(others, ", else ") + " for the others"
	case won != "":
		return won + ": the date of every row"
	case len(others) > 0:
		return strings.Join(others, ", else ") + ": the date of every row (the first not empty)"
	}
	return ""
}
