package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// An event's state is in one of two places, never on its own row: while
// it is not sent, its unsentEvent; once sent, its event_sends row. Every
// reader asks the same two questions, each answered in one place:
//
//   - sent: the event has an event_sends row (sentSQL; findShown);
//   - sending: the event is queued under a claim's lease that still runs
//     (sendingSQL; shownStatus, the same test in Go).
//
// Listings go through withState and findShown.

// sentSQL is "sent" in SQL, the one test of it: the events row in scope
// has its send, an event_sends row.
const sentSQL = "EXISTS (SELECT 1 FROM event_sends s WHERE s.event_id = events.id)"

// sendingSQL is "sending" in SQL, the one test of it: a queued unsent event
// whose claim's lease still runs at now is being sent. With sending false it
// tests the other queued events, with no lease or one that ran out: the
// ones a claim may take once they are due. row prefixes the unsent_events
// columns ("" or "q."); now is the placeholder of the time ("?" or "@now").
func sendingSQL(row, now string, sending bool) string {
	if sending {
		return row + "status = 'queued' AND NOT " + leaseFreeSQL(row, now)
	}
	return row + "status = 'queued' AND " + leaseFreeSQL(row, now)
}

// unsentEvent is the state of an event that is not sent (migrations 0006
// and 0014): its status, indexed here and not on events, its attempts and
// last error, and while it is queued its schedule. Sending it deletes the
// row, so marking a batch sent changes no indexed column.
type unsentEvent struct {
	EventID       int64 `gorm:"primaryKey;autoIncrement:false"`
	DatasetID     int64
	LeadID        int64
	Status        models.EventStatus
	EventTime     time.Time
	NextAttemptAt time.Time
	// LeaseUntil and LeaseToken are the lease of the claim sending it.
	LeaseUntil *time.Time
	LeaseToken *int64
	Attempts   int
	LastError  string
	// RequestID is the last request that carried the event without sending
	// it (a refusal, a dry run).
	RequestID *int64
	UpdatedAt time.Time
}

func (unsentEvent) TableName() string { return "unsent_events" }

// shownEvent is an event read with its state: its unsent row's columns or
// its send's, whichever it has.
type shownEvent struct {
	models.Event
	UnsentStatus    *models.EventStatus
	UnsentAttempts  *int
	UnsentLastError *string
	UnsentRequestID *int64
	UnsentUpdatedAt *time.Time
	SendRequestID   *int64
	SendAttempts    *int
	SendFBTraceID   *string `gorm:"column:send_fbtrace_id"`
	SendSentAt      *time.Time
}

// withState selects events with their state, for findShown. The columns
// are read as they are stored and combined in findShown: SQLite would
// return an expression over two of them without its type.
func withState(q *gorm.DB) *gorm.DB { return withStateOf(q, "events.*") }

// withStateOf is withState reading only the events' columns named: a list
// that shows no payload need not read it.
func withStateOf(q *gorm.DB, eventColumns string) *gorm.DB {
	return q.Select(eventColumns + `, unsent_events.next_attempt_at, unsent_events.lease_until,
		unsent_events.status AS unsent_status, unsent_events.attempts AS unsent_attempts,
		unsent_events.last_error AS unsent_last_error, unsent_events.request_id AS unsent_request_id,
		unsent_events.updated_at AS unsent_updated_at,
		event_sends.request_id AS send_request_id, event_sends.attempts AS send_attempts,
		event_sends.fbtrace_id AS send_fbtrace_id, event_sends.sent_at AS send_sent_at`).
		Joins("LEFT JOIN unsent_events ON unsent_events.event_id = events.id").
		Joins("LEFT JOIN event_sends ON event_sends.event_id = events.id")
}

// findShown runs a withState query and returns its events as people see
// them: with their send's status, attempts, trace, request and time, or
// their unsent row's; a queued event under a lease is sending.
func findShown(q *gorm.DB, now time.Time) ([]models.Event, error) {
	var rows []shownEvent
	if err := q.Find(&rows).Error; err != nil {
		return nil, err
	}
	return shown(rows, now), nil
}

