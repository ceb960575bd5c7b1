package store

import (
	"context"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// SentAs is one event made for a lead, as the leads list names it: its
// Meta event name and its status as people see it.
type SentAs struct {
	EventName string
	Status    models.EventStatus
}

// sentAsRow is an event's name and the columns its status is read from.
type sentAsRow struct {
	LeadID       int64
	EventName    string
	UnsentStatus *models.EventStatus
	LeaseUntil   *time.Time
	Sent         bool
}

// LeadsSentAs lists the events made for each of an account's leads, by
// lead, in event_time order: the leads list's "Sent as" column. One query
// for a page of leads; it reads the events' lead index (with the event
// name in it on Postgres) and the state of each event by its key, never
// a payload.
func (s *Store) LeadsSentAs(ctx context.Context, accountID int64, leadIDs []int64, now time.Time) (map[int64][]SentAs, error) {
	out := make(map[int64][]SentAs, len(leadIDs))
	err := eachChunk(leadIDs, func(ids []int64) error {
		var rows []sentAsRow
		err := s.q(ctx).Model(&models.Event{}).
			Select(`events.lead_id, events.event_name, unsent_events.status AS unsent_status, unsent_events.lease_until,
				event_sends.event_id IS NOT NULL AS sent`).
			Joins("LEFT JOIN unsent_events ON unsent_events.event_id = events.id").
			Joins("LEFT JOIN event_sends ON event_sends.event_id = events.id").
			Where("events.account_id = ? AND events.lead_id IN ?", accountID, ids).
			Order("events.lead_id, events.event_time, events.id").
			Find(&rows).Error
		for _, r := range rows {
			e := models.Event{LeaseUntil: r.LeaseUntil}
			switch {
			case r.Sent:
				e.Status = models.EventSent
			case r.UnsentStatus != nil:
				e.Status = *r.UnsentStatus
			}
			out[r.LeadID] = append(out[r.LeadID], SentAs{EventName: r.EventName, Status: shownStatus(e, now)})
		}
		return err
	})
	return out, wrap("leads sent as", err)
}
