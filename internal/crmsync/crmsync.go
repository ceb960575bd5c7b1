package crmsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/service"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Options configure a Worker.
type Options struct {
	Store   *store.Store
	Decider *decide.Decider
	Box     *seal.Box
	Log     *slog.Logger
	// HubSpotAPIURL and PipedriveAPIURL are the CRMs' API base URLs.
	HubSpotAPIURL   string
	PipedriveAPIURL string
	// HTTP calls the CRMs' APIs; when nil, the crm package's client (10 s
	// timeout, no redirects: the token header would follow them).
	HTTP *http.Client
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Idle is how often Run looks for due deliveries when nothing wakes
	// it; 2 s when zero.
	Idle time.Duration
	// Batch bounds the deliveries one round takes; 1000 when zero.
	Batch int
	// LookUpBudget is how long a round spends on CRM API look-ups before
	// it leaves the rest to the next round, well within the claim's lease
	// (5 minutes: a look-up started within the budget may still take 11
	// calls of up to 10 s); 45 s when zero.
	LookUpBudget time.Duration
}

// Worker takes due deliveries from the inbox and records their changes.
type Worker struct {
	o Options
	// drain works the due deliveries; leads makes due those waiting for a
	// lead that a lead captured since has the keys of, and wakes drain.
	drain, leads *service.Loop
	wake         wakeForLeads
}

// New returns a Worker; Run starts it.
func New(o Options) *Worker {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Idle <= 0 {
		o.Idle = 2 * time.Second
	}
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	if o.LookUpBudget == 0 {
		o.LookUpBudget = 45 * time.Second
	}
	w := &Worker{o: o}
	w.drain = service.New(service.Options{Name: "crm deliveries", Every: o.Idle, Log: o.Log}, func(ctx context.Context) error {
		_, err := w.Drain(ctx)
		return err
	})
	w.leads = service.New(service.Options{Name: "crm deliveries: wake for new leads", Every: o.Idle, Log: o.Log}, func(ctx context.Context) error {
		_, err := w.WakeForLeads(ctx)
		return err
	})
	return w
}

// Notify wakes the worker: deliveries arrived.
func (w *Worker) Notify() { w.drain.Wake() }

// WakeForLeads makes due the deliveries waiting for a lead whose lookup
// keys a lead captured since the last look has (the first look only
// notes where the leads are), wakes the worker when there are some, and
// reports how many. Run calls it every Idle; tests call it directly.
func (w *Worker) WakeForLeads(ctx context.Context) (int, error) {
	n, err := w.wake.round(ctx, w)
	if n > 0 {
		w.drain.Wake()
	}
	return n, err
}

// Run works until ctx ends: it drains at once, when notified, and every
// Idle; every Idle too, it makes due the deliveries waiting for a lead
// that a lead captured since has the keys of. The round in flight when ctx ends
// writes what became of its deliveries before Run returns.
func (w *Worker) Run(ctx context.Context) error {
	w.leads.Start(ctx)
	defer w.leads.Stop()
	return w.drain.Run(ctx)
}

// Drain works rounds until no delivery is due, and returns how many it
// took. Tests call it directly.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	// The leads captured from now on wake the deliveries this drain
	// leaves waiting for theirs.
	if err := w.wake.start(ctx, w); err != nil {
		return 0, err
	}
	total := 0
	for {
		n, err := w.round(ctx)
		total += n
		if err != nil || n < w.o.Batch || ctx.Err() != nil {
			return total, err
		}
	}
}

// round claims a batch of due deliveries, works them and writes what
// became of each.
func (w *Worker) round(ctx context.Context) (int, error) {
	now := w.o.Now()
	ds, err := w.o.Store.ClaimCRMDeliveries(ctx, now, w.o.Batch)
	if err != nil || len(ds) == 0 {
		return 0, err
	}
	r := &round{w: w, now: now, started: time.Now(), conns: map[int64]*connection{}, accounts: map[int64]*models.Account{},
		keys: map[int64][]store.LeadKey{}}
	byAccount := map[int64][]*work{}
	var order []int64
	for i := range ds {
		wk := &work{d: &ds[i]}
		if !r.prepare(ctx, wk) {
			continue
		}
		if _, ok := byAccount[wk.d.AccountID]; !ok {
			order = append(order, wk.d.AccountID)
		}
		byAccount[wk.d.AccountID] = append(byAccount[wk.d.AccountID], wk)
	}
	for _, accountID := range order {
		r.record(ctx, accountID, byAccount[accountID])
	}
	// Written even when ctx ended: a delivery's lease would otherwise hold
	// it for deliveryLease, and its outcome would be lost.
	err = w.o.Store.FinishCRMDeliveries(context.WithoutCancel(ctx), ds)
	if errors.Is(err, store.ErrLeaseLost) {
		// The round outlived its lease and another worker took some of
		// its deliveries over: what became of those is that one's to say.
		w.o.Log.Warn("crm deliveries: lease lost", slog.Any("error", err))
		err = nil
	}
	if err == nil {
		// The keys a new lead wakes the deliveries waiting for theirs by.
		_, err = w.o.Store.SetCRMDeliveryKeys(context.WithoutCancel(ctx), ds, r.keys, now)
	}
	return len(ds), err
}

