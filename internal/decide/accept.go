package decide

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// Every rule of accepting a stage change, for every way in. A change is
// checked in two steps: what it says on its own (check), then against its
// lead (checkLead). Both fix up what the change's Origin allows to be
// fixed up (a CRM's clock) and refuse the rest.

// maxChangeID is the longest change_id, in bytes.
const maxChangeID = 200

// futureSlack is how far ahead of our clock a change's time may be: the
// sender's clock may run a little ahead.
const futureSlack = 5 * time.Minute

// check makes c what the account records: its stage spelled as the
// account's list spells it, its time in UTC to the microsecond (as
// Postgres keeps it), a value's currency upper-cased or the account's.
// It refuses what no lead could make acceptable.
func check(acc accountState, c *Change, now time.Time) *Refusal {
	c.Stage = strings.TrimSpace(c.Stage)
	marker := c.Stage == models.StageJunk || c.Stage == models.StageNotJunk
	switch {
	case c.Origin == FromPerson && marker:
	case c.Origin == FromPerson:
		i := acc.names.Index(c.Stage)
		if i < 0 {
			return invalid("stage", "choose one of the account's stages")
		}
		c.Stage = acc.stages[i].Name
	default:
		if msg := name.StageProblem(c.Stage); msg != "" {
			return invalid("stage", "stage: %s", msg)
		}
		// A stage by its name or an alias is recorded by its name; a label
		// that names none is recorded as it came, and sends nothing.
		if i := acc.names.Index(c.Stage); i >= 0 {
			c.Stage = acc.stages[i].Name
		}
	}

	if c.OccurredAt.IsZero() {
		return invalid("occurred_at", "occurred_at is required: when the lead reached the stage, an RFC 3339 time like 2026-12-01T14:03:00Z")
	}
	c.OccurredAt = c.OccurredAt.UTC().Truncate(time.Microsecond)
	if c.OccurredAt.After(now.Add(futureSlack)) {
		if c.Origin != FromCRM {
			return invalid("occurred_at", "occurred_at is in the future")
		}
		c.OccurredAt = now.UTC().Truncate(time.Microsecond)
	}

	if v := c.Value; v != nil && (math.IsNaN(*v) || *v < 0 || *v > rule.MaxValue) {
		return invalid("value", "value must be a number between 0 and %.0f", float64(rule.MaxValue))
	}
	c.Currency = strings.ToUpper(strings.TrimSpace(c.Currency))
	switch {
	case c.Currency != "" && !country.ValidCurrency(c.Currency):
		return invalid("currency", "currency must be an ISO 4217 code like USD or EUR, not %q", name.Cut(c.Currency, 20))
	case c.Value == nil:
		// A currency goes to Meta with a value only.
		c.Currency = ""
	case c.Currency == "":
		c.Currency = acc.Currency
	}

	if c.ChangeID != nil {
		id := strings.TrimSpace(*c.ChangeID)
		switch {
		case id == "":
			return invalid("change_id", "change_id must not be empty; leave it out instead")
		case len(id) > maxChangeID:
			return invalid("change_id", "change_id is longer than %d bytes", maxChangeID)
		case strings.IndexFunc(id, name.Invisible) >= 0:
			return invalid("change_id", "change_id holds an invisible or control character")
		}
		c.ChangeID = &id
	}
	return nil
}

// checkLead checks c against its lead l and the account's rules: a change
// cannot come before its lead (but a CRM's, and a date with no time on
// the lead's own day, are taken as just after it), and a Purchase that
// takes its value from the change needs one (ChangeProblem).
func checkLead(acc accountState, l models.Lead, c *Change) *Refusal {
	first := l.CreatedAt.UTC().Truncate(time.Second)
	if c.OccurredAt.Before(first) {
		if c.Origin != FromCRM && !(c.DateOnly && sameDay(c.OccurredAt, l.CreatedAt, acc.Timezone)) {
			return &Refusal{Code: BeforeLead, Field: "occurred_at",
				Message: fmt.Sprintf("occurred_at is before the lead was captured (%s): a stage change cannot come first",
					l.CreatedAt.UTC().Format(time.RFC3339))}
		}
		c.OccurredAt = first.Add(time.Second)
	}
	if c.Origin == FromCRM {
		return nil // the Purchase is held back with its reason
	}
	if msg := ChangeProblem(acc.rules, models.StageChange{Stage: c.Stage, Value: c.Value}); msg != "" {
		return &Refusal{Code: ValueRequired, Field: "value", Message: msg}
	}
	return nil
}

// sameDay reports whether times a and b fall on one day in the zone tz
// (the account's; UTC when unknown).
func sameDay(a, b time.Time, tz string) bool {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	ay, am, ad := a.In(loc).Date()
	by, bm, bd := b.In(loc).Date()
	return ay == by && am == bm && ad == bd
}

// notFound is the refusal of a change whose keys find no lead: the field
// of its first key is at fault.
func notFound(c Change) *Refusal {
	field := "lead"
	if len(c.Keys) > 0 {
		field = c.Keys[0].Field
	}
	return &Refusal{Code: LeadNotFound, Field: "lead." + field,
		Message: fmt.Sprintf("no lead of this account has this %s", strings.ReplaceAll(field, "_", " "))}
}

func invalid(field, format string, args ...any) *Refusal {
	return &Refusal{Code: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// isNewest reports whether a stage change at would be the newest of a
// lead's stage changes (junk markers aside), and so set its stage
// (after).
func isNewest(history []models.StageChange, at time.Time) bool {
	for _, c := range history {
		if c.Stage != models.StageJunk && c.Stage != models.StageNotJunk && c.OccurredAt.After(at) {
			return false
		}
	}
	return true
}

// after is lead l as stage change c leaves it: a junk or not_junk marker
// sets the person's verdict; any other stage becomes the lead's stage
// when it is the newest change.
func after(l models.Lead, c models.StageChange, newest bool) models.Lead {
	switch c.Stage {
	case models.StageJunk:
		l.Junk, l.JunkOverride = true, "junk"
	case models.StageNotJunk:
		l.Junk, l.JunkOverride = false, "not_junk"
	default:
		if newest {
			l.Stage = c.Stage
		}
	}
	return l
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
