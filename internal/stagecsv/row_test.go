package stagecsv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
)

// showRow prints a row's request and what the upload reads beside it.
func showRow(r stagecsv.Row) string {
	req := r.Request
	p := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	v := "-"
	if req.Value != nil {
		v = ftoa(*req.Value)
	}
	id := "-"
	if req.Lead.ID != nil {
		id = itoa(*req.Lead.ID)
	}
	at := req.OccurredAt
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		at = t.UTC().Format(time.RFC3339Nano)
	}
	return strings.Join([]string{id, p(req.Lead.Email), p(req.Lead.Phone), req.Stage, at, v, req.Currency, p(req.ChangeID),
		fmt.Sprint(r.DateOnly)}, "|")
}

// Every vendor's deal export, as its documented column names write it,
// is recognised with no manual mapping: each row's lead, stage, date (by
// the row's meaning), value and currency.
func TestVendorExports(t *testing.T) {
	chicago, err := time.LoadLocation("America/Chicago")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file    string
		columns map[stagecsv.Target]string
		rows    []string
	}{
		{"hubspot.csv", map[stagecsv.Target]string{"stage": "Deal Stage", "value": "Amount", "won_at": "Close Date",
			"updated_at": "Last Modified Date", "email": "Associated Contact", "currency": "Currency"}, []string{
			"-|jane@example.com|-|closedwon|2026-12-02T23:05:00Z|1200|USD|-|false",
			"-|bob@example.com|-|qualifiedtobuy|2026-12-01T14:30:00Z|500||-|false",
			"-|cy@example.com|-|appointmentscheduled|2026-11-30T18:00:00Z|750|USD|-|false",
		}},
		{"pipedrive.csv", map[stagecsv.Target]string{"stage": "Deal - Stage", "status": "Deal - Status", "value": "Deal - Value",
			"currency": "Deal - Currency", "won_at": "Deal - Won time", "updated_at": "Deal - Update time",
			"occurred_at": "Deal - Last stage change", "email": "Person - Email", "phone": "Person - Phone"}, []string{
			"-|jane@example.com|+1 415 555 2671|won|2026-12-02T23:05:00Z|1234.56|EUR|-|false",
			"-|bob@example.com|-|Proposal Made|2026-11-29T21:00:00Z|500|EUR|-|false",
			"-|cy@example.com|-|lost|2026-11-30T18:00:00Z|0|EUR|-|false",
		}},
		{"salesforce.csv", map[stagecsv.Target]string{"stage": "Stage", "value": "Amount", "won_at": "Close Date",
			"currency": "Opportunity Currency", "occurred_at": "Last Stage Change Date", "updated_at": "Last Modified Date",
			"status": "Won", "email": "Email"}, []string{
			"-|jane@example.com|-|won|2026-12-02T06:00:00Z|1200|USD|-|true",
			"-|bob@example.com|-|Proposal/Price Quote|2026-11-29T21:00:00Z|500|USD|-|false",
		}},
		{"zoho.csv", map[stagecsv.Target]string{"stage": "Stage", "value": "Amount", "won_at": "Closing Date", "currency": "Currency",
			"email": "Email", "updated_at": "Modified Time"}, []string{
			"-|jane@example.com|-|Closed Won|2026-12-02T06:00:00Z|1200|GBP|-|true",
			"-|bob@example.com|-|Negotiation/Review|2026-12-01T14:30:00Z|500|GBP|-|false",
		}},
		{"gohighlevel.csv", map[stagecsv.Target]string{"email": "email", "phone": "phone", "stage": "stage", "value": "Lead Value",
			"status": "status", "updated_at": "Updated on"}, []string{
			"-|jane@example.com|+14155552671|won|2026-12-02T23:06:00Z|1200|USD|-|false",
			"-|bob@example.com|-|Booked Call|2026-12-01T14:30:00Z|500|USD|-|false",
			"-|cy@example.com|-|lost|2026-11-30T18:00:00Z|0||-|false",
		}},
		{"close.csv", map[stagecsv.Target]string{"email": "contact_email", "stage": "status_label", "status": "status_type", "value": "value",
			"currency": "value_currency", "won_at": "date_won", "updated_at": "date_updated"}, []string{
			"-|jane@example.com|-|won|2026-12-02T06:00:00Z|1200|USD|-|true",
			"-|bob@example.com|-|Demo Completed|2026-12-01T14:30:00.123456Z|500|USD|-|false",
		}},
		{"activecampaign.csv", map[stagecsv.Target]string{"email": "Email", "stage": "Stage", "value": "Value", "currency": "Currency",
			"status": "Status", "updated_at": "Updated Date"}, []string{
			"-|jane@example.com|-|won|2026-12-02T23:06:00Z|1200|usd|-|false",
			"-|bob@example.com|-|Qualified|2026-12-01T14:30:00Z|500|usd|-|false",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := stagecsv.Read(b)
			if err != nil {
				t.Fatal(err)
			}
			m := stagecsv.Guess(f, "US")
			if ps := m.Problems(f.Header); len(ps) > 0 {
				t.Fatalf("Guess leaves problems: %q", ps)
			}
			got := map[stagecsv.Target]string{}
			for target, col := range m.Columns {
				got[target] = f.Header[col]
			}
			if !reflect.DeepEqual(got, tt.columns) {
				t.Errorf("columns = %v; want %v", got, tt.columns)
			}
			r := stagecsv.Reader{Mapping: m, Header: f.Header, Loc: chicago, Currency: "USD"}
			var rows []string
			for _, cells := range f.Rows {
				row, p := r.Row(cells)
				if p != nil {
					t.Fatalf("row %q: %s", cells, p.Message)
				}
				rows = append(rows, showRow(row))
			}
			if strings.Join(rows, "\n") != strings.Join(tt.rows, "\n") {
				t.Errorf("rows =\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(tt.rows, "\n"))
			}
		})
	}
}

