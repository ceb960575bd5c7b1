package stagecsv

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/capture"
)

// Problem is why a row stays out, in the stage API's terms: the field
// and a message for a person.
type Problem struct {
	Field   string
	Message string
}

// Request is the stage API's body that row makes under m, its dates read
// in loc (the account's time zone); or the Problem of a cell that cannot
// become its field (a date or number that cannot be read, a lead id that
// is not a number). Everything else is the body's Validate's to check:
// callers validate the request exactly as POST /api/v1/stages does. Empty
// cells are left out, as a body leaves out a field.
func (m Mapping) Request(row []string, loc *time.Location) (capture.StageRequest, *Problem) {
	var req capture.StageRequest
	text := func(t Target) *string {
		v := Cell(row, m.Column(t))
		if v == "" {
			return nil
		}
		return &v
	}
	if v := text(ID); v != nil {
		id, err := strconv.ParseInt(*v, 10, 64)
		if err != nil {
			return req, &Problem{Field: "lead.id", Message: "lead.id must be a lead's id, a positive integer, not " + strconv.Quote(*v)}
		}
		req.Lead.ID = &id
	}
	req.Lead.ExternalID, req.Lead.MetaLeadID, req.Lead.Email, req.Lead.Phone = text(ExternalID), text(MetaLeadID), text(Email), text(Phone)
	req.Stage = Cell(row, m.Column(Stage))
	at := Cell(row, m.Column(OccurredAt))
	if at == "" {
		return req, &Problem{Field: "occurred_at", Message: "occurred_at is empty: each row needs the date its lead reached the stage"}
	}
	t, ok := ParseTime(at, m.DateOrder, loc)
	if !ok {
		return req, &Problem{Field: "occurred_at", Message: "occurred_at " + strconv.Quote(at) + " is not a date this upload reads: write it like 2026-12-01T14:03:00Z, 2026-12-01 14:03 or " + exampleDate(m.DateOrder)}
	}
	req.OccurredAt = t.Format(time.RFC3339Nano)
	if v := text(Value); v != nil {
		n, ok := ParseNumber(*v)
		if !ok {
			return req, &Problem{Field: "value", Message: "value " + strconv.Quote(*v) + " is not a number like 1200 or 1,200.50"}
		}
		req.Value = &n
	}
	req.Currency = Cell(row, m.Column(Currency))
	req.ChangeID = text(ChangeID)
	return req, nil
}

