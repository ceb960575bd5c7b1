package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// A stage change before its lead is refused, but a date with no time on
// the lead's own day (in the account's zone) is that day: recorded just
// after the lead.
func TestCheckLeadDateOnly(t *testing.T) {
	chicago, err := time.LoadLocation("America/Chicago")
	if err != nil {
		t.Fatal(err)
	}
	acc := accountState{Account: models.Account{Timezone: "America/Chicago"}}
	created := time.Date(2026, 12, 2, 16, 37, 11, 500, chicago) // 22:37:11 UTC
	lead := models.Lead{CreatedAt: created}
	justAfter := created.UTC().Truncate(time.Second).Add(time.Second)
	tests := []struct {
		name     string
		at       time.Time
		dateOnly bool
		want     time.Time // zero: refused
	}{
		{"the lead's day, no time", time.Date(2026, 12, 2, 0, 0, 0, 0, chicago), true, justAfter},
		{"the lead's day, with a time before it", time.Date(2026, 12, 2, 9, 0, 0, 0, chicago), false, time.Time{}},
		{"the day before, no time", time.Date(2026, 12, 1, 0, 0, 0, 0, chicago), true, time.Time{}},
		{"a later day, no time", time.Date(2026, 12, 3, 0, 0, 0, 0, chicago), true, time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Change{OccurredAt: tt.at.UTC(), DateOnly: tt.dateOnly, Stage: "won"}
			r := checkLead(acc, lead, &c)
			switch {
			case tt.want.IsZero() && (r == nil || r.Code != BeforeLead):
				t.Errorf("checkLead(%v) = %v, at %v; want refused before the lead", tt.at, r, c.OccurredAt)
			case !tt.want.IsZero() && (r != nil || !c.OccurredAt.Equal(tt.want)):
				t.Errorf("checkLead(%v) = %v, at %v; want recorded at %v", tt.at, r, c.OccurredAt, tt.want)
			}
		})
	}
}

// A refusal names the field's own limit, whatever way in the change came
// by, and quotes a refused value back cut short: a 40,000 character
// currency is not repeated.
func TestCheckRefusesLongValuesByTheirOwnLimits(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	acc := accountState{Account: models.Account{Currency: "USD"}}
	value := 100.0
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, field, want string
		change            Change
	}{
		{"stage", "stage", "at most 100 characters", Change{Stage: long(40000)}},
		{"change id over its limit", "change_id", "longer than 200 bytes", Change{Stage: "won", ChangeID: ptr(long(201))}},
		{"change id of 40,000 bytes", "change_id", "longer than 200 bytes", Change{Stage: "won", ChangeID: ptr(long(40000))}},
		{"short currency", "currency", `not "EURO"`, Change{Stage: "won", Value: &value, Currency: "EURO"}},
		{"long currency", "currency", "ISO 4217", Change{Stage: "won", Value: &value, Currency: long(40000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.change
			c.OccurredAt = now.Add(-time.Hour)
			r := check(acc, &c, now)
			if r == nil || r.Field != tt.field || !strings.Contains(r.Message, tt.want) || len(r.Message) > 200 {
				t.Errorf("check = %+v; want %s refused, saying %q, in under 200 bytes", r, tt.field, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