func TestRow(t *testing.T) {
	header := []string{"Lead ID", "Associated Contact", "Deal Stage", "Close Date", "Amount", "Currency", "Change"}
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{"id": 0, "email": 1, "stage": 2, "won_at": 3, "value": 4, "currency": 5, "change_id": 6},
		DateOrder: stagecsv.DayFirst}
	r := stagecsv.Reader{Mapping: m, Header: header, Loc: time.UTC, Currency: "CAD"}
	tests := []struct {
		name    string
		row     []string
		want    string
		problem string // "column: message"
	}{
		{"every cell", []string{"7", " A@B.co ", "Won", "01/12/2026 14:03", "1.200,50", "eur", "c-1"},
			"7|A@B.co|-|Won|2026-12-01T14:03:00Z|1200.5|eur|c-1|false", ""},
		{"empty cells left out; a date alone", []string{"", "a@b.co", "won", "2026-12-01", "", "", ""},
			"-|a@b.co|-|won|2026-12-01T00:00:00Z|-||-|true", ""},
		{"short row", []string{"", "a@b.co", "won", "01/12/2026"}, "-|a@b.co|-|won|2026-12-01T00:00:00Z|-||-|true", ""},
		{"the contact's email; the amount's $ is the account's dollar", []string{"", "Jane Roe <jane@b.co>", "won", "2026-12-01", "$1,200.00", ""},
			"-|jane@b.co|-|won|2026-12-01T00:00:00Z|1200|CAD|-|true", ""},
		{"a currency column beats the amount's sign", []string{"", "a@b.co", "won", "2026-12-01", "€1.200", "USD"},
			"-|a@b.co|-|won|2026-12-01T00:00:00Z|1200|USD|-|true", ""},
		{"bad id", []string{"x7", "", "won", "2026-12-01"}, "", `Lead ID: Lead ID x7 must be a lead's id, a positive integer`},
		{"bad date", []string{"", "a@b.co", "won", "12/13/2026"}, "",
			`Close Date: Close Date 12/13/2026 is not a date this upload reads: write it like 2026-12-01T14:03:00Z, 2026-12-01 14:03 or 01/12/2026 (day first)`},
		{"no date", []string{"", "a@b.co", "won", " "}, "", "Close Date: Close Date is empty: each row needs the date its lead reached the stage"},
		{"bad value", []string{"", "a@b.co", "won", "2026-12-01", "lots"}, "",
			`Amount: Amount lots is not an amount like 1200, 1,200.50, 1.200,50 or $1,200`},
		{"an unknown sign", []string{"", "a@b.co", "won", "2026-12-01", "12 bananas"}, "",
			`Amount: Amount "12 bananas" is not an amount like 1200, 1,200.50, 1.200,50 or $1,200`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row, p := r.Row(tt.row)
			if p != nil {
				if got := p.Column + ": " + p.Message; got != tt.problem {
					t.Errorf("Row(%q) problem = %q; want %q", tt.row, got, tt.problem)
				}
				return
			}
			if tt.problem != "" {
				t.Fatalf("Row(%q) = no problem; want %q", tt.row, tt.problem)
			}
			if got := showRow(row); got != tt.want {
				t.Errorf("Row(%q) = %s; want %s", tt.row, got, tt.want)
			}
		})
	}
}

// Each row picks its own date by its meaning: the won date for a won
// row, else the last stage change, else the update time.
func TestRowDateByMeaning(t *testing.T) {
	header := []string{"email", "stage", "status", "won", "changed", "updated"}
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "status": 2, "won_at": 3, "occurred_at": 4, "updated_at": 5},
		DateOrder: stagecsv.MonthFirst}
	r := stagecsv.Reader{Mapping: m, Header: header, Loc: time.UTC}
	tests := []struct {
		row  []string
		want string // stage and date
	}{
		{[]string{"a@b.co", "proposal", "Won", "2026-12-03", "2026-12-02", "2026-12-04"}, "won 2026-12-03"},
		{[]string{"a@b.co", "won", "", "2026-12-03", "2026-12-02", "2026-12-04"}, "won 2026-12-03"},
		{[]string{"a@b.co", "proposal", "Won", "", "2026-12-02", "2026-12-04"}, "won 2026-12-02"},
		{[]string{"a@b.co", "proposal", "Open", "2026-12-03", "2026-12-02", "2026-12-04"}, "proposal 2026-12-02"},
		{[]string{"a@b.co", "proposal", "Lost", "", "", "2026-12-04"}, "lost 2026-12-04"},
		{[]string{"a@b.co", "proposal", "", "2026-12-03", "", ""}, "proposal 2026-12-03"},
	}
	for _, tt := range tests {
		row, p := r.Row(tt.row)
		if p != nil {
			t.Fatalf("Row(%q): %s", tt.row, p.Message)
		}
		if got := row.Request.Stage + " " + row.Request.OccurredAt[:10]; got != tt.want {
			t.Errorf("Row(%q) = %s; want %s", tt.row, got, tt.want)
		}
	}
}

