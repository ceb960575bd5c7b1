package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Options are Seed's.
type Options struct {
	// Now is when the four weeks end; zero means time.Now().
	Now time.Time
	// Progress, when set, learns how many of the four weeks' leads are
	// captured, as they are. It is called from one goroutine at a time.
	Progress func(done, total int)
	// Rand makes the live leads (Tick); nil means a random seed.
	Rand *rand.Rand
	// Decider records the stage changes; nil makes one on the store.
	Decider *decide.Decider
}

// Demo is the demo account on a store, ready to live (Run).
type Demo struct {
	Account models.Account
	Login   Login
	// Seeded: this Seed made the account and its four weeks; false when
	// the account was there already and was left as it was.
	Seeded bool
	// Leads and Changes are how many leads and stage changes Seed
	// recorded (0 when it did not seed).
	Leads, Changes int

	store *store.Store
	// keyID is the live key named KeyName the demo captures with; 0 when
	// a person revoked it.
	keyID   int64
	capture *capture.Capturer
	decider *decide.Decider
	gen     *gen
}

// workers is how many leads Seed captures at once: capture writes the
// leads posted together in one transaction, as it does the API's.
const workers = 8

// Seed makes the demo account on s, with its dataset, rules, mappings and
// four weeks of leads and stage changes (Plan), unless the account is
// there already: then it leaves it as it is. Either way the demo user
// gets a new password, returned in Login.
func Seed(ctx context.Context, s *store.Store, o Options) (*Demo, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	rng := o.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if o.Decider == nil {
		o.Decider = decide.New(s, nil, nil)
	}
	d := &Demo{store: s, capture: capture.New(s, o.Decider.Matchers, nil), decider: o.Decider, gen: newGen(rng)}
	acc, err := s.AccountBySlug(ctx, Slug)
	if errors.Is(err, store.ErrNotFound) {
		acc, err = createAccount(ctx, s)
		d.Seeded = err == nil
		if errors.Is(err, store.ErrConflict) {
			acc, err = s.AccountBySlug(ctx, Slug) // another demo made it meanwhile
		}
	}
	if err != nil {
		return nil, fmt.Errorf("demo: account: %w", err)
	}
	d.Account = acc
	if d.keyID, err = demoKey(ctx, s, acc.ID); err != nil {
		return nil, fmt.Errorf("demo: key: %w", err)
	}
	if d.Seeded {
		if err := d.seed(ctx, now, o.Progress); err != nil {
			return nil, err
		}
		if err := d.useKey(ctx, now); err != nil {
			return nil, err
		}
	}
	if d.Login, err = login(ctx, s, acc.ID); err != nil {
		return nil, fmt.Errorf("demo: user: %w", err)
	}
	return d, nil
}

// seed captures the plan's leads, then records their stage changes.
func (d *Demo) seed(ctx context.Context, now time.Time, progress func(done, total int)) error {
	plan := Plan(now)
	results, err := d.captureAll(ctx, plan, now, progress)
	if err != nil {
		return err
	}
	d.Leads = len(plan)
	var changes []decide.Change
	for i, p := range plan {
		l := results[i].Lead
		if l.Junk || l.Partial {
			continue
		}
		for _, c := range p.Changes {
			changes = append(changes, stageChange(d.Account, l.ID, c))
		}
	}
	outs, err := d.decider.RecordAll(ctx, d.Account.ID, changes)
	if err != nil {
		return fmt.Errorf("demo: stage changes: %w", err)
	}
	for i, out := range outs {
		if out.Refused != nil {
			return fmt.Errorf("demo: stage change %s of lead %s: %w", changes[i].Stage, changes[i].Keys[0].Value, out.Refused)
		}
	}
	d.Changes = len(changes)
	return nil
}

// captureAll captures the plan's leads, workers at a time, and the repeat
// contacts after all the others; results are in the plan's order.
func (d *Demo) captureAll(ctx context.Context, plan []Planned, now time.Time, progress func(done, total int)) ([]capture.Result, error) {
	results := make([]capture.Result, len(plan))
	var mu sync.Mutex
	done := 0
	report := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		if progress != nil {
			progress(done, len(plan))
		}
	}
	if progress != nil {
		progress(0, len(plan))
	}
	first := len(plan)
	for i, p := range plan {
		if p.Repeat {
			first = i
			break
		}
	}
	for _, part := range [][2]int{{0, first}, {first, len(plan)}} {
		next := make(chan int)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range next {
					res, err := d.captureOne(ctx, plan[i].Request, now)
					if err != nil {
						errs <- err
						return
					}
					results[i] = res
					report()
				}
			})
		}
		var err error
	feed:
		for i := part[0]; i < part[1]; i++ {
			select {
			case next <- i:
			case err = <-errs:
				break feed
			case <-ctx.Done():
				err = ctx.Err()
				break feed
			}
		}
		close(next)
		wg.Wait()
		if err == nil {
			select {
			case err = <-errs:
			default:
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// captureOne validates req as the ingest API does, at now, and captures
// it for the demo account.
func (d *Demo) captureOne(ctx context.Context, req capture.Request, now time.Time) (capture.Result, error) {
	v, verr := req.Validate(now)
	if verr != nil {
		return capture.Result{}, fmt.Errorf("demo: lead of %s: %w", req.CreatedAt, verr)
	}
	res, err := d.capture.Capture(ctx, d.Account, v)
	if err != nil {
		return res, fmt.Errorf("demo: capture: %w", err)
	}
	return res, nil
}

// demoKey is the id of the account's live key named KeyName, 0 when there
// is none.
func demoKey(ctx context.Context, s *store.Store, accountID int64) (int64, error) {
	keys, err := s.IngestKeys(ctx, accountID)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if k.Name == KeyName && k.RevokedAt == nil {
			return k.ID, nil
		}
	}
	return 0, nil
}

// useKey notes that the demo's key posted at now, as the ingest API notes
// a key's use (at most once a minute): the demo captures without HTTP, and
// its key's "Last used" says what a website's key would.
func (d *Demo) useKey(ctx context.Context, now time.Time) error {
	if d.keyID == 0 {
		return nil
	}
	if err := d.store.NoteIngestKeyUse(ctx, d.Account.ID, d.keyID, now); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// stageChange is change c of lead leadID, as the stage API would send it.
func stageChange(acc models.Account, leadID int64, c Change) decide.Change {
	sc := decide.Change{Keys: decide.ByID(leadID), Stage: c.Stage, OccurredAt: c.At, Value: c.Value, Via: models.ViaDemo}
	if c.Value != nil {
		sc.Currency = acc.Currency
	}
	return sc
}
