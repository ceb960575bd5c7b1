package crmsync

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		waitingFor string
		attempt    int
		want       time.Duration
	}{
		{models.WaitingCRM, 1, 30 * time.Second},
		{models.WaitingCRM, 2, time.Minute},
		{models.WaitingCRM, 5, 8 * time.Minute},
		{models.WaitingCRM, 8, time.Hour},
		{models.WaitingCRM, 1000, time.Hour},
		{models.WaitingLead, 6, 16 * time.Minute},
		{models.WaitingLead, 7, 30 * time.Minute},
		{models.WaitingLead, 50, 30 * time.Minute},
	}
	for _, tt := range tests {
		if got := Backoff(tt.waitingFor, tt.attempt); got != tt.want {
			t.Errorf("Backoff(%q, %d) = %v; want %v", tt.waitingFor, tt.attempt, got, tt.want)
		}
	}
}
