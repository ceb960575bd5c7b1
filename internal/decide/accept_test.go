package decide

import (
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
