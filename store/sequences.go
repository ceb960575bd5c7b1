package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
)

// MaxSequences bounds an account's sequences: each one is a count of its
// final events on the Stages and Overview pages.
const MaxSequences = 20

// LearningThreshold is how many optimisation events a week an ad set needs
// to leave Meta's learning phase: Meta's learning-phase guidance is "about
// 50 optimisation events per week". A sequence whose last full week has
// fewer complete sequences is learning limited.
const LearningThreshold = 50

// ErrSequenceLimit means the account has MaxSequences sequences already.
var ErrSequenceLimit = errors.New("store: the account has the most sequences it may have")

// Sequences lists an account's sequences, oldest first.
func (s *Store) Sequences(ctx context.Context, accountID int64) ([]models.Sequence, error) {
	var out []models.Sequence
	err := s.q(ctx).Where("account_id = ?", accountID).Order("id").Find(&out).Error
	return out, wrap("sequences", err)
}

// CreateSequence adds a sequence to its account. ErrNotFound: the dataset
// is not the account's; ErrConflict: the dataset has this sequence
// already; ErrSequenceLimit: the account has MaxSequences.
func (s *Store) CreateSequence(ctx context.Context, q *models.Sequence) error {
	return wrap("create sequence", s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.Dataset(ctx, q.AccountID, q.DatasetID); err != nil {
			return err
		}
		cur, err := tx.Sequences(ctx, q.AccountID)
		if err != nil {
			return err
		}
		for _, o := range cur {
			if o.DatasetID == q.DatasetID && o.InitialEvent == q.InitialEvent && o.FinalEvent == q.FinalEvent {
				return ErrConflict
			}
		}
		if len(cur) >= MaxSequences {
			return ErrSequenceLimit
		}
		q.ID = 0
		q.CreatedAt = s.Now()
		return tx.q(ctx).Create(q).Error
	}))
}

// DeleteSequence deletes one of the account's sequences; ErrNotFound for
// another account's.
func (s *Store) DeleteSequence(ctx context.Context, accountID, id int64) error {
	res := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Delete(&models.Sequence{})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("delete sequence", ErrNotFound)
	}
	return wrap("delete sequence", res.Error)
}

