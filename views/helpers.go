package views

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

func inputType(t string) string {
	if t == "" {
		return "text"
	}
	return t
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// CountCap is the most a page counts: past it, it says "10,000+" rather
// than count every row of a large account on each view.
const CountCap = 10_000

// SearchCountCap is the most a free-text search of leads counts: a common
// term matches a large part of a big account, and a person searching reads
// the newest matches, not their number.
const SearchCountCap = 1_000

// count writes a count made with CountCap+1 as its limit, with thousands
// separators: "1,234", or "10,000+" when it reached past the cap.
func count(n int64) string { return countUpTo(n, CountCap) }

// countUpTo writes a count made with limit+1 as its limit.
func countUpTo(n, limit int64) string {
	if n > limit {
		return countUpTo(limit, limit) + "+"
	}
	s := itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural writes n with the noun that goes with it: "1 event", "2 events".
func plural(n int64, one, many string) string { return pluralUpTo(n, CountCap, one, many) }

// Plural writes an exact count n, with thousands separators, and the noun
// that goes with it, for handlers' messages: "8,214 events".
func Plural(n int64, one, many string) string { return pluralUpTo(n, math.MaxInt64, one, many) }

// noun is the noun that goes with n, without n: "lead" for 1, else "leads".
func noun(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pluralUpTo is plural for a count made with limit+1 as its limit.
func pluralUpTo(n, limit int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return countUpTo(n, limit) + " " + many
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// Span writes a duration the way people say it: "12 hours", "14 days",
// "90 minutes"; the largest unit that divides it evenly.
func Span(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d >= day && d%day == 0:
		return plural(int64(d/day), "day", "days")
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour", "hours")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute", "minutes")
	}
	return d.String()
}

// Elapsed writes how long something has lasted, to the unit people would
// say: "40 s", "14 min", "3 h 5 min", "2 days 4 h".
func Elapsed(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	return strconv.Itoa(days) + " days " + strconv.Itoa(h) + " h"
}

// campaignLabel shows a utm_campaign as people typed it: the counts keep it
// as written in the URL.
func campaignLabel(raw string) string {
	if s, err := url.QueryUnescape(raw); err == nil {
		return s
	}
	return raw
}

// Stamp is a moment as a list shows it: Short on one line ("Nov 27,
// 22:26", "14 min ago" today, "Nov 27, 2025" in another year), Full on
// hover and ISO for the <time> element.
type Stamp struct {
	Short string
	Full  string
	ISO   string
}

// NewStamp writes t in loc as seen at now.
func NewStamp(t, now time.Time, loc *time.Location) Stamp {
	if t.IsZero() {
		return Stamp{}
	}
	t, now = t.In(loc), now.In(loc)
	s := Stamp{Full: t.Format("Mon Jan 2, 2006, 15:04:05 MST"), ISO: t.Format(time.RFC3339)}
	ty, tm, td := t.Date()
	ny, nm, nd := now.Date()
	ago := now.Sub(t)
	switch {
	case ty == ny && tm == nm && td == nd && ago >= 0 && ago < time.Minute:
		s.Short = "just now"
	case ty == ny && tm == nm && td == nd && ago >= 0 && ago < time.Hour:
		s.Short = strconv.Itoa(int(ago/time.Minute)) + " min ago"
	case ty == ny && tm == nm && td == nd:
		s.Short = "Today, " + t.Format("15:04")
	case ty == ny:
		s.Short = t.Format("Jan 2, 15:04")
	default:
		s.Short = t.Format("Jan 2, 2006")
	}
	return s
}

// EventStatusWord is an event's state in one word, the same on every page,
// filter and CSV (DESIGN.md "Event states"): pass Event.State(), which
// tells a failed event held back by our check from one Meta refused.
func EventStatusWord(s models.EventStatus) string {
	switch s {
	case models.EventQueued:
		return "Waiting"
	case models.EventSending:
		return "Sending"
	case models.EventSent:
		return "Sent"
	case models.EventHeldBack:
		return "Held back"
	case models.EventFailed:
		return "Failed"
	case models.EventExpired:
		return "Expired"
	case models.EventNotSent:
		return "Not sent"
	case models.EventDryRun:
		return "Dry run"
	}
	return string(s)
}

// EventStatusMeaning says what a state means, on hover of its word.
func EventStatusMeaning(s models.EventStatus) string {
	switch s {
	case models.EventQueued:
		return "Queued: goes to its destination when its turn comes"
	case models.EventSending:
		return "Being sent to its destination now"
	case models.EventSent:
		return "Its destination's platform received it"
	case models.EventHeldBack:
		return "Not sent: its platform would refuse it as it is; the lead, the rule or the destination must change"
	case models.EventFailed:
		return "Its platform refused it"
	case models.EventExpired:
		return "Not sent: older than 7 days when its turn came"
	case models.EventNotSent:
		return "Cancelled: the lead no longer matches the rule, or was marked junk"
	case models.EventDryRun:
		return "Built and logged, never sent: the dataset is in dry run"
	}
	return ""
}

// EventReason is why event e is where it is, after its state's word: the
// reason it was kept with, without the "not sent: " that the words "Held
// back" and "Not sent" already say.
func EventReason(e models.Event) string {
	switch e.State() {
	case models.EventHeldBack, models.EventNotSent:
		return strings.TrimPrefix(e.LastError, models.ReasonNotSent)
	}
	return e.LastError
}

// EventStatusBadge is the badge class that goes with a state.
func EventStatusBadge(s models.EventStatus) string {
	switch s {
	case models.EventSent:
		return "ok"
	case models.EventFailed, models.EventHeldBack:
		return "bad"
	case models.EventQueued, models.EventSending:
		return "warn"
	}
	return "muted"
}

// initial is the first letter of an email, capitalised, for the user menu
// on a phone.
func initial(email string) string {
	for _, r := range email {
		return strings.ToUpper(string(r))
	}
	return "?"
}
