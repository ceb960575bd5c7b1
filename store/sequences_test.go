package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// seqEvent queues lead l's event name on dataset d at at, with status
// st (its time in UTC, as the product stores it): queued, failed, expired
// and dry_run as queued; sent through a claim
// and its settle, as the dispatcher sends.
func seqEvent(t *testing.T, s *store.Store, d models.Dataset, l models.Lead, name string, at time.Time, st models.EventStatus) {
	t.Helper()
	ctx := t.Context()
	e := models.Event{AccountID: d.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault, EventName: name,
		EventID: fmt.Sprintf("%s-%d-%d", name, l.ID, at.Unix()), EventTime: at.UTC(), NextAttemptAt: time.Now().Add(-time.Hour)}
	if st != models.EventSent {
		e.Status = st
	}
	stored := enqueue(t, s, e)
	if st != models.EventSent {
		return
	}
	now := time.Now().UTC()
	c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	var outs []store.Outcome
	for _, ce := range c.Events {
		if ce.ID == stored[0].ID {
			outs = append(outs, store.Outcome{ID: ce.ID, Status: models.EventSent})
		} else {
			outs = append(outs, store.Outcome{ID: ce.ID, Status: models.EventQueued, Untried: true, NextAttemptAt: now.Add(-time.Hour)})
		}
	}
	if len(outs) == 0 {
		t.Fatalf("event %s of lead %d was not claimed to be sent", name, l.ID)
	}
	if err := s.SettleEvents(ctx, c, nil, "trace", now, outs); err != nil {
		t.Fatal(err)
	}
}

// A lead's sequence is complete in the week of its final event, in the
// account's time zone, when its initial event on the same dataset is
// earlier; failed and expired events are not counted, sent, waiting and
// dry-run ones are.
func TestSequenceWeeks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		other := models.Dataset{AccountID: a.ID, Name: "Other", PixelID: "223456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &other); err != nil {
			t.Fatal(err)
		}
		berlin, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		// A Wednesday: the weeks start on Mondays 23 February, 2 and 9
		// March, Berlin time (UTC+1).
		now := time.Date(2026, 3, 11, 12, 0, 0, 0, berlin)
		at := func(day, hour, minute int) time.Time { return time.Date(2026, 3, day, hour, minute, 0, 0, berlin) }
		seq := models.Sequence{AccountID: a.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: "QualifiedLead"}
		if err := s.CreateSequence(ctx, &seq); err != nil {
			t.Fatal(err)
		}
		lead := func(n int) models.Lead {
			return storedLead(t, s, a, at(1, 0, 0).AddDate(0, 0, -10), fmt.Sprintf("l%d@example.com", n))
		}
		sent, queued, failed, expired, dry := models.EventSent, models.EventQueued, models.EventFailed, models.EventExpired, models.EventDryRun

		// Last full week: Sunday 23:59 Berlin is 22:59 UTC.
		l1 := lead(1)
		seqEvent(t, s, d, l1, "Lead", at(2, 10, 0), sent)
		seqEvent(t, s, d, l1, "QualifiedLead", at(8, 23, 59), sent)
		// The current week: Monday 00:00 Berlin is Sunday 23:00 UTC.
		l2 := lead(2)
		seqEvent(t, s, d, l2, "Lead", at(2, 11, 0), sent)
		seqEvent(t, s, d, l2, "QualifiedLead", at(9, 0, 0), queued)
		// The final event before the initial one: not complete.
		l3 := lead(3)
		seqEvent(t, s, d, l3, "QualifiedLead", at(3, 9, 0), sent)
		seqEvent(t, s, d, l3, "Lead", at(4, 9, 0), sent)
		// The initial event on another dataset: not complete.
		l4 := lead(4)
		seqEvent(t, s, other, l4, "Lead", at(2, 9, 0), sent)
		seqEvent(t, s, d, l4, "QualifiedLead", at(4, 9, 0), sent)
		// A failed final event, an expired initial one: not counted.
		l5 := lead(5)
		seqEvent(t, s, d, l5, "Lead", at(2, 9, 0), sent)
		seqEvent(t, s, d, l5, "QualifiedLead", at(4, 9, 0), failed)
		l6 := lead(6)
		seqEvent(t, s, d, l6, "Lead", at(2, 9, 0), expired)
		seqEvent(t, s, d, l6, "QualifiedLead", at(4, 9, 0), sent)
		// Waiting and dry-run events count: Meta gets them, or would.
		l7 := lead(7)
		seqEvent(t, s, d, l7, "Lead", at(2, 9, 0), queued)
		seqEvent(t, s, d, l7, "QualifiedLead", at(5, 9, 0), dry)
		// Each final event completes the sequence: Meta counts each.
		l8 := lead(8)
		seqEvent(t, s, d, l8, "Lead", at(2, 8, 0), sent)
		seqEvent(t, s, d, l8, "QualifiedLead", at(3, 9, 0), sent)
		seqEvent(t, s, d, l8, "QualifiedLead", at(6, 9, 0), sent)
		// Before the weeks shown.
		l9 := lead(9)
		seqEvent(t, s, d, l9, "Lead", at(1, 8, 0).AddDate(0, 0, -9), sent)
		seqEvent(t, s, d, l9, "QualifiedLead", at(1, 9, 0).AddDate(0, 0, -8), sent)

		// Another account's sequence is not in the count.
		db := newDataset(t, s, b, models.ModeLive)
		if err := s.CreateSequence(ctx, &models.Sequence{AccountID: b.ID, DatasetID: db.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}); err != nil {
			t.Fatal(err)
		}

		got, err := s.SequenceWeeks(ctx, a.ID, berlin, now, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Sequence.ID != seq.ID {
			t.Fatalf("SequenceWeeks = %+v; want acme's one sequence", got)
		}
		want := []store.SequenceWeek{{Start: at(1, 0, 0).AddDate(0, 0, -6)}, {Start: at(2, 0, 0), Complete: 4}, {Start: at(9, 0, 0), Complete: 1}}
		for i, w := range got[0].Weeks {
			if !w.Start.Equal(want[i].Start) || w.Complete != want[i].Complete || w.AtLeast {
				t.Errorf("week %d = %v %d; want %v %d", i, w.Start, w.Complete, want[i].Start, want[i].Complete)
			}
		}
		l := got[0].Learning()
		if !l.Limited || l.LastWeek.Complete != 4 || l.Threshold != store.LearningThreshold || !l.LastWeek.Start.Equal(at(2, 0, 0)) {
			t.Errorf("Learning = %+v; want limited, 4 in the week of 2 March against %d", l, store.LearningThreshold)
		}
		// In UTC the Monday 00:00 Berlin event belongs to the week before.
		utc, err := s.SequenceWeeks(ctx, a.ID, time.UTC, now, 3)
		if err != nil {
			t.Fatal(err)
		}
		if c := utc[0].Weeks[1].Complete; c != 5 {
			t.Errorf("last full week in UTC = %d; want 5", c)
		}
	})
}

