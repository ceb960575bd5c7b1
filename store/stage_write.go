package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leadsignal/leadsignal/models"
)

// A batch of stage changes is written in one transaction (ChangeLeads):
// on Postgres one pipeline and a COPY per table of new rows; on SQLite,
// whose one writer holds the transaction, statement by statement.

// LeadChange is one stage change of a lead and what deciding the lead's
// events from the lead as the change leaves it said.
type LeadChange struct {
	// Change is the change to record, with an id ReadStages reserved.
	Change *models.StageChange
	// After is the lead as the change leaves it: its stage and junk
	// verdict are written; ChangeLeads sets its UpdatedAt.
	After *models.Lead
	// Events is what the decision changes of the lead's events.
	Events EventChanges
}

// ChangeLeads records stage changes of an account's leads and writes what
// deciding their events said, in one transaction. Each decision was made
// from the lead as read with updated_at expect[lead id]; if any of the
// leads changed since, nothing is written and ChangeLeads returns ErrStale.
// A lead with several changes ends as the last one leaves it. It returns
// how many events were new. On Postgres the new rows are COPYed in
// (writeCopied); SQLite inserts them in batches.
func (s *Store) ChangeLeads(ctx context.Context, accountID int64, expect map[int64]time.Time, cs []LeadChange) (int, error) {
	if len(cs) == 0 {
		return 0, nil
	}
	w, err := newLeadWrite(accountID, expect, cs, s.Now())
	if err != nil {
		return 0, wrap("change leads", err)
	}
	fresh := 0
	if s.dialect == "postgres" {
		fresh, err = s.writeCopied(ctx, w)
	} else {
		err = s.Tx(ctx, func(tx *Store) error {
			if err := tx.checkFresh(ctx, accountID, w.ids, expect); err != nil {
				return err
			}
			if err := tx.insertStageChanges(ctx, w.changes); err != nil {
				return err
			}
			if err := tx.updateVerdicts(ctx, w.leads); err != nil {
				return err
			}
			var err error
			if fresh, err = tx.queueEvents(ctx, w.events); err != nil {
				return err
			}
			return tx.requeueAndCancel(ctx, w.requeue, w.cancel, w.now)
		})
	}
	if errors.Is(err, ErrStale) {
		return 0, err
	}
	return fresh, wrap("change leads", err)
}

// leadWrite is what ChangeLeads writes: the changes, the leads as the last
// change of each leaves them, the new events, and what becomes of stored
// events, once per event (the last change's word).
type leadWrite struct {
	now     time.Time
	ids     []int64
	expect  []time.Time
	changes []models.StageChange
	leads   []models.Lead
	events  []models.Event
	requeue []int64
	cancel  []EventCancel
}

func newLeadWrite(accountID int64, expect map[int64]time.Time, cs []LeadChange, now time.Time) (leadWrite, error) {
	w := leadWrite{now: now}
	for id := range expect {
		w.ids = append(w.ids, id)
	}
	slices.Sort(w.ids)
	for _, id := range w.ids {
		w.expect = append(w.expect, expect[id].UTC())
	}
	last := map[int64]int{}
	for i, c := range cs {
		if c.Change.ID == 0 {
			return w, errors.New("a stage change without a reserved id")
		}
		c.Change.AccountID, c.Change.CreatedAt = accountID, now
		w.changes = append(w.changes, *c.Change)
		last[c.Change.LeadID] = i
	}
	// A stored event's last word wins: requeued (true) or cancelled.
	word := map[int64]bool{}
	reason := map[int64]string{}
	var order []int64
	for i, c := range cs {
		for _, e := range c.Events.Stage {
			e.StageChangeID = &c.Change.ID
			w.events = append(w.events, e)
		}
		w.events = append(w.events, c.Events.New...)
		if last[c.Change.LeadID] == i {
			c.After.UpdatedAt = now
			w.leads = append(w.leads, *c.After)
		}
		for _, id := range c.Events.Requeue {
			if _, ok := word[id]; !ok {
				order = append(order, id)
			}
			word[id] = true
		}
		for _, cc := range c.Events.Cancel {
			if _, ok := word[cc.ID]; !ok {
				order = append(order, cc.ID)
			}
			word[cc.ID], reason[cc.ID] = false, cc.Reason
		}
	}
	for _, id := range order {
		if word[id] {
			w.requeue = append(w.requeue, id)
		} else {
			w.cancel = append(w.cancel, EventCancel{ID: id, Reason: reason[id]})
		}
	}
	for i := range w.events {
		w.events[i].ID, w.events[i].AccountID = 0, accountID
	}
	queue(w.events, now)
	return w, nil
}