// shown are the events of a withState query's rows, as findShown returns
// them.
func shown(rows []shownEvent, now time.Time) []models.Event {
	evs := make([]models.Event, len(rows))
	for i, r := range rows {
		e := r.Event
		e.UpdatedAt = e.CreatedAt
		switch {
		case r.SendSentAt != nil:
			e.Status, e.Attempts, e.FBTraceID = models.EventSent, *r.SendAttempts, *r.SendFBTraceID
			e.RequestID, e.SentAt, e.UpdatedAt = r.SendRequestID, r.SendSentAt, *r.SendSentAt
		case r.UnsentStatus != nil:
			e.Status, e.Attempts, e.LastError, e.RequestID = *r.UnsentStatus, *r.UnsentAttempts, *r.UnsentLastError, r.UnsentRequestID
			if r.UnsentUpdatedAt != nil {
				e.UpdatedAt = *r.UnsentUpdatedAt
			}
		}
		e.Status = shownStatus(e, now)
		evs[i] = e
	}
	return evs
}

// addUnsent gives new events their state: a queued event due at its
// NextAttemptAt, or one held back at once failed with its LastError. An
// event that has a state keeps it.
func (s *Store) addUnsent(ctx context.Context, evs []models.Event) error {
	rows := make([]unsentEvent, 0, len(evs))
	for _, e := range evs {
		rows = append(rows, unsentEvent{EventID: e.ID, DatasetID: e.DatasetID, LeadID: e.LeadID, Status: e.Status,
			EventTime: e.EventTime.UTC(), NextAttemptAt: e.NextAttemptAt.UTC(), LastError: e.LastError, UpdatedAt: e.CreatedAt.UTC()})
	}
	if len(rows) == 0 {
		return nil
	}
	return s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, 500).Error
}

// EnqueueEvents inserts events into the outbox. An event whose
// (dataset_id, event_id) is already there is left as it is: a resent form,
// a retried webhook or a replayed sync can never queue a second copy. It
// returns every given event as stored, new or old, and how many are new.
func (s *Store) EnqueueEvents(ctx context.Context, evs []models.Event) ([]models.Event, int, error) {
	if len(evs) == 0 {
		return nil, 0, nil
	}
	for i := range evs {
		evs[i].ID = 0
	}
	queue(evs, s.Now())
	var out, fresh []models.Event
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if out, fresh, err = tx.insertEvents(ctx, evs); err != nil {
			return err
		}
		// Only the events this call stored: an old one may have been sent
		// a moment ago, and must not be queued again.
		return tx.addUnsent(ctx, fresh)
	})
	if err != nil {
		return nil, 0, wrap("enqueue events", err)
	}
	return out, len(fresh), nil
}

// insertEvents inserts the events that are not stored yet. It returns each
// given event as stored, and the ones it inserted. One statement per event:
// a skipped row is then known for certain (no row affected), where a
// multi-row INSERT ... RETURNING would not say which rows it skipped.
func (s *Store) insertEvents(ctx context.Context, evs []models.Event) (all, fresh []models.Event, err error) {
	byDataset := map[int64][]string{}
	for i := range evs {
		res := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&evs[i])
		if res.Error != nil {
			return nil, nil, res.Error
		}
		if res.RowsAffected == 0 {
			evs[i].ID = 0
			byDataset[evs[i].DatasetID] = append(byDataset[evs[i].DatasetID], evs[i].EventID)
		} else {
			fresh = append(fresh, evs[i])
		}
	}
	stored := map[[2]any]models.Event{}
	for ds, ids := range byDataset {
		for start := 0; start < len(ids); start += 500 {
			got, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
				Where("events.dataset_id = ? AND events.event_id IN ?", ds, ids[start:min(start+500, len(ids))]), s.Now())
			if err != nil {
				return nil, nil, err
			}
			for _, e := range got {
				stored[[2]any{e.DatasetID, e.EventID}] = e
			}
		}
	}
	all = make([]models.Event, 0, len(evs))
	for _, e := range evs {
		if e.ID == 0 {
			e = stored[[2]any{e.DatasetID, e.EventID}]
		}
		all = append(all, e)
	}
	return all, fresh, nil
}

// LeadEvents lists a lead's events, in event_time order.
func (s *Store) LeadEvents(ctx context.Context, accountID, leadID int64) ([]models.Event, error) {
	evs, err := s.LeadsEvents(ctx, accountID, []int64{leadID})
	return evs[leadID], err
}

