package stagecsv

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	isoZoned = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"}
	isoLocal = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02T03:04:05 PM", "2006-01-02T03:04 PM"}
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
//     2026-12-01 02:03:05 PM, 2026-12-01 (midnight);
//   - numbers with slashes, dots or dashes, the year last, in loc:
//     12/01/2026, 12/01/2026 14:03, 12/01/2026 2:03 PM; slashes and dashes
//     in order o, dots always day first (01.12.2026);
//   - Unix time in seconds (10 digits) or milliseconds (13 digits).
func ParseTime(s string, o DateOrder, loc *time.Location) (time.Time, bool) {
	t, _, ok := ParseDate(s, o, loc)
	return t, ok
}

// ParseDate is ParseTime that also says whether s is a date alone, with
// no time of day (2026-12-01, 12/01/2026): that day, read as its
// midnight in loc.
func ParseDate(s string, o DateOrder, loc *time.Location) (t time.Time, dateOnly, ok bool) {
	s = strings.TrimSpace(s)
	if isoDateRE.MatchString(s) {
		t, err := time.ParseInLocation("2006-01-02", s, loc)
		return t, true, err == nil
	}
	t, ok = parseTime(s, o, loc)
	if !ok {
		return t, false, false
	}
	d, numeric := parseNumeric(s)
	return t, numeric && d.noTime, true
}

var isoDateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func parseTime(s string, o DateOrder, loc *time.Location) (time.Time, bool) {
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
	shortZoneRE = regexp.MustCompile(`^(.*T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-]\d{2}):?(\d{2})?$`)
)

// numeric is a date of numbers: a and b (month and day in some order),
// the separator between them, the year and an optional time.
type numeric struct {
	a, b, year     int
	sep            byte
	hour, min, sec int
	ampm           string
	// noTime: the date has no time of day.
	noTime bool
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
	return numeric{a: n(m[1]), sep: m[2][0], b: n(m[3]), year: n(m[4]), hour: n(m[5]), min: n(m[6]), sec: n(m[7]), ampm: m[8], noTime: m[5] == ""}, true
}
