package stagecsv_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
)

func TestReadRefusesBadFiles(t *testing.T) {
	tests := []struct {
		name string
		file string
		want string // part of the message
	}{
		{"empty", "", "The file is empty"},
		{"only spaces", " \r\n\n", "The file is empty"},
		{"only a BOM", "\xEF\xBB\xBF", "The file is empty"},
		{"xlsx", "PK\x03\x04rest", "workbook (.xlsx)"},
		{"utf16", "\xFF\xFEe\x00m\x00", "UTF-16"},
		{"NUL", "email,stage,occurred_at\na@b.co,won\x00,2026-12-01\n", "NUL byte on line 2"},
		{"latin1", "email,stage,occurred_at\nj\xe9@b.co,won,2026-12-01\n", "not UTF-8 text (line 2"},
		{"blank header", ",,\na@b.co,won,2026-12-01\n", "The first row is empty"},
		{"one column", "email stage occurred_at\na@b.co won 2026-12-01\n", "needs at least three"},
		{"no header", "a@b.co,won,2026-12-01\nc@d.co,won,2026-12-02\n", "holds values"},
		{"header only", "email,stage,occurred_at\n", "no stage changes"},
		{"header and blank rows", "email,stage,occurred_at\n,,\n\n", "no stage changes"},
		{"too large", "email,stage,occurred_at\n" + strings.Repeat("x", stagecsv.MaxBytes), "at most 20 MiB"},
		{"too many rows", "email,stage,occurred_at\n" + strings.Repeat("a@b.co,won,2026-12-01\n", stagecsv.MaxRows+1), "more than 100,000 rows"},
		{"bad quotes", "email,stage,occurred_at\n\"a@b.co,won,2026-12-01\n", "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stagecsv.Read([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read(%.40q) = %v; want an error with %q", tt.file, err, tt.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		header []string
		rows   [][]string
		lines  []int
	}{
		{"commas with a BOM and CRLF", "\xEF\xBB\xBFEmail,Stage,Date\r\na@b.co,won,2026-12-01\r\n",
			[]string{"Email", "Stage", "Date"}, [][]string{{"a@b.co", "won", "2026-12-01"}}, []int{2}},
		{"semicolons", "Email;Stage;Date;Amount\na@b.co;won;01.12.2026;\"1.200,50\"\n",
			[]string{"Email", "Stage", "Date", "Amount"}, [][]string{{"a@b.co", "won", "01.12.2026", "1.200,50"}}, []int{2}},
		{"tabs", "Email\tStage\tDate\na@b.co\twon\t2026-12-01\n",
			[]string{"Email", "Stage", "Date"}, [][]string{{"a@b.co", "won", "2026-12-01"}}, []int{2}},
		{"short rows, blank rows skipped, line numbers", "email,stage,occurred_at,value\n\na@b.co,won\n,,,\nc@d.co,\"qual\nified\",2026-12-01\ne@f.co,won,2026-12-01\n",
			[]string{"email", "stage", "occurred_at", "value"},
			[][]string{{"a@b.co", "won"}, {"c@d.co", "qual\nified", "2026-12-01"}, {"e@f.co", "won", "2026-12-01"}}, []int{3, 5, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := stagecsv.Read([]byte(tt.file))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := f.Header; !reflect.DeepEqual(got, tt.header) {
				t.Errorf("header = %q; want %q", got, tt.header)
			}
			if got := f.Rows; !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows = %q; want %q", got, tt.rows)
			}
			if got := f.Lines; !reflect.DeepEqual(got, tt.lines) {
				t.Errorf("lines = %v; want %v", got, tt.lines)
			}
		})
	}
}

