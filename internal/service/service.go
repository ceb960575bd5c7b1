package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Round is one round of a Loop's work. It returns ErrDone when the work
// is over for good; any other error is logged, and the Loop goes on.
type Round func(ctx context.Context) error

// ErrDone ends a Loop: its round returns it when nothing is left to do,
// ever (a backfill that has reached the last lead).
var ErrDone = errors.New("service: done")

// Options configure a Loop.
type Options struct {
	// Name says which loop a logged error comes from ("dispatch").
	Name string
	// Every is how long the Loop waits after a round for the next one,
	// unless it is woken first; zero waits for Wake only.
	Every time.Duration
	// Pace makes that wait at least as long as the round took, so the
	// work takes at most half the time: the backfill leaves SQLite's one
	// writer free between its batches.
	Pace bool
	// Log takes the rounds' errors; slog.Default when nil.
	Log *slog.Logger
}

// Loop runs rounds of one piece of background work.
type Loop struct {
	o     Options
	round Round
	wake  chan struct{}

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// New returns a Loop of round; Run or Start runs it.
func New(o Options, round Round) *Loop {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Loop{o: o, round: round, wake: make(chan struct{}, 1)}
}

// Wake makes the Loop run a round as soon as the one under way, if any,
// ends. Wakes that come before that round starts make one round, not one
// each: Wake never blocks, and a burst of them costs one round.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run runs rounds until ctx ends or a round returns ErrDone, and returns
// nil: a round at once, then one whenever the Loop is woken or Every has
// passed since the last ended. A round under way when ctx ends is the
// round's to finish or cut short; its error is not logged then.
func (l *Loop) Run(ctx context.Context) error {
	for {
		start := time.Now()
		err := l.round(ctx)
		switch {
		case errors.Is(err, ErrDone):
			return nil
		case err != nil && ctx.Err() == nil:
			l.o.Log.Error(l.o.Name, slog.Any("error", err))
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := l.o.Every
		if l.o.Pace {
			wait = max(wait, time.Since(start))
		}
		if !l.sleep(ctx, wait) {
			return nil
		}
	}
}

// sleep waits until the Loop is woken or wait has passed (wait 0: until
// woken), and reports false when ctx ended first.
func (l *Loop) sleep(ctx context.Context, wait time.Duration) bool {
	var tick <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-tick:
	case <-l.wake:
	}
	return true
}

// Start runs the Loop in a goroutine until ctx ends, Stop is called or a
// round returns ErrDone. A Loop started already is left as it is.
func (l *Loop) Start(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return
	}
	ctx, l.stop = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		_ = l.Run(ctx)
	}(l.done)
}

// Stop ends a started Loop and waits for its round under way, if any, to
// return; Start may then start it again. A Loop not started returns at
// once.
func (l *Loop) Stop() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
	l.mu.Lock()
	if l.done == done {
		l.stop, l.done = nil, nil
	}
	l.mu.Unlock()
}
