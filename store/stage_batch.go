package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// Stage changes are recorded in batches: one for the stage API or the
// lead page, thousands for a CSV upload. A batch reads what deciding needs
// of its leads in a few queries (LeadsByKeys, StageHistories,
// LeadsEvents), is decided in memory (internal/decide), and is written by
// ChangeLeads in one transaction.

// keyBatch bounds the values of one IN list.
const keyBatch = 1000

// eachChunk calls fn with vs, keyBatch at a time, until fn fails.
func eachChunk[T any](vs []T, fn func([]T) error) error {
	for start := 0; start < len(vs); start += keyBatch {
		if err := fn(vs[start:min(start+keyBatch, len(vs))]); err != nil {
			return err
		}
	}
	return nil
}

// leadKeyColumns are the columns LeadKey fields look leads up by.
var leadKeyColumns = map[string]string{
	"id": "id", "external_id": "external_id", "meta_lead_id": "meta_lead_id", "email": "email_hash", "phone": "phone_hash",
}

// LeadsByKeys finds an account's leads by keys: by id, external_id or
// meta_lead_id, or the most recent lead with the email or phone hash. A
// key without a lead is not in the map.
func (s *Store) LeadsByKeys(ctx context.Context, accountID int64, keys []LeadKey) (map[LeadKey]models.Lead, error) {
	byField := map[string][]string{}
	seen := map[LeadKey]bool{}
	for _, k := range keys {
		if _, ok := leadKeyColumns[k.Field]; !ok || seen[k] {
			continue
		}
		if k.Field == "id" {
			if _, err := strconv.ParseInt(k.Value, 10, 64); err != nil {
				continue
			}
		}
		seen[k] = true
		byField[k.Field] = append(byField[k.Field], k.Value)
	}
	out := make(map[LeadKey]models.Lead, len(seen))
	for field, values := range byField {
		err := eachChunk(values, func(vs []string) error {
			var ls []models.Lead
			err := s.q(ctx).Where("account_id = ? AND "+leadKeyColumns[field]+" IN ?", accountID, vs).
				Order("created_at DESC, id DESC").Find(&ls).Error
			for _, l := range ls {
				k := LeadKey{Field: field, Value: leadKeyValue(l, field)}
				if _, ok := out[k]; !ok {
					out[k] = l
				}
			}
			return err
		})
		if err != nil {
			return nil, wrap("leads by keys", err)
		}
	}
	return out, nil
}

// leadKeyValue is lead l's value of a LeadKey field.
func leadKeyValue(l models.Lead, field string) string {
	switch field {
	case "id":
		return strconv.FormatInt(l.ID, 10)
	case "external_id":
		if l.ExternalID != nil {
			return *l.ExternalID
		}
	case "meta_lead_id":
		return l.MetaLeadID
	case "email":
		return l.EmailHash
	case "phone":
		return l.PhoneHash
	}
	return ""
}

// LeadsByID finds an account's leads by id; an id without a lead is not
// in the map.
func (s *Store) LeadsByID(ctx context.Context, accountID int64, ids []int64) (map[int64]models.Lead, error) {
	out := make(map[int64]models.Lead, len(ids))
	err := eachChunk(ids, func(ids []int64) error {
		var ls []models.Lead
		err := s.q(ctx).Where("account_id = ? AND id IN ?", accountID, ids).Find(&ls).Error
		for _, l := range ls {
			out[l.ID] = l
		}
		return err
	})
	return out, wrap("leads by id", err)
}

// StageHistories are the stage changes of an account's leads, junk
// markers too, by lead, in the order they were recorded.
func (s *Store) StageHistories(ctx context.Context, accountID int64, leadIDs []int64) (map[int64][]models.StageChange, error) {
	out := make(map[int64][]models.StageChange, len(leadIDs))
	err := eachChunk(leadIDs, func(ids []int64) error {
		var cs []models.StageChange
		err := s.q(ctx).Where("account_id = ? AND lead_id IN ?", accountID, ids).Order("id").Find(&cs).Error
		for _, c := range cs {
			out[c.LeadID] = append(out[c.LeadID], c)
		}
		return err
	})
	return out, wrap("stage histories", err)
}

// LeadsEvents are the events of an account's leads, by lead, in
// event_time order.
func (s *Store) LeadsEvents(ctx context.Context, accountID int64, leadIDs []int64) (map[int64][]models.Event, error) {
	out := make(map[int64][]models.Event, len(leadIDs))
	err := s.eventsBy(ctx, accountID, "lead_id", leadIDs, func(e models.Event) {
		out[e.LeadID] = append(out[e.LeadID], e)
	})
	return out, wrap("leads events", err)
}

