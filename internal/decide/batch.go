package decide

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Stage changes are recorded in batches, one path for all of them: the
// lead page and the stage API record a batch of one, a CSV upload
// thousands. A batch reads its leads, their stage changes and their events
// at once, decides each change in order in memory (a change sees those
// before it, of the batch too), and writes everything in one transaction
// (store.ChangeLeads); if a lead changed meanwhile, it decides again.

// StageItem is one stage change to record: the key its lead is found by
// and the change (capture.ValidStage, as the stage API validates it).
type StageItem struct {
	Key    store.LeadKey
	Change models.StageChange
}

// StageOutcome is what became of one StageItem: its result, or the
// Problem that refused it (lead not found, before the lead, a Purchase
// without its value).
type StageOutcome struct {
	StageResult
	Problem *Problem
}

// StageResult is a recorded stage change and its events.
type StageResult struct {
	// Lead is the lead as the change left it.
	Lead   models.Lead
	Change models.StageChange
	// Events are the events queued for the change, filled in ones first
	// (for a dry run, those it would queue).
	Events []models.Event
	// Replayed: the change was recorded before (its change_id, or its
	// stage and time); nothing was queued now.
	Replayed bool
}

// Problem is a stage change the account cannot take, for the API's error
// reply: its HTTP status, a code, the field at fault and what to do.
type Problem struct {
	Status  int
	Code    string
	Field   string
	Message string
}

func (p *Problem) Error() string { return p.Message }

// stageBatch bounds the changes written in one transaction.
const stageBatch = 1000

// Stage records a stage change of the account's lead found by key, as the
// stage API sends it, and returns its Problem as the error. Changes of an
// account given at the same time are recorded together, in the order they
// came, as one batch of Stages: one transaction and one commit for all of
// them (group commit). Once given, the change is recorded even if ctx
// ends: a retry then finds it recorded.
func (d *Decider) Stage(ctx context.Context, accountID int64, key store.LeadKey, change models.StageChange) (StageResult, error) {
	j := &stageJob{item: StageItem{Key: key, Change: change}, done: make(chan stageDone, 1)}
	d.line.Add(accountID, j)
	r := <-j.done
	if r.err != nil {
		return StageResult{}, r.err
	}
	if p := r.out.Problem; p != nil {
		return StageResult{}, p
	}
	return r.out.StageResult, nil
}

// stageLine bounds the changes of one account that Stage records together.
const stageLine = 64

// stageJob is a change given to Stage, waiting in its account's line.
type stageJob struct {
	item StageItem
	done chan stageDone
}

type stageDone struct {
	out StageOutcome
	err error
}

// writeStages records a batch of an account's changes given to Stage and
// answers each. If the batch fails, each change is tried alone: one that
// fails never costs the others their answer.
func (d *Decider) writeStages(accountID int64, batch []*stageJob) {
	items := make([]StageItem, len(batch))
	for i, j := range batch {
		items[i] = j.item
	}
	out, err := d.Stages(context.Background(), accountID, items, false)
	if err != nil && len(batch) > 1 {
		slog.Warn("batched stage changes failed; recording one by one", slog.Int("changes", len(batch)), slog.Any("error", err))
		for _, j := range batch {
			d.writeStages(accountID, []*stageJob{j})
		}
		return
	}
	for i, j := range batch {
		if err != nil {
			j.done <- stageDone{err: err}
			continue
		}
		j.done <- stageDone{out: out[i]}
	}
}