// DueDatasets lists the datasets that have events due now and are not
// paused, nor held with their next probe still to come or taken. Each
// dataset's queued events are looked at newest first: claims take the
// oldest, so while a backlog drains its oldest events are the leased ones
// of the batches in flight (thousands of rows to step over), and its
// newest are due. OFFSET 0 keeps the order: an EXISTS without it drops
// ORDER BY and LIMIT.
func (s *Store) DueDatasets(ctx context.Context, now time.Time) ([]int64, error) {
	now = now.UTC()
	var ids []int64
	err := s.q(ctx).Model(&models.Dataset{}).
		Where("paused_at IS NULL AND (held_since IS NULL OR hold_until <= ? AND "+leaseFreeSQL("", "?")+")", now, now).
		Where(`EXISTS (SELECT 1 FROM unsent_events q WHERE q.dataset_id = datasets.id AND `+sendingSQL("q.", "?", false)+`
			AND q.next_attempt_at <= ? ORDER BY q.event_time DESC, q.event_id DESC LIMIT 1 OFFSET 0)`, now, now).
		Order("id").Pluck("id", &ids).Error
	return ids, wrap("due datasets", err)
}

// dueSQL picks up to @limit due events of one dataset, in event_time order.
// An event waits while an earlier event of the same lead and dataset is
// still queued and either being sent or not due itself, so a lead's events
// reach Meta in order.
// A paused dataset gives nothing, nor a held one but to its probe, the
// holder of the dataset's lease (@probe, its token; NULL for any other
// batch): another batch of it may have just been refused. "+ 0" keeps the check of
// a lead's earlier events on the lead's index whatever the statistics say:
// with statistics taken while nothing was queued, the dataset-and-status
// index looks cheaper, and reads every earlier queued event of the dataset
// for each candidate. Its blanks: what to select, a fence for the NOT
// EXISTS, and the row locking.
var dueSQL = `
	SELECT %[1]s FROM unsent_events q
	WHERE q.dataset_id = @dataset AND ` + sendingSQL("q.", "@now", false) + `
	  AND q.next_attempt_at <= @now
	  AND EXISTS (SELECT 1 FROM datasets d WHERE d.id = @dataset
		AND d.paused_at IS NULL AND (d.held_since IS NULL OR d.lease_token = @probe))
	  AND NOT EXISTS (
		SELECT 1 FROM unsent_events p
		WHERE p.lead_id = q.lead_id AND (p.event_time, p.event_id) < (q.event_time, q.event_id)
		  AND p.dataset_id + 0 = q.dataset_id
		  AND (` + sendingSQL("p.", "@now", true) + ` OR (p.status = 'queued' AND p.next_attempt_at > @now))
		%[2]s)
	ORDER BY q.event_time, q.event_id
	LIMIT @limit %[3]s`

// claimedCols are what the dispatcher reads of a claimed event (e), after
// the attempt it is about to make (c.attempt).
const claimedCols = `e.id, e.lead_id, e.origin, e.origin_id, e.event_name, e.event_id, e.event_time, e.value, e.currency,
	e.action_source, e.test_event_code, c.attempt, e.payload, e.payload_stamp`

// On Postgres rows locked by another replica are skipped, so replicas share
// the queue; an expired lease makes an event claimable again, so a crash
// mid-batch loses nothing. OFFSET 0 keeps the NOT EXISTS a lookup in
// unsent_events_lead_idx per candidate: as an anti-join, Postgres would
// read every queued event for the few blocking ones. The lease is set on the rows
// locked, found by ctid (a TID scan), and the one statement returns them.
var claimPostgresSQL = `
WITH due AS (` + sprintf(dueSQL, "q.ctid AS tid", "OFFSET 0", "FOR UPDATE SKIP LOCKED") + `
), claimed AS (
	UPDATE unsent_events SET lease_until = @lease, lease_token = @token WHERE ctid = ANY(ARRAY(SELECT tid FROM due))
	RETURNING event_id, attempts + 1 AS attempt
)
SELECT ` + claimedCols + `
FROM claimed c JOIN events e ON e.id = c.event_id`

// SQLite has one writer: the claim sets the lease, then reads the events
// with the claim's rows, by id.
var claimSQLiteSQL = `
WITH due AS (` + sprintf(dueSQL, "q.event_id", "", "") + `)
UPDATE unsent_events SET lease_until = @lease, lease_token = @token WHERE event_id IN (SELECT event_id FROM due)
RETURNING event_id, attempts + 1 AS attempt`