// StageChangesEvents are the events queued for an account's stage
// changes, by change, in event_time order.
func (s *Store) StageChangesEvents(ctx context.Context, accountID int64, changeIDs []int64) (map[int64][]models.Event, error) {
	out := make(map[int64][]models.Event, len(changeIDs))
	err := s.eventsBy(ctx, accountID, "stage_change_id", changeIDs, func(e models.Event) {
		out[*e.StageChangeID] = append(out[*e.StageChangeID], e)
	})
	return out, wrap("stage changes events", err)
}

// eventsBy hands fn an account's events whose column (lead_id or
// stage_change_id) is one of ids, as people see them, in event_time order
// within each chunk of ids.
func (s *Store) eventsBy(ctx context.Context, accountID int64, column string, ids []int64, fn func(models.Event)) error {
	return eachChunk(ids, func(ids []int64) error {
		evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
			Where("events.account_id = ? AND events."+column+" IN ?", accountID, ids).
			Order("events.event_time, events.id"), time.Now())
		for _, e := range evs {
			fn(e)
		}
		return err
	})
}

// LeadChange is one stage change of a lead and what deciding the lead's
// events from the lead as the change leaves it said.
type LeadChange struct {
	// Change is the change to record; ChangeLeads sets its ID.
	Change *models.StageChange
	// After is the lead as the change leaves it (AfterStageChange): its
	// stage and junk verdict are written; ChangeLeads sets its UpdatedAt.
	After *models.Lead
	// Events is what the decision changes of the lead's events.
	Events EventChanges
}

// ChangeLeads records stage changes of an account's leads and writes what
// deciding their events said, in one transaction. Each decision was made
// from the lead as read with updated_at expect[lead id]; if any of the
// leads changed since, nothing is written and ChangeLeads returns ErrStale.
// A lead with several changes ends as the last one leaves it. It returns
// how many events were new.
func (s *Store) ChangeLeads(ctx context.Context, accountID int64, expect map[int64]time.Time, cs []LeadChange) (int, error) {
	if len(cs) == 0 {
		return 0, nil
	}
	now := time.Now().UTC()
	ids := make([]int64, 0, len(expect))
	for id := range expect {
		ids = append(ids, id)
	}
	fresh := 0
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.checkFresh(ctx, accountID, ids, expect); err != nil {
			return err
		}
		last := map[int64]int{}
		changes := make([]models.StageChange, len(cs))
		for i, c := range cs {
			c.Change.ID, c.Change.AccountID, c.Change.CreatedAt = 0, accountID, now
			changes[i] = *c.Change
			last[c.Change.LeadID] = i
		}
		if err := tx.insertStageChanges(ctx, changes); err != nil {
			return err
		}
		var evs []models.Event
		leads := make([]models.Lead, 0, len(last))
		for i, c := range cs {
			c.Change.ID, c.Change.CreatedAt = changes[i].ID, changes[i].CreatedAt
			for _, e := range c.Events.Stage {
				e.StageChangeID = &changes[i].ID
				evs = append(evs, e)
			}
			evs = append(evs, c.Events.New...)
			if last[c.Change.LeadID] == i {
				c.After.UpdatedAt = now
				leads = append(leads, *c.After)
			}
		}
		if err := tx.updateVerdicts(ctx, leads); err != nil {
			return err
		}
		for i := range evs {
			evs[i].ID, evs[i].AccountID = 0, accountID
		}
		var err error
		if fresh, err = tx.queueEvents(ctx, evs, now); err != nil {
			return err
		}
		for _, c := range cs {
			if err := tx.requeueAndCancel(ctx, c.Change.LeadID, c.Events, now); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, ErrStale) {
		return 0, err
	}
	return fresh, wrap("change leads", err)
}

// checkFresh locks an account's leads ids and returns ErrStale when one
// is gone or its updated_at is not expect's.
func (s *Store) checkFresh(ctx context.Context, accountID int64, ids []int64, expect map[int64]time.Time) error {
	q := s.q(ctx).Model(&models.Lead{}).Select("id, updated_at").Where("account_id = ? AND id IN ?", accountID, ids).Order("id")
	if s.dialect == "postgres" {
		q = q.Clauses(forUpdate())
	}
	var got []models.Lead
	if err := q.Find(&got).Error; err != nil {
		return err
	}
	if len(got) != len(ids) {
		return ErrStale
	}
	for _, l := range got {
		// Postgres keeps microseconds: a time in hand matches the one
		// stored to within one.
		if d := l.UpdatedAt.Sub(expect[l.ID]); d <= -time.Microsecond || d >= time.Microsecond {
			return ErrStale
		}
	}
	return nil
}