// work is one claimed delivery on its way: what prepare read of it, and
// the change it makes once its lead is found.
type work struct {
	d        *models.CRMDelivery
	conn     *connection
	acc      *models.Account
	ch       crm.Change
	stage    string
	refs     []crm.LeadRef
	keys     []store.LeadKey
	value    *float64
	currency string
	// triedBefore is the delivery's last try before this round's.
	triedBefore *time.Time
}

// round holds what one round read once: connections with their stage
// tables and opened tokens, and accounts.
type round struct {
	w   *Worker
	now time.Time
	// started is when the round began, on the wall clock: look-ups stop
	// in time for its outcomes to be written well within the lease.
	started  time.Time
	conns    map[int64]*connection
	accounts map[int64]*models.Account
	// keys are the lookup keys of the deliveries whose lead was not
	// found, by delivery id.
	keys map[int64][]store.LeadKey
}

type connection struct {
	models.CRMConnection
	err      error
	fields   map[string]string
	stages   map[string]models.CRMStage
	apiToken string
}

func (r *round) connection(ctx context.Context, id int64) *connection {
	if c, ok := r.conns[id]; ok {
		return c
	}
	c := &connection{}
	r.conns[id] = c
	if c.CRMConnection, c.err = r.w.o.Store.CRMConnectionByID(ctx, id); c.err != nil {
		return c
	}
	c.fields, _ = crm.StoredFields(c.Fields)
	stages, err := r.w.o.Store.CRMStages(ctx, c.AccountID, c.ID)
	if err != nil {
		c.err = err
		return c
	}
	c.stages = make(map[string]models.CRMStage, len(stages))
	// Pipedrive's won and lost rows are there even before they are
	// stored: won means the account's won stage until mapped otherwise.
	for _, s := range crm.WithStatusStages(crm.Kind(c.Kind), stages) {
		c.stages[s.CRMStageID] = s
	}
	if c.APITokenSealed != "" {
		c.apiToken, _ = r.w.o.Box.Open(c.APITokenSealed, crm.APITokenLabel(c.Token))
	}
	return c
}

func (r *round) account(ctx context.Context, id int64) (*models.Account, error) {
	if a, ok := r.accounts[id]; ok {
		return a, nil
	}
	a, err := r.w.o.Store.Account(ctx, id)
	if err != nil {
		return nil, err
	}
	r.accounts[id] = &a
	return &a, nil
}

// leadWait is how long a delivery waits for its lead before it is given
// up: a CRM deal whose lead never reached leadsignal in a week will not.
const leadWait = 7 * 24 * time.Hour

// prepare reads wk's change back, maps its stage, looks its contact up and
// works out the keys its lead is found by. It reports false, with the
// delivery's outcome set, when the change cannot go on now.
func (r *round) prepare(ctx context.Context, wk *work) bool {
	d := wk.d
	wk.triedBefore = d.TriedAt
	d.Attempts++
	d.TriedAt = &r.now
	c := r.connection(ctx, d.ConnectionID)
	if c.err != nil {
		r.wait(d, models.WaitingCRM, "the connection could not be read: "+c.err.Error())
		return false
	}
	kind := crm.Kind(c.Kind)
	changes, _, err := crm.Parse(kind, []byte(d.Body), c.fields)
	if err != nil || len(changes) != 1 {
		// It was read when it came: the connection's field mapping has
		// changed since. The body is kept; fixing the mapping wakes it.
		r.waitForMapping(d, fmt.Sprintf("the delivery cannot be read as one stage change with the connection's field mapping (%v): fix the mapping", err))
		return false
	}
	ch := changes[0]
	if ch.Problem != "" {
		r.needsAttention(d, ch.Problem)
		return false
	}
	stage, ok := r.stage(ctx, c, ch.StageID)
	if !ok {
		r.waitForMapping(d, fmt.Sprintf("%s stage %q is not mapped to one of the account's stages: map it on the connection's page", kind.Title(), ch.StageID))
		return false
	}
	acc, err := r.account(ctx, d.AccountID)
	if err != nil {
		r.wait(d, models.WaitingCRM, "the account could not be read: "+err.Error())
		return false
	}
	if kind != crm.Generic && time.Since(r.started) > r.w.o.LookUpBudget {
		// A slow CRM API must not keep the round past its lease, when
		// another worker would take its deliveries again: the rest go
		// to the next round, as they were, untried.
		d.Attempts--
		d.TriedAt, d.NextTryAt = wk.triedBefore, r.now
		return false
	}
	refs, value, currency, why := r.lookUp(ctx, c, ch)
	if why != nil {
		r.wait(d, why.waitingFor, why.reason)
		return false
	}
	if value == nil {
		value, currency = ch.Value, ch.Currency
	}
	*wk = work{d: d, conn: c, acc: acc, ch: ch, stage: stage, refs: refs, keys: leadKeys(acc, refs), value: value, currency: currency,
		triedBefore: wk.triedBefore}
	return true
}

