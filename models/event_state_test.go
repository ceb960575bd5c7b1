package models_test

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

func TestEventState(t *testing.T) {
	tests := []struct {
		name   string
		status models.EventStatus
		reason string
		want   models.EventStatus
	}{
		{"waiting", models.EventQueued, "", models.EventQueued},
		{"waiting after a try", models.EventQueued, "Meta unreachable: timeout", models.EventQueued},
		{"sent", models.EventSent, "", models.EventSent},
		{"refused by Meta", models.EventFailed, "Meta refused: (#100) Invalid parameter", models.EventFailed},
		{"failed before reasons were kept", models.EventFailed, "", models.EventFailed},
		{"held back by our check", models.EventFailed, "not sent: event_source_url: required for website events", models.EventHeldBack},
		{"marked junk", models.EventFailed, models.ReasonJunkLead, models.EventNotSent},
		{"no longer matches", models.EventFailed, models.ReasonNoLonger + "Qualified: condition 1 did not match", models.EventNotSent},
		{"lead gone", models.EventFailed, models.ReasonLeadGone, models.EventNotSent},
		{"a test lead's", models.EventFailed, models.ReasonTestLead, models.EventNotSent},
		{"expired", models.EventExpired, "event_time 2026-11-20T10:00:00Z is more than 7 days ago", models.EventExpired},
		{"dry run", models.EventDryRun, "", models.EventDryRun},
		{"a reason on a status that is not failed", models.EventExpired, models.ReasonJunkLead, models.EventExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := models.Event{Status: tt.status, LastError: tt.reason}
			if got := e.State(); got != tt.want {
				t.Errorf("Event{%s, %q}.State() = %s; want %s", tt.status, tt.reason, got, tt.want)
			}
		})
	}
}
