package web

import (
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// hookFailLimit is how many deliveries to one connection may fail
// authentication in a minute; past it the hook answers 429 without
// checking (docs/crm.md, "Limits").
const hookFailLimit = 20

// refusals counts the deliveries refused per connection and logs them at
// most once a minute each: a CRM with a wrong secret retries for a day, and
// an attacker may post at will, so neither may flood the log. It throttles
// a connection whose deliveries fail authentication more than
// hookFailLimit times a minute, and keeps an hour of failed sign-ins for
// the connection's page. All of it lives in the process: behind several
// replicas each counts its own share, which still bounds guessing to
// replicas × hookFailLimit a minute, and a page shows the replica's count.
type refusals struct {
	mu    sync.Mutex
	last  map[int64]refusalCount
	hours map[int64]*signInHour
	now   func() time.Time
	// fails is the sliding window of the failed authentications, by
	// connection id.
	fails *limiter
}

func newRefusals(now func() time.Time) *refusals {
	return &refusals{now: now, last: map[int64]refusalCount{}, hours: map[int64]*signInHour{},
		fails: newLimiter(hookFailLimit, time.Minute, now)}
}

type refusalCount struct {
	at time.Time
	n  int
}

// signInHour counts a connection's failed and throttled deliveries in
// minutes, the last 60 of them.
type signInHour struct {
	minutes [60]signInMinute
	last    time.Time
}

type signInMinute struct {
	minute            int64
	failed, throttled int
}

// refusalLogEvery is how often one connection's refusals are logged.
const refusalLogEvery = time.Minute

func (r *refusals) note(log *slog.Logger, conn models.CRMConnection, reason string) {
	r.mu.Lock()
	now := r.now()
	rc := r.last[conn.ID]
	rc.n++
	if !rc.at.IsZero() && now.Sub(rc.at) < refusalLogEvery {
		r.last[conn.ID] = rc
		r.mu.Unlock()
		return
	}
	n := rc.n
	r.last[conn.ID] = refusalCount{at: now}
	r.mu.Unlock()
	log.Warn("crm delivery refused", slog.Int64("account_id", conn.AccountID), slog.Int64("connection_id", conn.ID),
		slog.String("kind", conn.Kind), slog.String("reason", reason), slog.Int("refused", n))
}

// throttle is how long the connection's deliveries are refused unchecked
// because too many failed authentication in the last minute; 0 when they
// are checked. A refusal is counted for the page.
func (r *refusals) throttle(conn models.CRMConnection) time.Duration {
	wait := r.fails.wait(strconv.FormatInt(conn.ID, 10))
	if wait > 0 {
		r.count(conn.ID, func(m *signInMinute) { m.throttled++ })
	}
	return wait
}

// failed counts a delivery to conn that failed authentication.
func (r *refusals) failed(conn models.CRMConnection) {
	r.fails.fail(strconv.FormatInt(conn.ID, 10))
	r.count(conn.ID, func(m *signInMinute) { m.failed++ })
}

func (r *refusals) count(id int64, add func(*signInMinute)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	h := r.hours[id]
	if h == nil {
		h = &signInHour{}
		r.hours[id] = h
	}
	minute := now.Unix() / 60
	m := &h.minutes[minute%60]
	if m.minute != minute {
		*m = signInMinute{minute: minute}
	}
	add(m)
	h.last = now
}

// signIns are a connection's deliveries refused in the last hour: Failed
// authentication, Throttled unchecked past hookFailLimit a minute, Last
// when the latest of them came.
type signIns struct {
	Failed, Throttled int
	Last              time.Time
}

// lastHour is what the connection's deliveries failed in the last hour,
// as this process saw them.
func (r *refusals) lastHour(id int64) signIns {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hours[id]
	if h == nil {
		return signIns{}
	}
	now := r.now().Unix() / 60
	var s signIns
	for _, m := range h.minutes {
		if m.minute > now-60 && m.minute <= now {
			s.Failed += m.failed
			s.Throttled += m.throttled
		}
	}
	if s.Failed+s.Throttled > 0 {
		s.Last = h.last
	}
	return s
}