// staleCode is the SQLSTATE lock_fresh_leads raises.
const staleCode = "LS409"

var (
	requeueSQL = `UPDATE unsent_events SET status = 'queued', last_error = '', next_attempt_at = $2, lease_until = NULL, updated_at = $2
	WHERE status = 'failed' AND event_id = ANY(CAST($1 AS bigint[]))`
	cancelSQL = `UPDATE unsent_events AS u SET status = 'failed', last_error = x.reason, updated_at = $3
	FROM unnest(CAST($1 AS bigint[]), CAST($2 AS text[])) AS x(id, reason)
	WHERE u.event_id = x.id AND ` + sendingSQL("u.", "$3", false)
)

// writeCopied is ChangeLeads on Postgres, in one transaction: one
// pipeline finds which of the new events are stored already (left as they
// are, as insertEvents does), locks the leads (lock_fresh_leads, which
// aborts the write when one changed since it was read), writes their
// verdicts, requeues and cancels stored events and reserves the new
// events' ids;
// then the new stage changes, events and their queue rows are COPYed in, a
// round trip each. An event stored after that look (by a way in that does
// not change the lead: a manual send, "apply to recent leads") fails the
// COPY on the events' unique key, and the batch is decided again
// (ErrStale).
func (s *Store) writeCopied(ctx context.Context, w leadWrite) (int, error) {
	evs := firstOfEach(w.events)
	err := s.withPgx(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			// The look for stored events (by dataset and event id) is
			// planned for its rows: a plan kept from a table analyzed
			// while empty read every event of the dataset for each row.
			// Every statement after it, and the foreign-key checks of the
			// COPYs below, is planned once.
			stored := map[int]bool{}
			if len(evs) > 0 {
				datasets, ids := make([]int64, len(evs)), make([]string, len(evs))
				for i, e := range evs {
					datasets[i], ids[i] = e.DatasetID, e.EventID
				}
				b.Queue(storedEventsSQL, datasets, ids).Query(func(rows pgx.Rows) error {
					for rows.Next() {
						var n int
						if err := rows.Scan(&n); err != nil {
							return err
						}
						stored[n-1] = true
					}
					return rows.Err()
				})
			}
			b.Queue(keptPlansSQL)
			b.Queue(`SELECT lock_fresh_leads($1, $2, $3)`, w.changes[0].AccountID, w.ids, w.expect)
			if len(w.leads) > 0 {
				b.Queue(updateVerdictsSQL, verdictArgs(w.leads)...)
				b.Queue(unprepareSQL, leadIDs(w.leads))
			}
			if len(w.requeue) > 0 {
				b.Queue(requeueSQL, w.requeue, w.now)
			}
			if len(w.cancel) > 0 {
				ids, reasons := make([]int64, len(w.cancel)), make([]string, len(w.cancel))
				for i, c := range w.cancel {
					ids[i], reasons[i] = c.ID, c.Reason
				}
				b.Queue(cancelSQL, ids, reasons, w.now)
			}
			if len(evs) > 0 {
				b.Queue(`SELECT nextval('events_id_seq') FROM generate_series(1, $1)`, len(evs)).Query(func(rows pgx.Rows) error {
					i := 0
					for rows.Next() {
						if err := rows.Scan(&evs[i].ID); err != nil {
							return err
						}
						i++
					}
					return rows.Err()
				})
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			if len(stored) > 0 {
				fresh := evs[:0]
				for i, e := range evs {
					if !stored[i] {
						fresh = append(fresh, e)
					}
				}
				evs = fresh
			}
			conn := tx.Conn()
			if err := copyIn(ctx, conn, stageChangeRows(w.changes)); err != nil {
				return err
			}
			if err := copyIn(ctx, conn, eventRows(evs)); err != nil {
				return err
			}
			return copyIn(ctx, conn, unsentRows(evs))
		})
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == staleCode || pe.Code == uniqueViolation && pe.ConstraintName == "events_dataset_id_event_id_key") {
		return 0, ErrStale
	}
	if err != nil {
		return 0, err
	}
	return len(evs), nil
}

