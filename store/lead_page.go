package store

import (
	"context"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// SentAs is one event made for a lead, as the leads list names it: its
// Meta event name and its state as people read it (models.Event.State).
type SentAs struct {
	EventName string
	Status    models.EventStatus
}

// LeadsSentAs lists the events made for each of an account's leads, by
// lead, in event_time order: the leads list's "Sent as" column. One query
// for a page of leads; it reads each event's state as the send log does
// (findShown), but not its payload.
func (s *Store) LeadsSentAs(ctx context.Context, accountID int64, leadIDs []int64, now time.Time) (map[int64][]SentAs, error) {
	out := make(map[int64][]SentAs, len(leadIDs))
	err := eachChunk(leadIDs, func(ids []int64) error {
		evs, err := findShown(withStateOf(s.q(ctx).Model(&models.Event{}), "events.id, events.lead_id, events.event_name, events.event_time").
			Where("events.account_id = ? AND events.lead_id IN ?", accountID, ids).
			Order("events.lead_id, events.event_time, events.id"), now)
		for _, e := range evs {
			out[e.LeadID] = append(out[e.LeadID], SentAs{EventName: e.EventName, Status: e.State()})
		}
		return err
	})
	return out, wrap("leads sent as", err)
}
