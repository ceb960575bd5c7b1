package stagecsv_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
)

// Messages about a row name the file's column and cell, and show times
// in the account's zone.
func TestMessages(t *testing.T) {
	chicago, err := time.LoadLocation("America/Chicago")
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"Associated Contact", "Deal Stage", "Close Date", "Last Modified Date", "Amount"}
	m := stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "won_at": 2, "updated_at": 3, "value": 4}, DateOrder: "mdy"}
	r := stagecsv.Reader{Mapping: m, Header: header, Loc: chicago, Currency: "USD"}
	won, p := r.Row([]string{"Jane Roe (jane@example.com)", "won", "12/01/2026", "12/03/2026 10:00", ""})
	if p != nil {
		t.Fatal(p.Message)
	}
	open, p := r.Row([]string{"Jane Roe", "qualified", "", "12/03/2026 10:00", "$5"})
	if p != nil {
		t.Fatal(p.Message)
	}
	created := time.Date(2026, 12, 2, 22, 37, 11, 0, time.UTC)
	dayFirst := r
	dayFirst.Mapping.DateOrder = stagecsv.DayFirst
	row := func(r stagecsv.Reader, closed string) stagecsv.Row {
		t.Helper()
		row, p := r.Row([]string{"Jane Roe (jane@example.com)", "won", closed, "", ""})
		if p != nil {
			t.Fatal(p.Message)
		}
		return row
	}
	tests := []struct {
		name string
		got  stagecsv.Problem
		want string
	}{
		{"before the lead", r.BeforeLead(won, created),
			"Close Date: Close Date 12/01/2026 (read as Dec 1, 2026, month first) is before the lead was captured (Dec 2, 2026 4:37 PM CST)"},
		{"the other row's date", r.BeforeLead(open, created),
			"Last Modified Date: Last Modified Date \"12/03/2026 10:00\" (read as Dec 3, 2026 10:00 AM CST, month first) is before the lead was captured (Dec 2, 2026 4:37 PM CST)"},
		{"not an email", r.Explain(open, "lead.email", "lead.email is not an email address"),
			`Associated Contact: Associated Contact "Jane Roe" is not an email address`},
		{"no lead", r.Explain(won, "lead.email", "no lead of this account has this email"),
			`Associated Contact: Associated Contact "Jane Roe (jane@example.com)": no lead of this account has this email`},
		{"in the future", r.Explain(won, "occurred_at", "occurred_at is in the future"), "Close Date: Close Date 12/01/2026 (read as Dec 1, 2026, month first) is in the future"},
		// A date only one order reads is not explained.
		{"a date of one reading", r.BeforeLead(row(r, "12/13/2026"), created),
			"Close Date: Close Date 12/13/2026 is before the lead was captured (Dec 2, 2026 4:37 PM CST)"},
		{"an ISO date", r.BeforeLead(row(r, "2026-12-01"), created),
			"Close Date: Close Date 2026-12-01 is before the lead was captured (Dec 2, 2026 4:37 PM CST)"},
		{"day first", r.BeforeLead(row(dayFirst, "07/12/2026"), created),
			"Close Date: Close Date 07/12/2026 (read as Dec 7, 2026, day first) is before the lead was captured (Dec 2, 2026 4:37 PM CST)"},
		{"a field with a colon", r.Explain(won, "stage", "stage: stage names are at most 100 characters"),
			"Deal Stage: Deal Stage won: stage names are at most 100 characters"},
		{"an empty value", r.Explain(won, "value", "stage won sends a Purchase, which needs the deal's value"),
			"Amount: Amount is empty: stage won sends a Purchase, which needs the deal's value"},
		{"no column", r.Explain(won, "lead", "lead must name the lead"), ": lead must name the lead"},
	}
	for _, tt := range tests {
		if got := tt.got.Column + ": " + tt.got.Message; got != tt.want {
			t.Errorf("%s: %q; want %q", tt.name, got, tt.want)
		}
	}
}

// A careless file's huge header and cells are cut short in messages,
// which are stored for up to a thousand rows.
func TestMessagesCutHugeNames(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	r := stagecsv.Reader{Mapping: stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 2}, DateOrder: "mdy"},
		Header: []string{huge, "stage", "date"}, Loc: time.UTC}
	row, p := r.Row([]string{huge, "won", "2026-12-01"})
	if p != nil {
		t.Fatal(p.Message)
	}
	got := r.Explain(row, "lead.email", "lead.email is not an email address")
	if len(got.Column) > 400 || len(got.Message) > 1000 {
		t.Errorf("a 1 MiB header and cell make a %d-byte column and a %d-byte message", len(got.Column), len(got.Message))
	}
}