// storedEventsSQL finds which of the events $1 (datasets), $2 (event
// ids) are stored already: their numbers in the arrays, from 1.
const storedEventsSQL = `SELECT u.n FROM unnest(CAST($1 AS bigint[]), CAST($2 AS text[])) WITH ORDINALITY AS u(dataset_id, event_id, n)
	WHERE EXISTS (SELECT 1 FROM events e WHERE e.dataset_id = u.dataset_id AND e.event_id = u.event_id)`

// uniqueViolation is the SQLSTATE of a duplicate key.
const uniqueViolation = "23505"

// firstOfEach are evs with each (dataset, event id) once, the first: the
// same event made twice in a batch is written once, in the state the
// first gives it.
func firstOfEach(evs []models.Event) []models.Event {
	seen := make(map[eventKey]bool, len(evs))
	out := make([]models.Event, 0, len(evs))
	for _, e := range evs {
		k := eventKey{e.DatasetID, e.EventID}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// eventKey is an event's identity: its dataset and event id.
type eventKey struct {
	dataset int64
	id      string
}

// stageChangeRows are new stage changes, with their reserved ids, for COPY.
func stageChangeRows(cs []models.StageChange) *copyRows {
	rs := newCopyRows("stage_changes", "id", "account_id", "lead_id", "stage", "value", "currency", "occurred_at",
		"change_id", "user_id", "created_at", "source", "via", "via_id", "via_row")
	for _, c := range cs {
		rs.row().int(c.ID).int(c.AccountID).int(c.LeadID).text(c.Stage).float(c.Value).text(c.Currency).time(c.OccurredAt)
		if c.ChangeID != nil {
			rs.text(*c.ChangeID)
		} else {
			rs.null()
		}
		rs.intPtr(c.UserID).time(c.CreatedAt).text(c.Source).text(c.Via).intPtr(c.ViaID)
		if c.ViaRow != nil {
			rs.int(int64(*c.ViaRow))
		} else {
			rs.null()
		}
	}
	return rs
}

// eventRows are new events, with their reserved ids, for COPY.
func eventRows(evs []models.Event) *copyRows {
	rs := newCopyRows("events", "id", "account_id", "dataset_id", "lead_id", "origin", "origin_id", "event_name", "event_id",
		"event_time", "value", "currency", "payload", "payload_stamp", "created_at", "action_source", "test_event_code",
		"stage_change_id", "filled_in", "lead_event_source")
	for i := range evs {
		e := &evs[i]
		rs.row().int(e.ID).int(e.AccountID).int(e.DatasetID).int(e.LeadID).text(e.Origin).intPtr(e.OriginID).text(e.EventName).
			text(e.EventID).time(e.EventTime).float(e.Value).text(e.Currency).text(e.Payload).int(e.PayloadStamp).time(e.CreatedAt).
			text(e.ActionSource).text(e.TestEventCode).intPtr(e.StageChangeID).bool(e.FilledIn).text(e.LeadEventSource)
	}
	return rs
}

// unsentRows are the state of new events for COPY: queued and due when
// they were created, or held back at once failed with their reason.
func unsentRows(evs []models.Event) *copyRows {
	rs := newCopyRows("unsent_events", "event_id", "dataset_id", "lead_id", "status", "event_time", "next_attempt_at",
		"last_error", "updated_at")
	for i := range evs {
		e := &evs[i]
		rs.row().int(e.ID).int(e.DatasetID).int(e.LeadID).text(string(e.Status)).time(e.EventTime).time(e.CreatedAt).
			text(e.LastError).time(e.CreatedAt)
	}
	return rs
}

func leadIDs(ls []models.Lead) []int64 {
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	return ids
}

// checkFresh returns ErrStale when one of an account's leads ids is gone
// or its updated_at is not expect's, on SQLite, whose one writer holds the
// transaction (Postgres: lock_fresh_leads in writeCopied).
func (s *Store) checkFresh(ctx context.Context, accountID int64, ids []int64, expect map[int64]time.Time) error {
	q := s.q(ctx).Model(&models.Lead{}).Select("id, updated_at").Where("account_id = ? AND id IN ?", accountID, ids)
	var got []models.Lead
	if err := q.Find(&got).Error; err != nil {
		return err
	}
	if len(got) != len(ids) {
		return ErrStale
	}
	for _, l := range got {
		// A time in hand matches the one stored to within a microsecond.
		if d := l.UpdatedAt.Sub(expect[l.ID]); d <= -time.Microsecond || d >= time.Microsecond {
			return ErrStale
		}
	}
	return nil
}

// insertStageChanges inserts new stage changes with their reserved ids,
// on SQLite (Postgres: writeCopied).
func (s *Store) insertStageChanges(ctx context.Context, cs []models.StageChange) error {
	return s.q(ctx).CreateInBatches(&cs, 200).Error
}

var verdictTyped = []column{{"id", "bigint"}, {"junk", "boolean"}, {"updated_at", "timestamptz"}}

var verdictText = []textColumn[models.Lead]{
	{"junk_override", func(l *models.Lead) string { return l.JunkOverride }},
	{"stage", func(l *models.Lead) string { return l.Stage }},
}

var updateVerdictsSQL = unnestUpdate("leads", verdictTyped, verdictText, []string{"id"}, nil)

// updateVerdicts writes leads' stage, junk verdict and updated_at, and
// drops the prepared payloads of their unsent events (they are built again
// from the lead as it is), on SQLite (Postgres: writeCopied).
func (s *Store) updateVerdicts(ctx context.Context, ls []models.Lead) error {
	for _, l := range ls {
		upd := map[string]any{"updated_at": l.UpdatedAt, "junk": l.Junk, "junk_override": l.JunkOverride, "stage": l.Stage}
		if err := s.q(ctx).Model(&models.Lead{}).Where("id = ?", l.ID).Updates(upd).Error; err != nil {
			return err
		}
	}
	return s.unprepare(ctx, leadIDs(ls))
}

// verdictArgs are the parameters of updateVerdictsSQL.
func verdictArgs(ls []models.Lead) []any {
	n := len(ls)
	junk, updated := make([]bool, n), make([]time.Time, n)
	for i, l := range ls {
		junk[i], updated[i] = l.Junk, l.UpdatedAt.UTC()
	}
	return textArgs([]any{leadIDs(ls), junk, updated}, ls, verdictText)
}

// queueEvents inserts new events, queued unless they say otherwise (the
// caller has made them so, queue); one already stored is left as it is. It
// returns how many were new. On SQLite (Postgres: writeCopied).
func (s *Store) queueEvents(ctx context.Context, evs []models.Event) (int, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	_, stored, err := s.insertEvents(ctx, evs)
	if err != nil {
		return 0, err
	}
	return len(stored), s.addUnsent(ctx, stored)
}
