package web

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// together runs every read, at most maxReadsAtOnce at a time, returns the
// first error and cancels the rest, and turns a read's panic into an error
// with its stack rather than ending the process.
func TestTogether(t *testing.T) {
	t.Parallel()
	var running, most, done atomic.Int64
	read := func(context.Context) error {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		done.Add(1)
		return nil
	}
	reads := make([]func(context.Context) error, 10)
	for i := range reads {
		reads[i] = read
	}
	if err := together(t.Context(), reads...); err != nil || done.Load() != 10 {
		t.Fatalf("together of 10 reads = %v, %d done; want nil, 10", err, done.Load())
	}
	if most.Load() > maxReadsAtOnce || most.Load() < 2 {
		t.Errorf("%d reads ran at once; want 2 to %d", most.Load(), maxReadsAtOnce)
	}

	failed := errors.New("read failed")
	var cancelled atomic.Bool
	err := together(t.Context(),
		func(context.Context) error { return failed },
		func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				cancelled.Store(true)
			case <-time.After(10 * time.Second):
			}
			return nil
		})
	if !errors.Is(err, failed) || !cancelled.Load() {
		t.Errorf("together with a failing read = %v, others cancelled %v; want the read's error, cancelled", err, cancelled.Load())
	}

	err = together(t.Context(), func(context.Context) error {
		var m map[string]int
		m["x"] = 1 // panics: a nil map
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panic") || !strings.Contains(err.Error(), "together_internal_test.go") {
		t.Errorf("together with a panicking read = %v; want an error with the panic and its stack", err)
	}
}