func exampleDate(o DateOrder) string {
	if o == DayFirst {
		return "01/12/2026 (day first)"
	}
	return "12/01/2026 (month first)"
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

var (
	isoZoned = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"}
	isoLocal = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}
	// numericRE is a date of numbers with slashes, dots or dashes, the
	// year last, with an optional time (seconds and AM/PM optional).
	numericRE = regexp.MustCompile(`^(\d{1,2})([/.-])(\d{1,2})[/.-](\d{4})(?:[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$`)
	// dateLike and numberLike tell values from column names.
	dateLike   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}|^\d{1,2}[/.]\d{1,2}[/.]\d{4}`)
	numberLike = regexp.MustCompile(`^[0-9][0-9.,]*$`)
	unixRE     = regexp.MustCompile(`^\d{10}$|^\d{13}$`)
)

// ParseTime reads a stage change's date as CRMs export it:
//   - RFC 3339, with a T or a space before the time: 2026-12-01T14:03:00Z,
//     2026-12-01 14:03:00+01:00;
//   - ISO without a zone, in loc: 2026-12-01 14:03, 2026-12-01T14:03:05,
//     2026-12-01 (midnight);
//   - numbers with slashes, dots or dashes, the year last, in loc:
//     12/01/2026, 12/01/2026 14:03, 12/01/2026 2:03 PM; slashes and dashes
//     in order o, dots always day first (01.12.2026);
//   - Unix time in seconds (10 digits) or milliseconds (13 digits).
func ParseTime(s string, o DateOrder, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if unixRE.MatchString(s) {
		n, _ := strconv.ParseInt(s, 10, 64)
		if len(s) == 13 {
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	iso := s
	if len(iso) > 10 && iso[10] == ' ' {
		iso = iso[:10] + "T" + strings.TrimSpace(iso[11:])
	}
	// A zone written +01 or +0100 (Postgres, some exports) becomes +01:00.
	if m := shortZoneRE.FindStringSubmatch(iso); m != nil {
		zone := m[3]
		if zone == "" {
			zone = "00"
		}
		iso = m[1] + m[2] + ":" + zone
	}
	for _, l := range isoZoned {
		if t, err := time.Parse(l, iso); err == nil {
			return t, true
		}
	}
	for _, l := range isoLocal {
		if t, err := time.ParseInLocation(l, iso, loc); err == nil {
			return t, true
		}
	}
	d, ok := parseNumeric(s)
	if !ok {
		return time.Time{}, false
	}
	month, day := d.a, d.b
	if d.sep == '.' || o == DayFirst {
		month, day = d.b, d.a
	}
	hour := d.hour
	switch strings.ToLower(d.ampm) {
	case "am", "pm":
		if hour < 1 || hour > 12 {
			return time.Time{}, false
		}
		hour %= 12
		if strings.EqualFold(d.ampm, "pm") {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || d.min > 59 || d.sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(d.year, time.Month(month), day, hour, d.min, d.sec, 0, loc)
	if t.Day() != day {
		// February 30 and the like: time.Date would roll it over.
		return time.Time{}, false
	}
	return t, true
}

var (
	shortZoneRE   = regexp.MustCompile(`^(.*T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-]\d{2}):?(\d{2})?$`)
	plainNumberRE = regexp.MustCompile(`^-?[0-9]*\.?[0-9]+$|^-?[0-9]+\.$`)
)

// numeric is a date of numbers: a and b (month and day in some order),
// the separator between them, the year and an optional time.
type numeric struct {
	a, b, year     int
	sep            byte
	hour, min, sec int
	ampm           string
}

func parseNumeric(s string) (numeric, bool) {
	m := numericRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return numeric{}, false
	}
	n := func(s string) int {
		v, _ := strconv.Atoi(s)
		return v
	}
	return numeric{a: n(m[1]), sep: m[2][0], b: n(m[3]), year: n(m[4]), hour: n(m[5]), min: n(m[6]), sec: n(m[7]), ampm: m[8]}, true
}

// ParseNumber reads a deal value as CRMs and spreadsheets write it: a
// currency sign or code before or after (ignored here; the currency column
// says the currency), spaces or apostrophes between thousands, and commas
// or dots: with both, the last is the decimal point (1,200.50 and
// 1.200,50); a lone comma followed by exactly three digits separates
// thousands (1,200), otherwise it is the decimal point (12,5); a lone dot
// is always the decimal point, several separate thousands (1.200.000).
func ParseNumber(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9') && r != '-' && r != '.' && r != ',' })
	s = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "", "\u2019", "").Replace(s)
	if s == "" {
		return 0, false
	}
	comma, dot := strings.LastIndexByte(s, ','), strings.LastIndexByte(s, '.')
	switch {
	case comma >= 0 && dot >= 0:
		decimal, group := ",", "."
		if dot > comma {
			decimal, group = ".", ","
		}
		if strings.Count(s, decimal) > 1 {
			return 0, false
		}
		s = strings.ReplaceAll(s, group, "")
		s = strings.Replace(s, ",", ".", 1)
	case comma >= 0:
		if strings.Count(s, ",") > 1 || len(s)-comma-1 == 3 {
			s = strings.ReplaceAll(s, ",", "")
		} else {
			s = strings.Replace(s, ",", ".", 1)
		}
	case strings.Count(s, ".") > 1:
		s = strings.ReplaceAll(s, ".", "")
	}
	if !plainNumberRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
