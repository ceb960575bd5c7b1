package store_test

import (
	"net/url"
	"slices"
	"sync"
	"testing"
)

// autoExplained is dbURL with auto_explain on each of its connections:
// every statement they run, nested ones (triggers, foreign-key checks)
// included, reports its plan as a notice.
func autoExplained(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0"+
		" -c auto_explain.log_nested_statements=on -c auto_explain.log_level=notice")
	u.RawQuery = q.Encode()
	return u.String()
}

// planNotices collects the plans connections of an autoExplained URL
// report, from whichever goroutine receives them.
type planNotices struct {
	mu    sync.Mutex
	plans []string
}

func (n *planNotices) add(plan string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.plans = append(n.plans, plan)
}

// take returns the plans reported since the last take.
func (n *planNotices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	plans := n.plans
	n.plans = nil
	return plans
}

// peek returns the plans reported since the last take, and keeps them.
func (n *planNotices) peek() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.plans)
}