// Stages records stage changes of an account's leads found by their keys,
// in order: a change later in items sees those before it. Recording is
// idempotent (a change recorded already, by its change_id or else its
// lead, stage and time, is Replayed with what was recorded); a change is
// refused with a Problem when its lead is not found, it predates the lead,
// or a Purchase lacks its value. Each change's events are decided as Mark
// decides them. With dry set nothing is written: the outcomes say what
// recording would do. The error is the database's.
func (d *Decider) Stages(ctx context.Context, accountID int64, items []StageItem, dry bool) ([]StageOutcome, error) {
	out := make([]StageOutcome, len(items))
	for start, end := 0, 0; start < len(items); start = end {
		// A chunk never splits the changes of one key that come together
		// (an upload's preview groups them): a dry run's chunk cannot see
		// what an earlier one would have recorded.
		end = min(start+stageBatch, len(items))
		for end < len(items) && items[end].Key == items[end-1].Key {
			end++
		}
		chunk := items[start:end]
		keys := make([]store.LeadKey, len(chunk))
		for i, it := range chunk {
			keys[i] = it.Key
		}
		leads, err := d.store.LeadsByKeys(ctx, accountID, keys)
		if err != nil {
			return nil, err
		}
		var todo []pending
		found := make(map[int64]models.Lead, len(leads))
		for i, it := range chunk {
			l, ok := leads[it.Key]
			if !ok {
				out[start+i].Problem = notFound(it.Key.Field)
				continue
			}
			c := it.Change
			c.AccountID, c.LeadID, c.ID = accountID, l.ID, 0
			todo = append(todo, pending{out: &out[start+i], change: c})
			found[l.ID] = l
		}
		if err := d.record(ctx, accountID, todo, found, true, dry); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Changes records stage changes of an account's leads known by their ids,
// as a CRM connection's worker hands them over (internal/crmsync), in
// order, in one batch; the outcomes are as Stages's. The changes are not
// checked as the stage API's are: the worker has moved a change that
// predates its lead to just after it (CRM clocks differ), and a Purchase
// without the deal's value is held back with the reason rather than the
// change refused, so the funnel still counts the stage.
func (d *Decider) Changes(ctx context.Context, accountID int64, changes []models.StageChange) ([]StageOutcome, error) {
	out := make([]StageOutcome, len(changes))
	for start := 0; start < len(changes); start += stageBatch {
		chunk := changes[start:min(start+stageBatch, len(changes))]
		todo := make([]pending, len(chunk))
		for i, c := range chunk {
			c.AccountID, c.ID = accountID, 0
			todo[i] = pending{out: &out[start+i], change: c}
		}
		if err := d.record(ctx, accountID, todo, nil, false, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func notFound(field string) *Problem {
	return &Problem{Status: http.StatusNotFound, Code: "lead_not_found", Field: "lead." + field,
		Message: fmt.Sprintf("no lead of this account has this %s", strings.ReplaceAll(field, "_", " "))}
}

// pending is a change to record and where its outcome goes.
type pending struct {
	out    *StageOutcome
	change models.StageChange
}

// accountState is what deciding reads of an account, once per batch.
type accountState struct {
	models.Account
	datasets []models.Dataset
	rules    []models.SendRule
	stages   []models.Stage
}

// record decides and writes todo's changes, in order, and fills in their
// outcomes. found, if not nil, are their leads as just read, for the first
// try. checked: refuse a change that predates its lead or lacks a
// Purchase's value (the stage API's and the upload's checks; the lead page
// checks the value in its form).
func (d *Decider) record(ctx context.Context, accountID int64, todo []pending, found map[int64]models.Lead, checked, dry bool) error {
	if len(todo) == 0 {
		return nil
	}
	acc, err := d.account(ctx, accountID)
	if err != nil {
		return err
	}
	for try := 1; ; try++ {
		fresh, err := d.decideAll(ctx, acc, todo, found, checked, dry)
		if errors.Is(err, store.ErrStale) && try < staleTries {
			found = nil // read them again
			continue
		}
		if err == nil && fresh > 0 {
			d.notify()
		}
		return err
	}
}

func (d *Decider) account(ctx context.Context, accountID int64) (accountState, error) {
	var a accountState
	var err error
	if a.Account, err = d.store.Account(ctx, accountID); err != nil {
		return a, err
	}
	if a.datasets, err = d.store.Datasets(ctx, accountID); err != nil {
		return a, err
	}
	if a.rules, err = d.store.SendRules(ctx, accountID); err != nil {
		return a, err
	}
	a.stages, err = d.store.Stages(ctx, accountID)
	return a, err
}

// leadState is a lead of a batch as the batch's changes so far leave it.
type leadState struct {
	lead    models.Lead
	keys    normalize.Keys
	history []models.StageChange
	events  []models.Event
	// batch are the indexes of the batch's changes of the lead.
	batch []int
}

// decideAll is one try of record: it reads the leads as they are now
// (unless found), decides each change in order, and writes them unless
// dry. It returns
// how many events were new.
func (d *Decider) decideAll(ctx context.Context, acc accountState, todo []pending, found map[int64]models.Lead, checked, dry bool) (int, error) {
	s := d.store
	var ids []int64
	seen := map[int64]bool{}
	for _, p := range todo {
		if !seen[p.change.LeadID] {
			seen[p.change.LeadID] = true
			ids = append(ids, p.change.LeadID)
		}
	}
	leads := found
	if leads == nil {
		var err error
		if leads, err = s.LeadsByID(ctx, acc.ID, ids); err != nil {
			return 0, err
		}
	}
	histories, err := s.StageHistories(ctx, acc.ID, ids)
	if err != nil {
		return 0, err
	}
	events, err := s.LeadsEvents(ctx, acc.ID, ids)
	if err != nil {
		return 0, err
	}
	states := make(map[int64]*leadState, len(leads))
	for id, l := range leads {
		keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
		if err != nil {
			return 0, fmt.Errorf("decide: lead %d match keys: %w", l.ID, err)
		}
		states[id] = &leadState{lead: l, keys: keys, history: histories[id], events: events[id]}
	}

	// The changes to record, the lead as each leaves it, what deciding
	// said and the change's own new events; slot[i] is todo[i]'s index
	// among them (a replay's, that of the change it repeats), -1 for none.
	var (
		recorded []models.StageChange
		afters   []models.Lead
		decided  []store.EventChanges
		queued   [][]models.Event
	)
	slot := make([]int, len(todo))
	pend := unstored{}
	var storedReplays []int64
	now := time.Now()
	for i, p := range todo {
		slot[i] = -1
		*p.out = StageOutcome{}
		st := states[p.change.LeadID]
		if st == nil {
			p.out.Problem = notFound("id") // deleted since it was found
			continue
		}
		c := p.change
		c.OccurredAt = c.OccurredAt.UTC().Truncate(time.Microsecond) // as Postgres keeps it
		if same, k := st.same(c, recorded); same != nil || k >= 0 {
			p.out.Replayed = true
			if same != nil {
				p.out.Lead, p.out.Change = st.lead, *same
				storedReplays = append(storedReplays, same.ID)
			}
			slot[i] = k
			continue
		}
		if checked {
			if p.out.Problem = check(st.lead, acc.rules, c); p.out.Problem != nil {
				continue
			}
		}
		after := store.AfterStageChange(st.lead, c, store.IsNewestStage(st.history, c.OccurredAt))
		in := Input{Account: acc.Account, Datasets: acc.datasets, Rules: acc.rules, Lead: after, Keys: st.keys, Events: st.events}
		ch := changes(d.Matchers.Decide(in))
		if c.Stage != models.StageJunk && c.Stage != models.StageNotJunk {
			ch.Stage = d.Matchers.StageEvents(in, StageInput{Change: c, Stages: acc.stages, Reached: reached(st.history), Now: now})
		}
		pend.number(ch)
		slot[i] = len(recorded)
		st.batch = append(st.batch, len(recorded))
		queued = append(queued, st.apply(c, after, ch))
		pend.settle(&ch)
		recorded, afters, decided = append(recorded, c), append(afters, after), append(decided, ch)
	}

	fresh := 0
	if !dry && len(recorded) > 0 {
		expect := make(map[int64]time.Time, len(recorded))
		writes := make([]store.LeadChange, len(recorded))
		for k := range recorded {
			id := recorded[k].LeadID
			expect[id] = leads[id].UpdatedAt
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
	for i, p := range todo {
		k := slot[i]
		switch {
		case p.out.Problem != nil:
		case k >= 0:
			pend.final(queued[k])
			p.out.Lead, p.out.Change, p.out.Events = afters[k], recorded[k], queued[k]
			if !dry {
				for j := range queued[k] {
					queued[k][j].StageChangeID = &recorded[k].ID
				}
			}
		default:
			p.out.Events = stored[p.out.Change.ID]
		}
	}
	return fresh, nil
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

// check says why the account cannot take change c of lead l as it is:
// it predates the lead, or a mapping of its stage is a Purchase that needs
// the change's value (ChangeProblem).
func check(l models.Lead, rules []models.SendRule, c models.StageChange) *Problem {
	if c.OccurredAt.Before(l.CreatedAt.Truncate(time.Second)) {
		return &Problem{Status: http.StatusUnprocessableEntity, Code: "before_lead", Field: "occurred_at",
			Message: fmt.Sprintf("occurred_at is before the lead was captured (%s): a stage change cannot come first",
				l.CreatedAt.UTC().Format(time.RFC3339))}
	}
	if msg := ChangeProblem(rules, c); msg != "" {
		return &Problem{Status: http.StatusUnprocessableEntity, Code: "value_required", Field: "value", Message: msg}
	}
	return nil
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
func reached(history []models.StageChange) map[string]bool {
	out := make(map[string]bool, len(history))
	for _, c := range history {
		if c.Stage != models.StageJunk && c.Stage != models.StageNotJunk {
			out[strings.ToLower(c.Stage)] = true
		}
	}
	return out
}
