package crmsync

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
)

// wait keeps a delivery waiting, with its reason, until its next try. One
// that has waited for its lead for leadWait since it came (no contact
// matches a lead, the deal has none, or it is gone) is given up.
func (r *round) wait(d *models.CRMDelivery, waitingFor, reason string) {
	if waitingFor == models.WaitingLead && r.now.Sub(d.ReceivedAt) > leadWait {
		r.giveUp(d, reason+"; given up 7 days after the delivery came")
		return
	}
	d.Status, d.WaitingFor, d.Reason = models.DeliveryWaiting, waitingFor, reasonText(reason)
	d.NextTryAt = r.now.Add(Backoff(waitingFor, d.Attempts))
}

// waitForMapping keeps a delivery waiting for a person to change the
// connection's stage table or field mapping, which wakes it; until then it
// is looked at again daily.
func (r *round) waitForMapping(d *models.CRMDelivery, reason string) {
	d.Status, d.WaitingFor, d.Reason = models.DeliveryWaiting, models.WaitingMapping, reasonText(reason)
	d.NextTryAt = r.now.Add(24 * time.Hour)
}

// needsAttention keeps a delivery whose body cannot become a stage change
// (crm.Change.Problem) for a person to look at, with why. It is read again
// daily, and at once when the connection is saved or a person retries it:
// a fixed field mapping, or a newer leadsignal, may read it.
func (r *round) needsAttention(d *models.CRMDelivery, reason string) {
	d.Status, d.WaitingFor, d.Reason = models.DeliveryWaiting, models.WaitingAttention, reasonText(reason)
	d.NextTryAt = r.now.Add(24 * time.Hour)
}

func (r *round) giveUp(d *models.CRMDelivery, reason string) {
	d.Status, d.WaitingFor, d.Reason = models.DeliveryGaveUp, "", reasonText(reason)
}

// reasonText is a reason as it is stored: without the NUL characters a
// CRM's contact or answer may hold (Postgres keeps none in text, and one
// would fail the writing of the whole round's outcomes).
func reasonText(reason string) string { return strings.ReplaceAll(reason, "\x00", "") }

// Backoff is how long a delivery waits after its attempt-th failed try:
// doubling from 30 s, up to 30 min while it waits for its lead (a new lead
// of the account wakes it sooner) and 1 h while the CRM's API fails.
func Backoff(waitingFor string, attempt int) time.Duration {
	limit := time.Hour
	if waitingFor == models.WaitingLead {
		limit = 30 * time.Minute
	}
	d := 30 * time.Second
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// problem is why a delivery waits.
type problem struct {
	waitingFor, reason string
}

func apiProblem(kind crm.Kind, err error) *problem {
	var ae *crm.APIError
	if errors.As(err, &ae) && !ae.Temporary && ae.Status == http.StatusNotFound {
		return &problem{models.WaitingLead, fmt.Sprintf("%s API: %v", kind.Title(), err)}
	}
	return &problem{models.WaitingCRM, fmt.Sprintf("%s API: %v", kind.Title(), err)}
}