var stageChangeTyped = []column{
	{"id", "bigint"}, {"account_id", "bigint"}, {"lead_id", "bigint"}, {"value", "double precision"},
	{"occurred_at", "timestamptz"}, {"change_id", "text"}, {"user_id", "bigint"}, {"created_at", "timestamptz"},
}

var stageChangeText = []textColumn[models.StageChange]{
	{"stage", func(c *models.StageChange) string { return c.Stage }},
	{"currency", func(c *models.StageChange) string { return c.Currency }},
	{"source", func(c *models.StageChange) string { return c.Source }},
}

var insertStageChangesSQL = unnestInsert("stage_changes", stageChangeTyped, stageChangeText)

// insertStageChanges inserts new stage changes and sets their ids.
func (s *Store) insertStageChanges(ctx context.Context, cs []models.StageChange) error {
	if s.dialect != "postgres" {
		return s.q(ctx).CreateInBatches(&cs, 200).Error
	}
	rows, err := s.conn().QueryContext(ctx, `SELECT nextval(pg_get_serial_sequence('stage_changes', 'id')) FROM generate_series(1, $1)`, len(cs))
	if err != nil {
		return err
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		if err := rows.Scan(&cs[i].ID); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	n := len(cs)
	id, account, lead, value, at := make([]int64, n), make([]int64, n), make([]int64, n), make([]*float64, n), make([]time.Time, n)
	changeID, user, created := make([]*string, n), make([]*int64, n), make([]time.Time, n)
	for i, c := range cs {
		id[i], account[i], lead[i], value[i], at[i] = c.ID, c.AccountID, c.LeadID, c.Value, c.OccurredAt.UTC()
		changeID[i], user[i], created[i] = c.ChangeID, c.UserID, c.CreatedAt.UTC()
	}
	args := textArgs([]any{id, account, lead, value, at, changeID, user, created}, cs, stageChangeText)
	_, err = s.conn().ExecContext(ctx, insertStageChangesSQL, args...)
	return err
}

var verdictTyped = []column{{"id", "bigint"}, {"junk", "boolean"}, {"updated_at", "timestamptz"}}

var verdictText = []textColumn[models.Lead]{
	{"junk_override", func(l *models.Lead) string { return l.JunkOverride }},
	{"stage", func(l *models.Lead) string { return l.Stage }},
}

var updateVerdictsSQL = unnestUpdate("leads", verdictTyped, verdictText, []string{"id"}, nil)

// updateVerdicts writes leads' stage, junk verdict and updated_at, and
// drops the prepared payloads of their unsent events (they are built again
// from the lead as it is).
func (s *Store) updateVerdicts(ctx context.Context, ls []models.Lead) error {
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	if s.dialect != "postgres" {
		for _, l := range ls {
			upd := map[string]any{"updated_at": l.UpdatedAt, "junk": l.Junk, "junk_override": l.JunkOverride, "stage": l.Stage}
			if err := s.q(ctx).Model(&models.Lead{}).Where("id = ?", l.ID).Updates(upd).Error; err != nil {
				return err
			}
		}
		return s.unprepare(ctx, ids)
	}
	n := len(ls)
	junk, updated := make([]bool, n), make([]time.Time, n)
	for i, l := range ls {
		junk[i], updated[i] = l.Junk, l.UpdatedAt.UTC()
	}
	if _, err := s.conn().ExecContext(ctx, updateVerdictsSQL, textArgs([]any{ids, junk, updated}, ls, verdictText)...); err != nil {
		return err
	}
	return s.unprepare(ctx, ids)
}

// queueEvents inserts new events, queued unless they say otherwise; one
// already stored is left as it is. It returns how many were new.
func (s *Store) queueEvents(ctx context.Context, evs []models.Event, now time.Time) (int, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	queue(evs, now)
	if s.dialect != "postgres" {
		_, stored, err := s.insertEvents(ctx, evs)
		if err != nil {
			return 0, err
		}
		return len(stored), s.addUnsent(ctx, stored)
	}
	res, err := s.conn().ExecContext(ctx, insertEventsSQL, eventArgs(evs)...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