// A sequence whose last full week reaches the threshold is not learning
// limited; one without a full week counted is.
func TestSequenceLearning(t *testing.T) {
	t.Parallel()
	weeks := func(n ...int64) store.SequenceCount {
		var c store.SequenceCount
		for _, x := range n {
			c.Weeks = append(c.Weeks, store.SequenceWeek{Complete: x})
		}
		return c
	}
	tests := []struct {
		name    string
		count   store.SequenceCount
		limited bool
	}{
		{"under", weeks(80, 49, 200), true},
		{"at the threshold", weeks(0, 50, 0), false},
		{"no full week", weeks(500), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.count.Learning(); got.Limited != tt.limited {
				t.Errorf("Learning() = %+v; want limited %v", got, tt.limited)
			}
		})
	}
}

// Weeks start on Monday 00:00 in the zone given, also across a change of
// daylight saving time.
func TestWeekStarts(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// Tuesday 31 March 2026; summer time began on Sunday 29 March.
	got := store.WeekStarts(berlin, time.Date(2026, 3, 31, 0, 30, 0, 0, berlin), 2)
	want := []time.Time{time.Date(2026, 3, 23, 0, 0, 0, 0, berlin), time.Date(2026, 3, 30, 0, 0, 0, 0, berlin)}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("WeekStarts[%d] = %v; want %v", i, got[i], want[i])
		}
	}
	// A Monday at midnight starts its own week.
	if got := store.WeekStarts(berlin, want[1], 1); !got[0].Equal(want[1]) {
		t.Errorf("WeekStarts(Monday 00:00) = %v; want %v", got[0], want[1])
	}
}

// Sequences belong to their account: another account's dataset and id are
// not found; the same sequence twice and the 21st are refused; a replace
// keeps the sequences it has.
func TestSequenceCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeDryRun)
		db := newDataset(t, s, b, models.ModeDryRun)
		q := models.Sequence{AccountID: a.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}
		if err := s.CreateSequence(ctx, &q); err != nil || q.ID == 0 {
			t.Fatalf("CreateSequence = %+v, %v", q, err)
		}
		dup := q
		if err := s.CreateSequence(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same sequence again err = %v; want ErrConflict", err)
		}
		if err := s.CreateSequence(ctx, &models.Sequence{AccountID: a.ID, DatasetID: db.ID, InitialEvent: "Lead", FinalEvent: "Schedule"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's dataset err = %v; want ErrNotFound", err)
		}
		if err := s.DeleteSequence(ctx, b.ID, q.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete from another account err = %v; want ErrNotFound", err)
		}
		for i := 1; i < store.MaxSequences; i++ {
			if err := s.CreateSequence(ctx, &models.Sequence{AccountID: a.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: fmt.Sprintf("Step%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateSequence(ctx, &models.Sequence{AccountID: a.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: "OneMore"}); !errors.Is(err, store.ErrSequenceLimit) {
			t.Errorf("sequence %d err = %v; want ErrSequenceLimit", store.MaxSequences+1, err)
		}
		want := []models.Sequence{
			{DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: "Purchase"},
			{DatasetID: d.ID, InitialEvent: "Contact", FinalEvent: "Schedule"},
		}
		if err := s.ReplaceSequences(ctx, a.ID, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Sequences(ctx, a.ID)
		if err != nil || len(got) != 2 || got[0].ID != q.ID || got[1].InitialEvent != "Contact" || got[1].AccountID != a.ID {
			t.Errorf("after replace = %+v, %v; want Lead → Purchase kept (id %d) and Contact → Schedule", got, err, q.ID)
		}
		if err := s.ReplaceSequences(ctx, a.ID, []models.Sequence{{DatasetID: db.ID, InitialEvent: "Lead", FinalEvent: "Purchase"}}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("replace with another account's dataset err = %v; want ErrNotFound", err)
		}
		if err := s.DeleteSequence(ctx, a.ID, q.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Sequences(ctx, b.ID); len(got) != 0 {
			t.Errorf("beta's sequences = %+v; want none", got)
		}
	})
}
