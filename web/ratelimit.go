package web

import (
	"sync"
	"time"
)

// Login attempts allowed per IP and per email in one window.
const (
	loginLimit  = 10
	loginWindow = time.Minute
)

// limiter counts failures per key in a sliding window. It lives in the
// process: behind several replicas each counts its own share, which still
// bounds guessing to replicas × limit a minute.
type limiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	now    func() time.Time
	hits   map[string][]time.Time
}

func newLimiter(limit int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{limit: limit, window: window, now: now, hits: map[string][]time.Time{}}
}

// wait returns how long the key must wait before trying again; zero when
// it may try now.
func (l *limiter) wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	hs := l.prune(key)
	if len(hs) < l.limit {
		return 0
	}
	return hs[0].Add(l.window).Sub(l.now())
}

// fail records one failure for the key.
func (l *limiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits[key] = append(l.prune(key), l.now())
	if len(l.hits) > 10000 {
		for k := range l.hits {
			l.prune(k)
		}
	}
}

// reset forgets the key's failures, after a successful login.
func (l *limiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.hits, key)
}

// prune drops the key's failures older than the window; l.mu is held.
func (l *limiter) prune(key string) []time.Time {
	hs := l.hits[key]
	cut := l.now().Add(-l.window)
	i := 0
	for i < len(hs) && !hs[i].After(cut) {
		i++
	}
	hs = hs[i:]
	if len(hs) == 0 {
		delete(l.hits, key)
		return nil
	}
	l.hits[key] = hs
	return hs
}
