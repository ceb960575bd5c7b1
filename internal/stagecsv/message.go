package stagecsv

import (
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
)

// A row's problems name the file's own column and its cell ("Close Date
// 12/01/2026 is before the lead was captured (Dec 2, 2026 4:37 PM CST)"),
// never the stage API's field, and show times in the account's zone:
// the person who uploaded the file knows its columns, not our API.

// columnOf is the column of row that fed the stage API's field, -1 for
// none.
func (r Reader) columnOf(row Row, field string) int {
	m := r.Mapping
	switch field {
	case "lead.id":
		return m.Column(ID)
	case "lead.external_id":
		return m.Column(ExternalID)
	case "lead.meta_lead_id":
		return m.Column(MetaLeadID)
	case "lead.email":
		return m.Column(Email)
	case "lead.phone":
		return m.Column(Phone)
	case "stage":
		if c := m.Column(Stage); c >= 0 && !((row.Won || row.Lost) && m.Column(Status) >= 0) {
			return c
		}
		return m.Column(Status)
	case "occurred_at":
		return row.dateColumn
	case "value":
		return m.Column(Value)
	case "currency":
		return row.currencyColumn
	case "change_id":
		return m.Column(ChangeID)
	}
	return -1
}

// problem is the Problem of field in row, whose message rest follows the
// column's name and cell ("is empty: ...").
func (r Reader) problem(row Row, field, rest string) *Problem {
	col := r.columnOf(row, field)
	if col < 0 || col >= len(r.Header) {
		return &Problem{Field: field, Message: field + " " + rest}
	}
	return &Problem{Field: field, Column: r.name(col), Message: r.subject(row, col) + " " + rest}
}

// name is the name of column col, cut short: a problem is stored for up
// to a thousand rows, and a careless file's header can be megabytes long.
func (r Reader) name(col int) string {
	h := r.Header[col]
	if h == "" {
		return "column " + strconv.Itoa(col+1)
	}
	return name.Cut(h, 80)
}

// subject is a column's name and row's cell of it, for a message.
func (r Reader) subject(row Row, col int) string {
	column := r.name(col)
	v := name.Cut(Cell(row.Cells, col), 60)
	if v == "" {
		return column
	}
	if strings.ContainsAny(v, " \t\r\n\"") {
		v = strconv.Quote(v)
	}
	if col == row.dateColumn {
		v += r.readAs(row)
	}
	return column + " " + v
}

// readAs is how row's date was read, " (read as Jul 12, 2026, month
// first)", when its order was the mapping's choice (07/12/2026 is July 12
// or 7 December): a person who meant the other reads why the row was
// refused. It is "" for a date only one order reads. Worked out for a
// message only, not for every row read.
func (r Reader) readAs(row Row) string {
	d, ok := parseNumeric(Cell(row.Cells, row.dateColumn))
	if !ok || d.sep == '.' || d.a == d.b || d.a > 12 || d.b > 12 {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, row.Request.OccurredAt)
	if err != nil {
		return ""
	}
	read := r.Time(t)
	if row.DateOnly {
		read = t.In(r.loc()).Format("Jan 2, 2006")
	}
	order := "month first"
	if row.order == DayFirst {
		order = "day first"
	}
	return " (read as " + read + ", " + order + ")"
}

// Explain is the Problem of a row that the stage API's validation or the
// recorder refused with message, about field (the API's): the message
// names the row's column and cell instead of the field. A field no
// column fed keeps the message as it is.
func (r Reader) Explain(row Row, field, message string) Problem {
	col := r.columnOf(row, field)
	if col < 0 || col >= len(r.Header) {
		return Problem{Field: field, Message: message}
	}
	subject := r.subject(row, col)
	if Cell(row.Cells, col) == "" {
		subject += " is empty"
	}
	rest, ok := strings.CutPrefix(message, field)
	switch {
	case ok && strings.HasPrefix(rest, " ") && Cell(row.Cells, col) != "":
		message = subject + rest
	case ok && strings.HasPrefix(rest, ": "):
		message = subject + rest
	default:
		message = subject + ": " + message
	}
	return Problem{Field: field, Column: r.name(col), Message: message}
}

// BeforeLead is the Problem of a row whose date is before its lead was
// captured, at created: both as the file and the account's zone show
// them.
func (r Reader) BeforeLead(row Row, created time.Time) Problem {
	p := r.problem(row, "occurred_at", "is before the lead was captured ("+r.Time(created)+")")
	return *p
}

// Time is t as messages show it, in the account's zone: Dec 2, 2026
// 4:37 PM CST.
func (r Reader) Time(t time.Time) string {
	return t.In(r.loc()).Format("Jan 2, 2006 3:04 PM MST")
}

// loc is the account's zone, UTC when unknown.
func (r Reader) loc() *time.Location {
	if r.Loc == nil {
		return time.UTC
	}
	return r.Loc
}