func TestGuess(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		country string
		want    stagecsv.Mapping
	}{
		{"the API's names", "email,stage,occurred_at,value,currency,change_id\na@b.co,won,2026-12-01,1,EUR,x\n", "DE",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 2, "value": 3, "currency": 4, "change_id": 5}, DateOrder: "dmy"}},
		{"CRM export names", "Deal Name,Deal Stage,Close Date,Amount,Currency Code,Email Address,Phone Number\nBig,won,12/01/2026,1,USD,a@b.co,+1 555\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"stage": 1, "won_at": 2, "value": 3, "currency": 4, "email": 5, "phone": 6}, DateOrder: "mdy"}},
		{"lead id holding Meta's ids", "Lead ID,Lead Status,Date\n123456789012345,won,13/01/2026\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"meta_lead_id": 0, "stage": 1, "occurred_at": 2}, DateOrder: "dmy"}},
		{"lead id holding leadsignal's ids", "Lead ID,Lead Status,Date\n42,won,01/13/2026\n", "FR",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"id": 0, "stage": 1, "occurred_at": 2}, DateOrder: "mdy"}},
		{"first of a name wins; unknown columns left", "E-mail,Notes,Email,Stage,Deal Value,Timestamp\na,b,c,d,e,f\n", "",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 3, "value": 4, "occurred_at": 5}, DateOrder: "mdy"}},
		{"nothing known", "Foo,Bar,Baz\n1,2,3\n", "GB", stagecsv.Mapping{Columns: map[stagecsv.Target]int{}, DateOrder: "dmy"}},
		{"a status beside a stage is the status", "Email,Stage,Status,Updated\na@b.co,proposal,Won,13/01/2026\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "status": 2, "updated_at": 3}, DateOrder: "dmy"}},
		{"a status alone is the stage", "Email,Status,Date\na@b.co,qualified,2026-01-13\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 2}, DateOrder: "mdy"}},
		{"a contact column with emails, when no email column", "Deal Stage,Associated Contact,Close Date\nwon,Jane Roe (jane@b.co),2026-01-13\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"stage": 0, "email": 1, "won_at": 2}, DateOrder: "mdy"}},
		{"a contact column without emails is left", "Stage,Contact Name,Date\nwon,Jane Roe,2026-01-13\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"stage": 0, "occurred_at": 2}, DateOrder: "mdy"}},
		{"an email column beats a contact column", "Contact,Stage,Date,Email\nJane <jane@b.co>,won,2026-01-13,j@b.co\n", "US",
			stagecsv.Mapping{Columns: map[stagecsv.Target]int{"stage": 1, "occurred_at": 2, "email": 3}, DateOrder: "mdy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := stagecsv.Read([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := stagecsv.Guess(f, tt.country); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Guess = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestMappingProblems(t *testing.T) {
	header := []string{"email", "stage", "date"}
	tests := []struct {
		name string
		m    stagecsv.Mapping
		want []string // parts, one per problem
	}{
		{"complete", stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 2}, DateOrder: "mdy"}, nil},
		{"no key, no date", stagecsv.Mapping{Columns: map[stagecsv.Target]int{"stage": 1}, DateOrder: "dmy"},
			[]string{"finds each row's lead", "date of the change (occurred_at)"}},
		{"a won date is a date", stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "won_at": 2}, DateOrder: "dmy"}, nil},
		{"one column twice", stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 1}, DateOrder: "dmy"},
			[]string{"“stage” is chosen for both Stage and Date of the change"}},
		{"out of range, no order", stagecsv.Mapping{Columns: map[stagecsv.Target]int{"email": 0, "stage": 1, "occurred_at": 7}},
			[]string{"Date of the change is not in the file", "month first or day first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.Problems(header)
			if len(got) != len(tt.want) {
				t.Fatalf("Problems = %q; want %d problems", got, len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q; want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		in    string
		order stagecsv.DateOrder
		loc   *time.Location
		want  time.Time
		ok    bool
	}{
		{"2026-12-01T14:03:00Z", "mdy", berlin, utc("2026-12-01T14:03:00Z"), true},
		{"2026-12-01T14:03:00.250+01:00", "mdy", time.UTC, utc("2026-12-01T13:03:00.25Z"), true},
		{"2026-12-01 14:03:00Z", "mdy", berlin, utc("2026-12-01T14:03:00Z"), true},
		{"2026-12-01 14:03:00+01", "mdy", time.UTC, utc("2026-12-01T13:03:00Z"), true},
		{"2026-12-01 14:03:00-0500", "mdy", time.UTC, utc("2026-12-01T19:03:00Z"), true},
		{"2026-12-01T14:03Z", "mdy", time.UTC, utc("2026-12-01T14:03:00Z"), true},
		{"2026-12-01 14:03", "mdy", berlin, utc("2026-12-01T13:03:00Z"), true},
		{"2026-12-01T14:03:05", "mdy", time.UTC, utc("2026-12-01T14:03:05Z"), true},
		{"2026-12-01", "mdy", time.UTC, utc("2026-12-01T00:00:00Z"), true},
		{"2026-12-01", "mdy", berlin, utc("2026-11-30T23:00:00Z"), true},
		{"2026-07-01", "dmy", berlin, utc("2026-06-30T22:00:00Z"), true},
		{"12/01/2026", "mdy", time.UTC, utc("2026-12-01T00:00:00Z"), true},
		{"12/01/2026", "dmy", time.UTC, utc("2026-01-12T00:00:00Z"), true},
		{"1/2/2026 2:03 PM", "mdy", time.UTC, utc("2026-01-02T14:03:00Z"), true},
		{"1/2/2026 12:03 am", "mdy", time.UTC, utc("2026-01-02T00:03:00Z"), true},
		{"01/12/2026 14:03:09", "dmy", time.UTC, utc("2026-12-01T14:03:09Z"), true},
		{"01.12.2026 14:03", "mdy", time.UTC, utc("2026-12-01T14:03:00Z"), true},
		{"12-01-2026", "mdy", time.UTC, utc("2026-12-01T00:00:00Z"), true},
		{"1764597780", "mdy", berlin, utc("2025-12-01T14:03:00Z"), true},
		{"1764597780000", "mdy", berlin, utc("2025-12-01T14:03:00Z"), true},
		{"13/01/2026", "mdy", time.UTC, time.Time{}, false},
		{"02/30/2026", "mdy", time.UTC, time.Time{}, false},
		{"1/2/2026 13:03 PM", "mdy", time.UTC, time.Time{}, false},
		{"2026-13-01", "mdy", time.UTC, time.Time{}, false},
		{"yesterday", "mdy", time.UTC, time.Time{}, false},
		{"Dec 1, 2026", "mdy", time.UTC, time.Time{}, false},
		{"", "mdy", time.UTC, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := stagecsv.ParseTime(tt.in, tt.order, tt.loc)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("ParseTime(%q, %s, %s) = %v, %v; want %v, %v", tt.in, tt.order, tt.loc, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1200", 1200, true},
		{"1200.5", 1200.5, true},
		{"1,200.50", 1200.5, true},
		{"1.200,50", 1200.5, true},
		{"1,200", 1200, true},
		{"12,5", 12.5, true},
		{"1.200.000", 1200000, true},
		{"1,200,000", 1200000, true},
		{"$1,200", 1200, true},
		{"€ 1.200,50", 1200.5, true},
		{"1 200,50 EUR", 1200.5, true},
		{"1'200.50 CHF", 1200.5, true},
		{"USD 99", 99, true},
		{".5", 0.5, true},
		{"-5", -5, true},
		{"0x10", 0, false},
		{"abc", 0, false},
		{"1.2.3,4.5", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := stagecsv.ParseNumber(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseNumber(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
