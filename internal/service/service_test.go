package service_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/service"
)

// wait fails the test when ch gives nothing within a few seconds.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
		panic("unreachable")
	}
}

// A Loop runs a round at once; wakes that come while a round runs make
// one round more, not one each; Stop waits for the round under way.
func TestLoopWakesCoalesce(t *testing.T) {
	var rounds atomic.Int32
	started := make(chan int32)
	release := make(chan struct{})
	l := service.New(service.Options{Name: "test"}, func(ctx context.Context) error {
		n := rounds.Add(1)
		started <- n
		<-release
		return nil
	})
	l.Start(t.Context())
	if n := wait(t, started, "the first round"); n != 1 {
		t.Fatalf("round %d first; want 1", n)
	}
	l.Wake()
	l.Wake()
	l.Wake()
	release <- struct{}{}
	if n := wait(t, started, "the round the wakes asked for"); n != 2 {
		t.Fatalf("round %d after the wakes; want 2", n)
	}
	close(release)
	l.Stop()
	if n := rounds.Load(); n != 2 {
		t.Errorf("%d rounds; want 2: three wakes during a round make one", n)
	}
}

// A Loop runs again when Every has passed, unwoken.
func TestLoopTicks(t *testing.T) {
	ticks := make(chan struct{}, 10)
	l := service.New(service.Options{Name: "test", Every: time.Millisecond}, func(ctx context.Context) error {
		select {
		case ticks <- struct{}{}:
		default:
		}
		return nil
	})
	l.Start(t.Context())
	defer l.Stop()
	for i := range 3 {
		wait(t, ticks, "round "+string(rune('1'+i)))
	}
}

// A round that returns ErrDone ends the Loop; a round's other errors are
// logged under the Loop's name and the Loop goes on.
func TestLoopEndsWhenDone(t *testing.T) {
	var log bytes.Buffer
	rounds := 0
	l := service.New(service.Options{Name: "backfill", Log: slog.New(slog.NewTextHandler(&log, nil))}, func(ctx context.Context) error {
		rounds++
		if rounds == 1 {
			return errors.New("database gone")
		}
		return service.ErrDone
	})
	l.Wake() // the round after the failed one, without a tick
	if err := l.Run(t.Context()); err != nil {
		t.Fatalf("Run = %v; want nil", err)
	}
	if rounds != 2 {
		t.Errorf("%d rounds; want 2", rounds)
	}
	if got := log.String(); !strings.Contains(got, "msg=backfill") || !strings.Contains(got, "database gone") {
		t.Errorf("log %q; want the error under the loop's name", got)
	}
}

// Run returns when its context ends, even while it waits for a wake, and
// a round cut short by the context's end logs nothing.
func TestLoopStopsWithItsContext(t *testing.T) {
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{}, 1)
	l := service.New(service.Options{Name: "test", Log: slog.New(slog.NewTextHandler(&log, nil))}, func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	wait(t, started, "the first round")
	cancel()
	if err := wait(t, done, "Run's return"); err != nil {
		t.Errorf("Run = %v; want nil", err)
	}
	if log.Len() != 0 {
		t.Errorf("logged %q; want nothing for a round the end cut short", log.String())
	}
	l.Stop() // never started: returns at once
}
