package stagecsv

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/capture"
)

// Problem is why a row stays out: the stage API's field at fault, the
// file's column it came from ("" when none), and a message for a person
// that names the column.
type Problem struct {
	Field   string
	Column  string
	Message string
}

// Reader reads the rows of a file under a mapping, for an account.
type Reader struct {
	Mapping Mapping
	// Header names the file's columns, for the messages.
	Header []string
	// Loc is the account's time zone: dates without a zone are read in
	// it, and messages show times in it.
	Loc *time.Location
	// Currency is the account's currency, which a bare "$" in an amount
	// is when it is a dollar currency (SignCurrency).
	Currency string
}

// Row is a row of the file read: the stage API's body it makes and what
// the upload needs beside it.
type Row struct {
	Request capture.StageRequest
	// DateOnly: the row's date is a day with no time of day (its
	// midnight in the account's zone).
	DateOnly bool
	// Won says the row is a won row (its status or its stage says so);
	// Lost that its status says lost.
	Won, Lost bool
	// Cells are the row's cells.
	Cells []string
	// dateColumn is the column the date came from, -1 for none;
	// currencyColumn the column the currency came from (the amount's
	// when its sign gave it).
	dateColumn, currencyColumn int
	// order is the date order the date was read in (Reader.readAs says
	// so in messages).
	order DateOrder
}

// Row reads cells, a row of the file, into the stage API's body, its
// dates read in r.Loc; or the Problem of a cell that cannot become its
// field (a date or number that cannot be read, a lead id that is not a
// number). Everything else is the body's Validate's to check: callers
// validate the request exactly as POST /api/v1/stages does. Empty cells
// are left out, as a body leaves out a field. Beside the cells' own
// fields:
//   - an email cell written "Name (email)", "Name <email>", or a list of
//     contacts gives the first email address in it;
//   - a Status of Won or Lost makes the stage "won" or "lost";
//   - the date is the won date for a won row, else the date of the
//     change, else the update time; for other rows the date of the change,
//     else the update time, else the won date (the first cell not empty);
//   - without a currency cell, the amount's sign or code gives the
//     currency (SignCurrency).
func (r Reader) Row(cells []string) (Row, *Problem) {
	m := r.Mapping
	row := Row{Cells: cells, dateColumn: -1, currencyColumn: m.Column(Currency)}
	req := &row.Request
	text := func(t Target) *string {
		v := Cell(cells, m.Column(t))
		if v == "" {
			return nil
		}
		return &v
	}
	if v := text(ID); v != nil {
		id, err := strconv.ParseInt(*v, 10, 64)
		if err != nil {
			return row, r.problem(row, "lead.id", "must be a lead's id, a positive integer")
		}
		req.Lead.ID = &id
	}
	req.Lead.ExternalID, req.Lead.MetaLeadID, req.Lead.Phone = text(ExternalID), text(MetaLeadID), text(Phone)
	if v := text(Email); v != nil {
		e := ContactEmail(*v)
		req.Lead.Email = &e
	}
	req.Stage = Cell(cells, m.Column(Stage))
	switch fold(Cell(cells, m.Column(Status))) {
	case "won", "closedwon", "true", "yes", "y", "1":
		req.Stage, row.Won = "won", true
	case "lost", "closedlost":
		req.Stage, row.Lost = "lost", true
	}
	switch fold(req.Stage) {
	case "won", "closedwon":
		row.Won = true
	}

	order := []Target{OccurredAt, UpdatedAt, WonAt}
	if row.Won {
		order = []Target{WonAt, OccurredAt, UpdatedAt}
	}
	for _, t := range order {
		if c := m.Column(t); c >= 0 && (Cell(cells, c) != "" || row.dateColumn < 0) {
			row.dateColumn = c
			if Cell(cells, c) != "" {
				break
			}
		}
	}
	at := Cell(cells, row.dateColumn)
	if at == "" {
		return row, r.problem(row, "occurred_at", "is empty: each row needs the date its lead reached the stage")
	}
	t, dateOnly, ok := ParseDate(at, m.DateOrder, r.Loc)
	if !ok {
		return row, r.problem(row, "occurred_at", "is not a date this upload reads: write it like 2026-12-01T14:03:00Z, 2026-12-01 14:03 or "+exampleDate(m.DateOrder))
	}
	req.OccurredAt, row.DateOnly = t.Format(time.RFC3339Nano), dateOnly
	row.order = m.DateOrder

	if v := text(Value); v != nil {
		n, sign, ok := ParseAmount(*v)
		if !ok {
			return row, r.problem(row, "value", "is not an amount like 1200, 1,200.50, 1.200,50 or $1,200")
		}
		req.Value = &n
		if req.Currency = Cell(cells, m.Column(Currency)); req.Currency == "" && sign != "" {
			req.Currency, row.currencyColumn = SignCurrency(sign, r.Currency), m.Column(Value)
		}
	}
	if req.Value == nil {
		req.Currency = Cell(cells, m.Column(Currency))
	}
	req.ChangeID = text(ChangeID)
	return row, nil
}

func exampleDate(o DateOrder) string {
	if o == DayFirst {
		return "01/12/2026 (day first)"
	}
	return "12/01/2026 (month first)"
}

// emailRE finds an email address inside a cell that holds more (a name,
// brackets, other contacts).
var emailRE = regexp.MustCompile(`[^\s<>()\[\]{};,:"@]+@[^\s<>()\[\]{};,:"'@]+\.[^\s<>()\[\]{};,:"'@]+`)

// ContactEmail is the email address a contact cell gives: the cell
// itself when it is one; the address in "Name (email)" or "Name <email>";
// the first contact's that has one in a list ("A (a@x.co); B (b@y.co)",
// HubSpot joining several contacts with ";" or ","). A cell with no
// address is returned as it is, for validation to refuse.
func ContactEmail(s string) string {
	if !strings.ContainsAny(s, " \t<>();,:\"") {
		return s // one address (or none), as it is
	}
	if loc := emailRE.FindStringIndex(s); loc != nil && !(loc[0] == 0 && loc[1] == len(s)) {
		return s[loc[0]:loc[1]]
	}
	return s
}

// Location is the time zone named tz (an IANA name, the account's), UTC
// when it has none or an unknown one.
func Location(tz string) *time.Location {
	if tz == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC
	}
	return loc
}