func TestContactEmail(t *testing.T) {
	tests := []struct{ in, want string }{
		{"jane@example.com", "jane@example.com"},
		{"Jane Roe (jane@example.com)", "jane@example.com"},
		{"Jane Roe <jane@example.com>", "jane@example.com"},
		{`"Roe, Jane" <jane@example.com>`, "jane@example.com"},
		{"Bob (bob@example.com);Ann (ann@example.com)", "bob@example.com"},
		{"Zed Noemail, Cy Lo (cy@example.com)", "cy@example.com"},
		{"mailto:jane@example.com", "jane@example.com"},
		{"o'brien+deals@example.com", "o'brien+deals@example.com"},
		{"Pat O'Brien <o'brien@example.com>", "o'brien@example.com"},
		{"Jane Roe", "Jane Roe"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := stagecsv.ContactEmail(tt.in); got != tt.want {
			t.Errorf("ContactEmail(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseDateOnly(t *testing.T) {
	tests := []struct {
		in       string
		dateOnly bool
	}{
		{"2026-12-06", true},
		{"12/6/2026", true},
		{"06.12.2026", true},
		{"12/6/2026 9:00 AM", false},
		{"2026-12-06 00:00", false},
		{"2026-12-06T00:00:00Z", false},
		{"1764597780", false},
	}
	for _, tt := range tests {
		_, dateOnly, ok := stagecsv.ParseDate(tt.in, stagecsv.MonthFirst, time.UTC)
		if !ok || dateOnly != tt.dateOnly {
			t.Errorf("ParseDate(%q) = date only %v, %v; want %v, true", tt.in, dateOnly, ok, tt.dateOnly)
		}
	}
}

// An upload reads at most MaxColumns columns: the file with one more is
// refused whole, with the count.
func TestReadColumnLimit(t *testing.T) {
	file := func(n int) []byte {
		names := []string{"email", "stage", "occurred_at"}
		for i := len(names); i < n; i++ {
			names = append(names, fmt.Sprintf("extra %d", i))
		}
		return []byte(strings.Join(names, ",") + "\na@b.co,won,2026-12-01\n")
	}
	if f, err := stagecsv.Read(file(stagecsv.MaxColumns)); err != nil || len(f.Header) != 500 {
		t.Errorf("Read(500 columns) = %d columns, %v; want 500, nil", len(f.Header), err)
	}
	_, err := stagecsv.Read(file(stagecsv.MaxColumns + 1))
	if err == nil || !strings.Contains(err.Error(), "names 501 columns; an upload reads at most 500") {
		t.Errorf("Read(501 columns) = %v; want it refused with the count", err)
	}
	_, err = stagecsv.Read(file(10_000))
	if err == nil || !strings.Contains(err.Error(), "names 10,000 columns") {
		t.Errorf("Read(10,000 columns) = %v; want it refused with the count", err)
	}
}

// The mapping step says why it took a column, and how the dates serve
// the rows.
func TestWhy(t *testing.T) {
	header := []string{"Associated Contact", "Deal - Stage", "Deal - Status", "Deal - Won time", "Deal - Update time", "Deal - Value", "Lead ID"}
	samples := []string{"Jane Roe (jane@example.com)", "Proposal Made", "Won", "2026-12-02", "2026-12-02", "$1,200", "123456789012345"}
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "status": 2, "won_at": 3, "updated_at": 4, "value": 5,
		"meta_lead_id": 6}}
	tests := []struct {
		t    stagecsv.Target
		want string
	}{
		{"email", "the email in ‘Name (email)’; of several contacts, the first that has one"},
		{"stage", "Won or Lost in “Deal - Status” makes a row's stage won or lost"},
		{"status", "Won or Lost makes the row's stage won or lost, whatever its stage"},
		{"won_at", "“Deal - Won time”: the won date, for won rows (a Won status or stage); “Deal - Update time” for the others"},
		{"value", "a currency sign in it ($, €, £, …) gives the row's currency; none, the account's"},
		{"meta_lead_id", "its values are Meta's lead ids (15 to 17 digits)"},
		{"currency", ""},
	}
	for _, tt := range tests {
		if got := m.Why(tt.t, header, samples); got != tt.want {
			t.Errorf("Why(%s) = %q; want %q", tt.t, got, tt.want)
		}
	}
}
