package store

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Leases. Work that one process takes from a table shared by replicas
// (events to send, CRM deliveries, a stage upload's pass, a held dataset's
// probe) is claimed with one design: the claim sets, on every row it takes,
// a lease_token, random per claim, and lease_until, when the lease runs
// out. Another claim takes a row only when its lease is free (leaseFreeSQL):
// none, or one that ran out. Every write the holder then makes to those
// rows is fenced by its token ("... WHERE lease_token = ?"): a holder too
// slow for its lease, whose rows another claim has taken over, changes
// nothing, and learns it from ErrLeaseLost. Times cannot fence: two
// replicas' clocks may give two claims the same expiry.

// ErrLeaseLost is the error of a write made under a lease that another
// claim has taken over, once the lease ran out: the write changed nothing
// (or, for a batch, nothing of the rows taken over), and the rows are the
// other holder's to finish.
var ErrLeaseLost = errors.New("store: lease lost")

// Lease is a claim's hold on the rows it took.
type Lease struct {
	// Token is the claim's own, on each of its rows.
	Token int64
	// Until is when the lease runs out, and another claim may take the
	// rows.
	Until time.Time
}

// newLease is a lease from now for d with a new token. Until is in
// microseconds, as Postgres keeps times, so that it reads back equal.
func newLease(now time.Time, d time.Duration) Lease {
	return Lease{Token: rand.Int64(), Until: now.Add(d).UTC().Truncate(time.Microsecond)}
}

// leaseFreeSQL is "the row's lease is free at now" in SQL, the one test of
// it: no lease, or one that ran out. row prefixes the lease columns ("" or
// "q."); now is the placeholder of the time ("?" or "@now").
func leaseFreeSQL(row, now string) string {
	return "(" + row + "lease_until IS NULL OR " + row + "lease_until <= " + now + ")"
}