// claimLockClass is the first key of the per-dataset claim lock.
const claimLockClass = 0x6c73

// Claim is a batch of events leased to one dispatcher.
type Claim struct {
	// Lease is the claim's: settling and releasing touch only the events
	// that still hold its token, not those another dispatcher took once it
	// ran out.
	Lease Lease
	// Events are in event_time order, with the columns a payload needs
	// and the payload prepared when they were queued.
	Events []models.Event
}

// ClaimEvents leases up to limit due events of a dataset until now+lease,
// and reads them. A held dataset gives events only to its probe: probe is
// the lease TakeProbe gave (the batch is claimed under it), nil for any
// other batch.
//
// A claim changes only the lease of unsent_events rows, a column no index
// reads: on Postgres it is a HOT update of narrow rows.
func (s *Store) ClaimEvents(ctx context.Context, datasetID int64, now time.Time, lease time.Duration, limit int, probe *Lease) (Claim, error) {
	now = now.UTC()
	c := Claim{Lease: newLease(now, lease)}
	var probeToken *int64
	if probe != nil {
		c.Lease, probeToken = *probe, &probe.Token
	}
	args := map[string]any{"dataset": datasetID, "now": now, "lease": c.Lease.Until, "token": c.Lease.Token, "limit": limit, "probe": probeToken}
	err := s.Tx(ctx, func(tx *Store) error {
		var rows *sql.Rows
		var err error
		if tx.dialect == "postgres" {
			// Claims of one dataset take turns: a claim then sees the
			// events the previous one leased, so it cannot take a lead's
			// later event while another replica holds an earlier one.
			if err := tx.q(ctx).Exec("SELECT pg_advisory_xact_lock(CAST(? AS integer), CAST(? AS integer))", claimLockClass, datasetID).Error; err != nil {
				return err
			}
			rows, err = tx.q(ctx).Raw(claimPostgresSQL, args).Rows()
		} else {
			var claimed []struct{ EventID, Attempt int64 }
			if err := tx.q(ctx).Raw(claimSQLiteSQL, args).Scan(&claimed).Error; err != nil || len(claimed) == 0 {
				return err
			}
			// The outer err, checked below, takes the SELECT's.
			list, merr := json.Marshal(claimed)
			if merr != nil {
				return merr
			}
			rows, err = tx.q(ctx).Raw(`SELECT `+claimedCols+` FROM events e JOIN (
				SELECT json_extract(value, '$.EventID') AS event_id, json_extract(value, '$.Attempt') AS attempt FROM json_each(?)
			) c ON c.event_id = e.id`, string(list)).Rows()
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		c.Events = make([]models.Event, 0, limit)
		for rows.Next() {
			e := models.Event{DatasetID: datasetID, Status: models.EventSending, LeaseUntil: &c.Lease.Until}
			if err := rows.Scan(&e.ID, &e.LeadID, &e.Origin, &e.OriginID, &e.EventName, &e.EventID, &e.EventTime, &e.Value, &e.Currency,
				&e.ActionSource, &e.TestEventCode, &e.Attempts, &e.Payload, &e.PayloadStamp); err != nil {
				return err
			}
			c.Events = append(c.Events, e)
		}
		return rows.Err()
	})
	if err != nil {
		return Claim{}, wrap("claim events", err)
	}
	sortEvents(c.Events)
	return c, nil
}

// PayloadLeads reads the leads of an account with the columns an event's
// payload is built from (id, source, partial, junk, event_source_url,
// meta_lead_id, country, state, match_keys, and the custom fields where
// the other platforms' click ids are), by id: for claimed events whose
// prepared payload is missing or stale. A lead not found is absent.
func (s *Store) PayloadLeads(ctx context.Context, accountID int64, ids []int64) (map[int64]models.Lead, error) {
	out := make(map[int64]models.Lead, len(ids))
	for start := 0; start < len(ids); start += 500 {
		var ls []models.Lead
		err := s.q(ctx).Select("id, source, partial, junk, test, event_source_url, meta_lead_id, country, state, match_keys, fields").
			Where("account_id = ? AND id IN ?", accountID, ids[start:min(start+500, len(ids))]).Find(&ls).Error
		if err != nil {
			return nil, wrap("payload leads", err)
		}
		for _, l := range ls {
			out[l.ID] = l
		}
	}
	return out, nil
}

// Outcome is what happened to one claimed event.
type Outcome struct {
	ID     int64
	Status models.EventStatus
	Error  string
	// Payload, when set, is the event's JSON as built now, to keep as its
	// payload: one built at send time, or that of an event held back. An
	// event sent with the payload it was queued with leaves it empty.
	Payload string
	// NextAttemptAt is set for a retry.
	NextAttemptAt time.Time
	// Untried puts a queued event back without counting an attempt: it
	// was never sent (its dataset was paused, say).
	Untried bool
}

// SettleEvents records what a send did to the events of claim c, in one
// transaction: sent (with the request and fbtrace id), queued again for a
// retry, failed, expired or dry_run. Each counts as an attempt unless it is
// Untried. Only events still holding c's lease are touched: if it ran out
// and another dispatcher claimed an event, that claim decides, and
// SettleEvents returns ErrLeaseLost once it has settled the others.
//
// A sent event's unsent_events row makes way for its event_sends row; the
// others' rows take their new state. An event's own row changes only when
// an outcome carries a payload built at send time. The statements are
// set-based, one per kind of outcome (a batch of 1000 usually has one
// kind), the same on both databases but for how a list is passed (idList).
func (s *Store) SettleEvents(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	now = now.UTC()
	var sent []Outcome
	kept := map[keptKind][]Outcome{}
	var kinds []keptKind
	for _, o := range outs {
		if o.Status == models.EventSent {
			sent = append(sent, o)
			continue
		}
		k := keptKind{status: o.Status, err: o.Error, untried: o.Untried}
		if o.Status == models.EventQueued {
			k.next = o.NextAttemptAt.UTC()
		}
		if _, ok := kept[k]; !ok {
			kinds = append(kinds, k)
		}
		kept[k] = append(kept[k], o)
	}
	var settled int64
	err := s.Tx(ctx, func(tx *Store) error {
		settled = 0
		// First, while the lease still tells this claim's events.
		if err := tx.keepPayloads(ctx, c, outs); err != nil {
			return err
		}
		if len(sent) > 0 {
			n, err := tx.settleSent(ctx, c, requestID, fbtraceID, now, sent)
			if err != nil {
				return err
			}
			settled += n
		}
		for _, k := range kinds {
			n, err := tx.settleKept(ctx, c, requestID, now, k, kept[k])
			if err != nil {
				return err
			}
			settled += n
		}
		return nil
	})
	if err == nil && settled < int64(len(outs)) {
		err = fmt.Errorf("%d of %d events taken over: %w", int64(len(outs))-settled, len(outs), ErrLeaseLost)
	}
	return wrap("settle events", err)
}

// keptKind is what the events of one settleKept statement share.
type keptKind struct {
	status  models.EventStatus
	err     string
	next    time.Time
	untried bool
}

// settleSent gives the sent events still under c's lease their send, on
// the attempt the claim made, and deletes their unsent_events rows, in two
// statements that each read unsent_events by its key (a check of the lease
// per inserted row, EXISTS, would let Postgres plan a scan of every unsent
// event). The sends go in first, while the rows still tell each event's
// state: on Postgres the count trigger of event_sends then moves each
// event from that state to sent with one read of it (migration 0046), and
// the rows' delete trigger leaves the events that have a send. Postgres
// locks the rows it reads, so that no other claim takes them before they
// go (lockRead).
func (s *Store) settleSent(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) (int64, error) {
	ids := make([]int64, len(outs))
	for i, o := range outs {
		ids[i] = o.ID
	}
	in, list := s.idList("event_id", ids)
	res := s.q(ctx).Exec(`INSERT INTO event_sends (event_id, request_id, attempts, fbtrace_id, sent_at)
		SELECT event_id, ?, attempts + 1, ?, ? FROM unsent_events WHERE `+in+` AND lease_token = ?`+s.lockRead(),
		requestID, fbtraceID, now, list, c.Lease.Token)
	if res.Error != nil {
		return 0, res.Error
	}
	return res.RowsAffected, s.q(ctx).Exec("DELETE FROM unsent_events WHERE "+in+" AND lease_token = ?", list, c.Lease.Token).Error
}

// settleKept gives events that stay unsent, still under c's lease, their
// new state, and returns how many.
func (s *Store) settleKept(ctx context.Context, c Claim, requestID *int64, now time.Time, k keptKind, outs []Outcome) (int64, error) {
	upd := map[string]any{"status": k.status, "lease_until": nil, "lease_token": nil, "last_error": k.err, "updated_at": now}
	if k.status == models.EventQueued {
		upd["next_attempt_at"] = k.next
	} else if requestID != nil {
		upd["request_id"] = requestID
	}
	if !k.untried {
		upd["attempts"] = gorm.Expr("attempts + 1")
	}
	ids := make([]int64, len(outs))
	for i, o := range outs {
		ids[i] = o.ID
	}
	in, list := s.idList("event_id", ids)
	res := s.q(ctx).Model(&unsentEvent{}).Where(in+" AND lease_token = ?", list, c.Lease.Token).Updates(upd)
	return res.RowsAffected, res.Error
}

// keepPayloads writes the payloads that outcomes carry (built at send
// time, or of an event held back) to their events still under c's lease.
func (s *Store) keepPayloads(ctx context.Context, c Claim, outs []Outcome) error {
	var cases strings.Builder
	var args []any
	var ids []int64
	for _, o := range outs {
		if o.Payload != "" {
			cases.WriteString(" WHEN ? THEN ?")
			args = append(args, o.ID, o.Payload)
			ids = append(ids, o.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	in, list := s.idList("event_id", ids)
	return s.q(ctx).Exec("UPDATE events SET payload = CASE id"+cases.String()+" END WHERE id IN (SELECT event_id FROM unsent_events WHERE "+
		in+" AND lease_token = ?)", append(args, list, c.Lease.Token)...).Error
}

// idList is "column IN (ids)" with the ids as one parameter: a Postgres
// array, or a JSON array that SQLite reads with json_each. A thousand bound
// variables would cost more to pass and plan than the statement's work.
func (s *Store) idList(column string, ids []int64) (string, string) {
	if s.dialect == "postgres" {
		return column + " = ANY(CAST(? AS bigint[]))", intArray('{', ids, '}')
	}
	return column + " IN (SELECT value FROM json_each(?))", intArray('[', ids, ']')
}

// intArray writes vs between open and close, comma-separated.
func intArray(open byte, vs []int64, close byte) string {
	b := make([]byte, 0, len(vs)*8+2)
	b = append(b, open)
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(append(b, close))
}

// textArray is vs as a Postgres array literal, each value quoted: one
// parameter, which gorm passes as it is (a slice it would spread into a
// list).
func textArray(vs []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range v {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// ReleaseEvents hands a claim's events back to the queue at once, when the
// dispatcher stops before sending them: those that still hold its lease.
func (s *Store) ReleaseEvents(ctx context.Context, c Claim) error {
	if len(c.Events) == 0 {
		return nil
	}
	ids := make([]int64, len(c.Events))
	for i, e := range c.Events {
		ids[i] = e.ID
	}
	err := s.q(ctx).Model(&unsentEvent{}).Where("event_id IN ? AND lease_token = ?", ids, c.Lease.Token).
		Updates(map[string]any{"lease_until": nil, "lease_token": nil}).Error
	return wrap("release events", err)
}

// InsertSendRequest logs one request to Meta.
func (s *Store) InsertSendRequest(ctx context.Context, r *models.SendRequest) error {
	return wrap("insert send request", s.q(ctx).Create(r).Error)
}

// QueueDepth counts the events still to send across all accounts, for
// metrics: queued (due, or waiting for a retry) and sending (under a
// lease). It reads only unsent events; how many were sent, failed or
// expired is what the settled counters say.
func (s *Store) QueueDepth(ctx context.Context) (map[models.EventStatus]int64, error) {
	var row struct{ Pending, Sending int64 }
	err := s.q(ctx).Model(&unsentEvent{}).
		Select("COUNT(*) AS pending, COUNT(CASE WHEN "+sendingSQL("", "?", true)+" THEN 1 END) AS sending", s.Now()).
		Where("status = ?", models.EventQueued).Scan(&row).Error
	return map[models.EventStatus]int64{models.EventQueued: row.Pending - row.Sending, models.EventSending: row.Sending}, wrap("queue depth", err)
}
