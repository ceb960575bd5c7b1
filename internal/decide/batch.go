package decide

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Stage changes are recorded in batches, one path for all of them: the
// stage API's concurrent requests of an account share a batch, a CSV
// upload records a thousand rows at a time. A batch reads the account, its
// leads, their stage changes and their events at once and reserves the
// changes' ids (store.ReadStages), checks and decides each change in order
// in memory (a change sees those before it, of the batch too), and writes
// everything in one transaction (store.ChangeLeads); if a lead changed
// meanwhile, it decides again.

// stageBatch bounds the changes written in one transaction.
const stageBatch = 1000

// recordAll is RecordAll, or with dry set DryRun.
func (d *Decider) recordAll(ctx context.Context, accountID int64, cs []Change, dry bool) ([]Outcome, error) {
	out := make([]Outcome, len(cs))
	for start, end := 0, 0; start < len(cs); start = end {
		// A chunk never splits the changes of one lead key that come
		// together (an upload's preview groups them): a dry run's chunk
		// cannot see what an earlier one would have recorded.
		end = min(start+stageBatch, len(cs))
		for end < len(cs) && slices.Equal(cs[end].Keys, cs[end-1].Keys) {
			end++
		}
		if err := d.recordChunk(ctx, accountID, cs[start:end], out[start:end], dry); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recordChunk decides and writes cs, in order, and fills in their
// outcomes; if a lead changed between the read and the write, it decides
// again from the leads as they are then.
func (d *Decider) recordChunk(ctx context.Context, accountID int64, cs []Change, out []Outcome, dry bool) error {
	for try := 1; ; try++ {
		fresh, err := d.decideAll(ctx, accountID, cs, out, dry)
		if errors.Is(err, store.ErrStale) && try < staleTries {
			continue
		}
		if err == nil && fresh > 0 {
			d.notify()
		}
		return err
	}
}

// accountState is what deciding reads of an account, once per batch.
type accountState struct {
	models.Account
	datasets []models.Dataset
	rules    []models.SendRule
	stages   []models.Stage
	// names finds a stage by its name, an alias or a CRM label.
	names name.Stages
}

// leadState is a lead of a batch as the batch's changes so far leave it.
type leadState struct {
	lead models.Lead
	// read is the lead as read, whose updated_at the write expects.
	read    models.Lead
	keys    normalize.Keys
	history []models.StageChange
	events  []models.Event
	// batch are the indexes of the batch's changes of the lead.
	batch []int
}

// decideAll is one try of recordChunk: it reads the account and the
// leads as they are now, checks and decides each change in order, and
// writes them unless dry. It returns how many events were new.
func (d *Decider) decideAll(ctx context.Context, accountID int64, cs []Change, out []Outcome, dry bool) (int, error) {
	s := d.store
	var keys []store.LeadKey
	for _, c := range cs {
		keys = append(keys, c.Keys...)
	}
	reserve := len(cs)
	if dry {
		reserve = 0
	}
	read, err := s.ReadStages(ctx, accountID, keys, reserve)
	if err != nil {
		return 0, err
	}
	acc := accountState{Account: read.Account, datasets: read.Datasets, rules: read.Rules, stages: read.Stages,
		names: name.NewStages(read.Stages, read.CRMLabels)}
	states := make(map[int64]*leadState, len(read.Leads))
	for _, l := range read.Leads {
		if states[l.ID] != nil {
			continue
		}
		keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
		if err != nil {
			return 0, fmt.Errorf("decide: lead %d match keys: %w", l.ID, err)
		}
		states[l.ID] = &leadState{lead: l, read: l, keys: keys, history: read.Histories[l.ID], events: read.Events[l.ID]}
	}

	// The changes to record, the lead as each leaves it, what deciding
	// said and the change's own new events; slot[i] is cs[i]'s index
	// among them (a replay's, that of the change it repeats), -1 for none.
	var (
		recorded []models.StageChange
		afters   []models.Lead
		decided  []store.EventChanges
		queued   [][]models.Event
	)
	slot := make([]int, len(cs))
	pend := unstored{}
	var storedReplays []int64
	now := d.store.Now()
	for i, c := range cs {
		slot[i] = -1
		o := &out[i]
		*o = Outcome{Datasets: read.Datasets}
		if o.Refused = check(acc, &c, now); o.Refused != nil {
			continue
		}
		st := states[firstLead(c.Keys, read.Leads)]
		if st == nil {
			o.Refused = notFound(c)
			continue
		}
		if o.Refused = checkLead(acc, st.lead, &c); o.Refused != nil {
			o.Lead = st.lead
			continue
		}
		o.Unmapped = c.Stage != models.StageJunk && c.Stage != models.StageNotJunk && acc.names.Index(c.Stage) < 0
		sc := models.StageChange{AccountID: acc.ID, LeadID: st.lead.ID, Stage: c.Stage, OccurredAt: c.OccurredAt, Value: c.Value,
			Currency: c.Currency, ChangeID: c.ChangeID, UserID: c.UserID, Source: c.Source, Via: c.Via, ViaID: c.ViaID, ViaRow: c.ViaRow}
		if same, k := st.same(sc, recorded); same != nil || k >= 0 {
			o.Replayed = true
			if same != nil {
				o.Lead, o.Change = st.lead, *same
				storedReplays = append(storedReplays, same.ID)
			}
			slot[i] = k
			continue
		}
		lead := after(st.lead, sc, isNewest(st.history, sc.OccurredAt))
		in := Input{Account: acc.Account, Datasets: acc.datasets, Rules: acc.rules, Lead: lead, Keys: st.keys, Events: st.events}
		ch := changes(d.Matchers.Decide(in))
		if sc.Stage != models.StageJunk && sc.Stage != models.StageNotJunk {
			ch.Stage = d.Matchers.StageEvents(in, StageInput{Change: sc, Stages: acc.stages, Reached: reached(acc.names, st.history), Now: now})
		}
		pend.number(ch)
		slot[i] = len(recorded)
		st.batch = append(st.batch, len(recorded))
		queued = append(queued, st.apply(sc, lead, ch))
		pend.settle(&ch)
		recorded, afters, decided = append(recorded, sc), append(afters, lead), append(decided, ch)
	}

	fresh := 0
	if !dry && len(recorded) > 0 {
		expect := make(map[int64]time.Time, len(recorded))
		writes := make([]store.LeadChange, len(recorded))
		for k := range recorded {
			id := recorded[k].LeadID
			expect[id] = states[id].read.UpdatedAt
			recorded[k].ID = read.ChangeIDs[k]
			writes[k] = store.LeadChange{Change: &recorded[k], After: &afters[k], Events: decided[k]}
		}
		if fresh, err = s.ChangeLeads(ctx, acc.ID, expect, writes); err != nil {
			return 0, err
		}
	}

	// The events of each change: those it queued (they were not stored
	// before: apply), or a replay's, as stored.
	stored := map[int64][]models.Event{}
	if len(storedReplays) > 0 {
		if stored, err = s.StageChangesEvents(ctx, acc.ID, storedReplays); err != nil {
			return 0, err
		}
	}
	for i := range cs {
		o := &out[i]
		k := slot[i]
		switch {
		case o.Refused != nil:
		case k >= 0:
			pend.final(queued[k])
			o.Lead, o.Change, o.Events = afters[k], recorded[k], queued[k]
			if !dry {
				for j := range queued[k] {
					queued[k][j].StageChangeID = &recorded[k].ID
				}
			}
		default:
			o.Events = stored[o.Change.ID]
		}
	}
	return fresh, nil
}

// firstLead is the id of the lead the first of keys finds in leads, 0
// for none.
func firstLead(keys []store.LeadKey, leads map[store.LeadKey]models.Lead) int64 {
	for _, k := range keys {
		if l, ok := leads[k]; ok {
			return l.ID
		}
	}
	return 0
}

// unstored are the events a batch's earlier changes make, by the
// temporary (negative) ids they carry until they are written: a later
// change of the lead may cancel one, or queue it again, before it is
// stored, and the event is then written as that change leaves it.
type unstored map[int64]*models.Event

// number gives ch's new events temporary ids.
func (u unstored) number(ch store.EventChanges) {
	for _, evs := range [][]models.Event{ch.New, ch.Stage} {
		for i := range evs {
			id := -int64(len(u) + 1)
			evs[i].ID, u[id] = id, &evs[i]
		}
	}
}

// settle applies ch's cancels and requeues of events that are not stored
// yet to the events as they will be written, and leaves ch the stored
// ones.
func (u unstored) settle(ch *store.EventChanges) {
	ch.Requeue = slices.DeleteFunc(ch.Requeue, func(id int64) bool {
		e := u[id]
		if e != nil {
			e.Status, e.LastError = models.EventQueued, ""
		}
		return e != nil
	})
	ch.Cancel = slices.DeleteFunc(ch.Cancel, func(c store.EventCancel) bool {
		e := u[c.ID]
		if e != nil {
			e.Status, e.LastError = models.EventFailed, c.Reason
		}
		return e != nil
	})
}

// final makes evs, a change's events for its outcome, as they are
// written: with the state the batch's later changes left them in, and no
// temporary id.
func (u unstored) final(evs []models.Event) {
	for i := range evs {
		if e := u[evs[i].ID]; e != nil && e.Status != "" {
			evs[i].Status, evs[i].LastError = e.Status, e.LastError
		}
		evs[i].ID = 0
	}
}

// same finds the change c repeats: a stored one, or the index of one of
// the batch's (-1 for none). A change with a change_id repeats the lead's
// change with that id; one without, the change of the same stage at the
// same time.
func (st *leadState) same(c models.StageChange, batch []models.StageChange) (*models.StageChange, int) {
	repeats := func(o models.StageChange) bool {
		if c.ChangeID != nil {
			return o.ChangeID != nil && *o.ChangeID == *c.ChangeID
		}
		return o.ChangeID == nil && o.Stage == c.Stage && o.OccurredAt.Equal(c.OccurredAt)
	}
	for i := range st.history {
		if st.history[i].ID > 0 && repeats(st.history[i]) {
			return &st.history[i], -1
		}
	}
	for _, k := range st.batch {
		if repeats(batch[k]) {
			return nil, k
		}
	}
	return nil, -1
}

// apply makes the lead's state what change c and its decision ch leave:
// the lead after, its history and its events. It returns the change's own
// events that are new.
func (st *leadState) apply(c models.StageChange, after models.Lead, ch store.EventChanges) []models.Event {
	st.lead = after
	st.history = append(st.history, c)
	have := make(map[eventKey]int, len(st.events))
	for i, e := range st.events {
		have[eventKey{e.DatasetID, e.EventID}] = i
	}
	add := func(e models.Event) bool {
		k := eventKey{e.DatasetID, e.EventID}
		if _, ok := have[k]; ok {
			return false
		}
		if e.Status == "" {
			e.Status = models.EventQueued
		}
		have[k] = len(st.events)
		st.events = append(st.events, e)
		return true
	}
	for _, e := range ch.New {
		add(e)
	}
	var queued []models.Event
	for _, e := range ch.Stage {
		if add(e) {
			queued = append(queued, st.events[len(st.events)-1])
		}
	}
	byID := make(map[int64]int, len(st.events))
	for i, e := range st.events {
		if e.ID != 0 {
			byID[e.ID] = i
		}
	}
	for _, id := range ch.Requeue {
		if i, ok := byID[id]; ok {
			st.events[i].Status, st.events[i].LastError = models.EventQueued, ""
		}
	}
	for _, cc := range ch.Cancel {
		if i, ok := byID[cc.ID]; ok {
			st.events[i].Status, st.events[i].LastError = models.EventFailed, cc.Reason
		}
	}
	return queued
}

// reached are the stages of a lead's history, junk markers aside,
// lower-cased.
func reached(names name.Stages, history []models.StageChange) map[string]bool {
	out := make(map[string]bool, len(history))
	for _, c := range history {
		if c.Stage != models.StageJunk && c.Stage != models.StageNotJunk {
			// A change recorded under a label that has since become an
			// alias reached that alias's stage.
			stage, _ := names.Resolve(c.Stage)
			out[strings.ToLower(stage)] = true
		}
	}
	return out
}