// ReplaceSequences makes the account's sequences want (their dataset,
// initial and final event), in one transaction: the sequences it has
// already are kept as they are, the others deleted, the missing created,
// in want's order. Each dataset must be the account's (ErrNotFound).
func (s *Store) ReplaceSequences(ctx context.Context, accountID int64, want []models.Sequence) error {
	if len(want) > MaxSequences {
		return wrap("replace sequences", ErrSequenceLimit)
	}
	key := func(q models.Sequence) string {
		return fmt.Sprintf("%d\x00%s\x00%s", q.DatasetID, q.InitialEvent, q.FinalEvent)
	}
	return wrap("replace sequences", s.Tx(ctx, func(tx *Store) error {
		cur, err := tx.Sequences(ctx, accountID)
		if err != nil {
			return err
		}
		wanted := map[string]bool{}
		for _, q := range want {
			wanted[key(q)] = true
		}
		have := map[string]bool{}
		for _, q := range cur {
			if !wanted[key(q)] {
				if err := tx.q(ctx).Delete(&models.Sequence{}, q.ID).Error; err != nil {
					return err
				}
				continue
			}
			have[key(q)] = true
		}
		now := s.Now()
		for _, q := range want {
			if have[key(q)] {
				continue
			}
			have[key(q)] = true
			if _, err := tx.Dataset(ctx, accountID, q.DatasetID); err != nil {
				return err
			}
			q.ID, q.AccountID, q.CreatedAt = 0, accountID, now
			if err := tx.q(ctx).Create(&q).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}

// SequenceWeek is one week of a sequence: from Start (a Monday 00:00 in
// the account's time zone) to the next Monday, and how many complete
// sequences it has.
type SequenceWeek struct {
	Start    time.Time
	Complete int64
	// AtLeast is true when the count stopped where it stops (MaxWeekCount;
	// LearningThreshold for LastWeekLearningOf): the week has that many or
	// more.
	AtLeast bool
}

// SequenceCount is a sequence with its complete sequences per week, oldest
// week first; the last is the current week, under way.
type SequenceCount struct {
	Sequence models.Sequence
	Weeks    []SequenceWeek
}

// Learning is what a sequence's last full week says about Meta's learning
// phase.
type Learning struct {
	// LastWeek is the last full week: the one before the current.
	LastWeek SequenceWeek
	// Threshold is LearningThreshold.
	Threshold int64
	// Limited is true when LastWeek has fewer complete sequences than
	// Threshold: Meta cannot leave the learning phase on them.
	Limited bool
}

// Learning says whether the sequence is learning limited, with the
// figures: fewer than LearningThreshold complete sequences in its last
// full week. A count of fewer than two weeks has no full week, and is
// limited with none.
func (c SequenceCount) Learning() Learning {
	l := Learning{Threshold: LearningThreshold}
	if n := len(c.Weeks); n >= 2 {
		l.LastWeek = c.Weeks[n-2]
	}
	l.Limited = l.LastWeek.Limited()
	return l
}

// Limited reports whether the week has fewer complete sequences than
// LearningThreshold: Meta cannot leave the learning phase on them.
func (w SequenceWeek) Limited() bool { return w.Complete < LearningThreshold }

// WeekStarts are the starts of the last weeks weeks at now, oldest first:
// Mondays 00:00 in loc, the last that of now's week. time.Date takes a
// day of 23 or 25 hours (a change of daylight saving time) as it comes.
func WeekStarts(loc *time.Location, now time.Time, weeks int) []time.Time {
	n := now.In(loc)
	back := (int(n.Weekday()) + 6) % 7 // days since Monday
	out := make([]time.Time, weeks)
	for i := range weeks {
		out[i] = DayStart(n.Year(), n.Month(), n.Day()-back-7*(weeks-1-i), loc)
	}
	return out
}

// countedSQL is "Meta got or will get the event" in SQL, the one test of
// it for sequences: the events row in scope (alias) is sent, waiting
// (queued or sending) or a dry run's, not failed (cancelled events fail)
// nor expired. A sent event has no unsent_events row. A scalar subquery,
// so that it stays a lookup by key per event whatever the row estimates.
func countedSQL(alias string) string {
	return "COALESCE((SELECT u.status FROM unsent_events u WHERE u.event_id = " + alias + ".id), '') NOT IN ('" +
		string(models.EventFailed) + "', '" + string(models.EventExpired) + "')"
}

// MaxWeekCount is where the count of a sequence's week stops: at twice
// LearningThreshold the week is clear of it, and the count's cost stays
// bounded (at most weeks × MaxWeekCount final events checked) however many
// leads the account has.
const MaxWeekCount = 2 * LearningThreshold

// sequenceWeeksSQL counts, for each sequence of the accounts and each
// week of w (its account, number, start and end: each account's weeks are
// those of its zone), the sequence's final events (f) of the week whose
// lead has the sequence's initial event (i) on the same dataset earlier,
// both events ones Meta got or will get, up to @cap. The final events are
// read in event_time order from events_name_time_idx, each lead's initial
// event by events_lead_idx (on Postgres from the index alone: it includes
// event_name): every week is a bounded read. %[1]s are the weeks' rows,
// %[2]s and %[3]s countedSQL of f and i.
const sequenceWeeksSQL = `
	WITH w (account_id, week, lo, hi) AS (VALUES %[1]s)
	SELECT s.id AS sequence_id, w.week, (SELECT COUNT(*) FROM (
		SELECT 1 FROM events f
		WHERE f.dataset_id = s.dataset_id AND f.event_name = s.final_event
		  AND f.event_time >= w.lo AND f.event_time < w.hi AND %[2]s
		  AND EXISTS (SELECT 1 FROM events i
			WHERE i.lead_id = f.lead_id AND i.dataset_id = s.dataset_id AND i.event_time < f.event_time
			  AND i.event_name = s.initial_event AND %[3]s)
		LIMIT @cap) c) AS complete
	FROM sequences s JOIN w ON w.account_id = s.account_id`

// sequenceWeeksSetup runs before the count, in its transaction, per
// dialect. Postgres prices the correlated count high (its plan cannot see
// that the cap bounds each week) and would compile it with JIT at a million
// leads: 20 ms of compiling for a statement that runs in 5 to 10.
var sequenceWeeksSetup = map[string]string{migrations.Postgres: "SET LOCAL jit = off"}

// SequenceWeeks counts the complete sequences of each of the account's
// sequences in each of the last weeks weeks at now (WeekStarts in loc, the
// account's time zone; the current week last). A lead completes a
// sequence with each final event whose event_time is later than one of
// its initial events on the same dataset, in the week of the final event:
// Meta counts every final event it gets towards learning. Events count
// when Meta got or will get them: sent, waiting and dry-run events (so a
// dry-run dataset shows what it would have), not failed or expired ones.
// A week's count stops at MaxWeekCount (SequenceWeek.AtLeast).
func (s *Store) SequenceWeeks(ctx context.Context, accountID int64, loc *time.Location, now time.Time, weeks int) ([]SequenceCount, error) {
	out, err := s.SequenceWeeksOf(ctx, []AccountZone{{AccountID: accountID, Loc: loc}}, now, weeks)
	return out[accountID], err
}

// AccountZone is an account with its time zone, whose weeks
// SequenceWeeksOf counts in.
type AccountZone struct {
	AccountID int64
	Loc       *time.Location
}

// SequenceWeeksOf is SequenceWeeks of each of accounts, by account (an
// account without sequences is missing), in one count for all of them:
// the agency overview's.
func (s *Store) SequenceWeeksOf(ctx context.Context, accounts []AccountZone, now time.Time, weeks int) (map[int64][]SequenceCount, error) {
	if weeks < 1 {
		return nil, nil
	}
	return s.sequenceCounts(ctx, accounts, func(loc *time.Location) []time.Time { return WeekStarts(loc, now, weeks) }, MaxWeekCount)
}

// LastWeekLearningOf is what the agency overview asks of each account's
// sequences, by account: their last full week's complete sequences
// (SequenceCount.Weeks holds that week alone), counted up to
// LearningThreshold: enough to tell whether each is learning limited
// (SequenceWeek.Limited), and no more, as it runs for every account a user
// has.
func (s *Store) LastWeekLearningOf(ctx context.Context, accounts []AccountZone, now time.Time) (map[int64][]SequenceCount, error) {
	return s.sequenceCounts(ctx, accounts, func(loc *time.Location) []time.Time { return WeekStarts(loc, now, 2)[:1] }, LearningThreshold)
}

// sequenceCounts counts the sequences of accounts in the weeks weeks
// gives for each account's zone, each week up to upTo (SequenceWeek.AtLeast
// when it stopped there).
func (s *Store) sequenceCounts(ctx context.Context, accounts []AccountZone, weeksIn func(*time.Location) []time.Time, upTo int64) (map[int64][]SequenceCount, error) {
	if len(accounts) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(accounts))
	for i, a := range accounts {
		ids[i] = a.AccountID
	}
	var seqs []models.Sequence
	in, list := s.idList("account_id", ids)
	if err := s.q(ctx).Where(in, list).Order("account_id, id").Find(&seqs).Error; err != nil || len(seqs) == 0 {
		return nil, wrap("sequence weeks", err)
	}
	starts := map[int64][]time.Time{}
	for _, q := range seqs {
		starts[q.AccountID] = nil
	}
	var counted []accountWeeks
	for _, a := range accounts {
		if w, ok := starts[a.AccountID]; ok && w == nil {
			starts[a.AccountID] = weeksIn(a.Loc)
			counted = append(counted, accountWeeks{accountID: a.AccountID, starts: starts[a.AccountID]})
		}
	}
	query, args := sequenceWeeksQuery(s.dialect, counted, upTo)
	var rows []struct {
		SequenceID int64
		Week       int
		Complete   int64
	}
	err := s.Tx(ctx, func(tx *Store) error {
		if q := sequenceWeeksSetup[tx.dialect]; q != "" {
			if err := tx.q(ctx).Exec(q).Error; err != nil {
				return err
			}
		}
		return tx.q(ctx).Raw(query, args).Scan(&rows).Error
	})
	if err != nil {
		return nil, wrap("sequence weeks", err)
	}
	out := map[int64][]SequenceCount{}
	type at struct {
		account int64
		i       int
	}
	where := map[int64]at{}
	for _, q := range seqs {
		c := SequenceCount{Sequence: q, Weeks: make([]SequenceWeek, len(starts[q.AccountID]))}
		for w := range c.Weeks {
			c.Weeks[w].Start = starts[q.AccountID][w]
		}
		where[q.ID] = at{q.AccountID, len(out[q.AccountID])}
		out[q.AccountID] = append(out[q.AccountID], c)
	}
	for _, r := range rows {
		if p, ok := where[r.SequenceID]; ok && r.Week >= 0 && r.Week < len(out[p.account][p.i].Weeks) {
			w := &out[p.account][p.i].Weeks[r.Week]
			w.Complete, w.AtLeast = r.Complete, r.Complete >= upTo
		}
	}
	return out, nil
}

// accountWeeks is an account and the starts of the weeks to count, each a
// week long.
type accountWeeks struct {
	accountID int64
	starts    []time.Time
}

// sequenceWeeksQuery is sequenceWeeksSQL for the accounts' weeks, with its
// arguments. Postgres is told the type of the weeks' times, which VALUES
// cannot infer; SQLite keeps them as the driver writes times, as it
// compares them.
func sequenceWeeksQuery(dialect string, accounts []accountWeeks, upTo int64) (string, map[string]any) {
	args := map[string]any{"cap": upTo}
	ts := func(name string) string { return "@" + name }
	if dialect == migrations.Postgres {
		ts = func(name string) string { return "CAST(@" + name + " AS timestamptz)" }
	}
	var rows []string
	for _, a := range accounts {
		for i, st := range a.starts {
			from, to := fmt.Sprintf("from%d", len(rows)), fmt.Sprintf("to%d", len(rows))
			args[from], args[to] = st.UTC(), st.AddDate(0, 0, 7).UTC()
			rows = append(rows, fmt.Sprintf("(%d, %d, %s, %s)", a.accountID, i, ts(from), ts(to)))
		}
	}
	return fmt.Sprintf(sequenceWeeksSQL, strings.Join(rows, ", "), countedSQL("f"), countedSQL("i")), args
}