// stage maps a CRM stage id to the account's stage. A HubSpot or Pipedrive
// stage must be mapped; a generic sender's stage is the account's stage
// of that name unless its id is in the table.
func (r *round) stage(ctx context.Context, c *connection, id string) (string, bool) {
	if s, ok := c.stages[id]; ok {
		if s.Stage == "" && s.SeenAt == nil || s.SeenAt != nil && r.now.Sub(*s.SeenAt) > time.Hour {
			r.see(ctx, c, id)
		}
		return s.Stage, s.Stage != ""
	}
	if crm.Kind(c.Kind) == crm.Generic {
		return id, id != ""
	}
	r.see(ctx, c, id)
	return "", false
}

// see lists a stage id a delivery carried on the connection's page.
func (r *round) see(ctx context.Context, c *connection, id string) {
	if err := r.w.o.Store.SeeCRMStage(ctx, c.AccountID, c.ID, id, r.now); err != nil {
		r.w.o.Log.Warn("crm deliveries: note a stage seen", slog.Int64("connection_id", c.ID), slog.Any("error", err))
		return
	}
	s := c.stages[id]
	s.CRMStageID, s.SeenAt = id, &r.now
	c.stages[id] = s
}

// change is the stage change a delivery hands to the recorder, on the
// CRM's clock (decide.FromCRM), its lead found by the contact's keys.
func (r *round) change(wk *work) decide.Change {
	kind := crm.Kind(wk.conn.Kind)
	c := decide.Change{Keys: wk.keys, Stage: wk.stage, OccurredAt: wk.d.OccurredAt, Value: wk.value, Currency: wk.currency,
		Origin: decide.FromCRM, Via: models.ViaCRM, ViaID: &wk.d.ID}
	if kind != crm.Generic {
		c.Source = kind.Title()
	}
	switch {
	case wk.ch.ChangeID != "":
		c.ChangeID = ptr(crm.FitKey(wk.ch.ChangeID))
	case kind != crm.Generic:
		c.ChangeID = ptr(crm.FitKey(fmt.Sprintf("%s:%d:%s", wk.conn.Kind, wk.conn.ID, wk.d.Key)))
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// record hands an account's changes to the recorder at once and writes
// what became of each delivery. One whose lead is not found waits for it,
// or is given up after leadWait.
func (r *round) record(ctx context.Context, accountID int64, ws []*work) {
	changes := make([]decide.Change, len(ws))
	for i, wk := range ws {
		changes[i] = r.change(wk)
	}
	out, err := r.w.o.Decider.RecordAll(ctx, accountID, changes)
	if err != nil && len(ws) > 1 && ctx.Err() == nil {
		// One change that fails never holds up the others.
		r.w.o.Log.Warn("crm deliveries: batch failed; recording one by one", slog.Int("changes", len(ws)), slog.Any("error", err))
		for _, wk := range ws {
			r.record(ctx, accountID, []*work{wk})
		}
		return
	}
	for i, wk := range ws {
		d := wk.d
		if err != nil {
			r.wait(d, models.WaitingCRM, "the stage change could not be recorded: "+err.Error())
			continue
		}
		o := out[i]
		switch {
		case o.Refused != nil && o.Refused.Code == decide.LeadNotFound:
			r.wait(d, models.WaitingLead, fmt.Sprintf("no lead of the account matches %s", describe(wk.refs)))
			r.keys[d.ID] = wk.keys
			continue
		case o.Refused != nil:
			r.waitForMapping(d, "the stage change cannot be recorded: "+o.Refused.Message)
			continue
		}
		d.LeadID = &o.Lead.ID
		d.Status, d.WaitingFor, d.Reason, d.Stage = models.DeliveryDone, "", "", o.Change.Stage
		if id := o.Change.ID; id != 0 {
			d.StageChangeID = &id
		}
	}
}
