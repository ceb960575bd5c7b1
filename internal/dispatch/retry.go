package dispatch

import (
	"context"
	"github.com/leadsignal/leadsignal/internal/decide"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Retried is what Retry did: how many failed events it queued again, and
// the ones it left, grouped by why they would fail again.
type Retried struct {
	Queued int64
	Left   []Left
}

// LeftCount is how many failed events Retry left.
func (r Retried) LeftCount() int64 {
	var n int64
	for _, l := range r.Left {
		n += l.Count
	}
	return n
}

// Why a retry leaves a failed event.
const (
	// LeftRefused: Meta refuses the event as it would be sent. Either Meta
	// refused it as an invalid event (100/2804xxx, which Meta's
	// documentation says never to retry as it is) and it would be built
	// again to the very JSON Meta refused, or built again now it is one
	// Meta would refuse (capi.Validate: a WhatsApp lead's Lead event, say).
	LeftRefused = "refused"
	// LeftTooOld: the event is older than Meta takes (7 days); a send
	// would expire it.
	LeftTooOld = "too old"
	// LeftHeld: built again now, it would be held back again: its lead is
	// junk, no longer matches its rule, or is gone.
	LeftHeld = "held"
)

// Left is the failed events that Retry left for one kind of reason.
type Left struct {
	// Kind is LeftRefused, LeftTooOld or LeftHeld.
	Kind  string
	Count int64
	// Details are the reasons in words, each once, in the order met:
	// Meta's error, or why it would be held back.
	Details []string
}

// metaRefused starts the last error of an event Meta refused (send), and
// notSent the reason of an event held back (decide.NotSent).
const (
	metaRefused = models.ReasonMetaRefused
	notSent     = models.ReasonNotSent
)

// retryPage is how many failed events Retry decides on at a time.
const retryPage = 500

// Retry queues again the failed events of an account, those of ids or all
// of them when ids is empty, that may succeed now, and leaves the others
// failed: it asks of each what the dispatcher would ask when it came to
// send it. An event older than Meta takes would expire; one that its lead,
// its rule or its dataset's settings still hold back would be held back
// again (build); one Meta refused as invalid would be refused again while
// it builds to the same JSON. The others may succeed: a transient failure
// never fails an event (the dataset is held and its events wait queued), so
// what is left to retry is an event whose lead or settings changed since.
// ms are the compiled rules the dispatcher shares.
func Retry(ctx context.Context, s *store.Store, ms *decide.Matchers, accountID int64, ids []int64, now time.Time) (Retried, error) {
	var out Retried
	rc, err := newRetryCheck(ctx, s, ms, accountID)
	if err != nil {
		return out, err
	}
	left := map[string]int{} // kind: index in out.Left
	leave := func(kind, detail string) {
		i, ok := left[kind]
		if !ok {
			i = len(out.Left)
			left[kind] = i
			out.Left = append(out.Left, Left{Kind: kind})
		}
		l := &out.Left[i]
		l.Count++
		if detail != "" && !slices.Contains(l.Details, detail) {
			l.Details = append(l.Details, detail)
		}
	}
	failed, err := s.FailedEventIDs(ctx, accountID, ids, now)
	if err != nil {
		return out, err
	}
	for page := range slices.Chunk(failed, retryPage) {
		evs, err := s.FailedEvents(ctx, accountID, page, now)
		if err != nil {
			return out, err
		}
		leadIDs := make([]int64, len(evs))
		for i, e := range evs {
			leadIDs[i] = e.LeadID
		}
		leads, err := s.PayloadLeads(ctx, accountID, leadIDs)
		if err != nil {
			return out, err
		}
		var retry []int64
		for _, e := range evs {
			kind, detail, err := rc.wouldFail(e, leads, now)
			if err != nil {
				return out, err
			}
			if kind != "" {
				leave(kind, detail)
				continue
			}
			retry = append(retry, e.ID)
		}
		if len(retry) > 0 {
			n, err := s.RetryEvents(ctx, accountID, retry, now)
			if err != nil {
				return out, err
			}
			out.Queued += n
		}
	}
	return out, nil
}

// Retryable says whether Retry would queue failed event e of an account
// again now: "" when it may succeed, else why not (a Left kind) and its
// detail. The event page offers Retry only when it may.
func Retryable(ctx context.Context, s *store.Store, ms *decide.Matchers, accountID int64, e models.Event, now time.Time) (kind, detail string, err error) {
	if e.Status != models.EventFailed {
		return LeftHeld, "", nil
	}
	rc, err := newRetryCheck(ctx, s, ms, accountID)
	if err != nil {
		return "", "", err
	}
	leads, err := s.PayloadLeads(ctx, accountID, []int64{e.LeadID})
	if err != nil {
		return "", "", err
	}
	return rc.wouldFail(e, leads, now)
}

// retryScan is how many of an account's newest failed events AnyRetryable
// asks about: a page view's worth of builds.
const retryScan = 100

// AnyRetryable says whether Retry of all an account's failed events would
// queue one again now, asking about the newest retryScan of them: the send
// log offers "Retry" only then. A fix of the lead or the settings usually
// touches the newest failures too.
func AnyRetryable(ctx context.Context, s *store.Store, ms *decide.Matchers, accountID int64, now time.Time) (bool, error) {
	ids, err := s.NewestFailedEventIDs(ctx, accountID, retryScan)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	rc, err := newRetryCheck(ctx, s, ms, accountID)
	if err != nil {
		return false, err
	}
	evs, err := s.FailedEvents(ctx, accountID, ids, now)
	if err != nil {
		return false, err
	}
	leadIDs := make([]int64, len(evs))
	for i, e := range evs {
		leadIDs[i] = e.LeadID
	}
	leads, err := s.PayloadLeads(ctx, accountID, leadIDs)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		kind, _, err := rc.wouldFail(e, leads, now)
		if err != nil || kind == "" {
			return kind == "" && err == nil, err
		}
	}
	return false, nil
}

// retryCheck is what deciding whether failed events may succeed reads of
// their account once.
type retryCheck struct {
	acc      models.Account
	datasets []models.Dataset
	rules    []models.SendRule
	d        Dispatcher
}

func newRetryCheck(ctx context.Context, s *store.Store, ms *decide.Matchers, accountID int64) (retryCheck, error) {
	var rc retryCheck
	var err error
	if rc.acc, err = s.Account(ctx, accountID); err != nil {
		return rc, err
	}
	if rc.datasets, err = s.Datasets(ctx, accountID); err != nil {
		return rc, err
	}
	if rc.rules, err = s.SendRules(ctx, accountID); err != nil {
		return rc, err
	}
	// A Dispatcher of these rules builds as any does: build reads only its
	// cache of compiled rules.
	rc.d = Dispatcher{o: Options{Matchers: ms}}
	return rc, nil
}

// wouldFail says why failed event e would fail again if it were queued now
// (a Left kind and its detail), or "" when it may succeed.
func (rc *retryCheck) wouldFail(e models.Event, leads map[int64]models.Lead, now time.Time) (kind, detail string, err error) {
	if now.Sub(e.EventTime) > MaxAge-expiryMargin {
		return LeftTooOld, "", nil
	}
	i := slices.IndexFunc(rc.datasets, func(ds models.Dataset) bool { return ds.ID == e.DatasetID })
	if i < 0 {
		return LeftHeld, "its dataset no longer exists", nil
	}
	ds := rc.datasets[i]
	body, held, err := rc.d.build(rc.acc, ds, e, leads, rc.rules)
	switch {
	case err != nil:
		return "", "", err
	case held != nil && held.Payload != "":
		// build keeps the JSON of a held event only when Meta would
		// refuse it (capi.Invalid).
		return LeftRefused, strings.TrimPrefix(held.Error, notSent), nil
	case held != nil:
		return LeftHeld, strings.TrimPrefix(held.Error, notSent), nil
	case e.RequestID != nil && e.Payload != "" && string(body) == e.Payload:
		// Meta refused this very JSON: the last request that carried the
		// event without sending it is the one Meta refused it in.
		return LeftRefused, platform.TrimRefused(e.LastError), nil
	}
	return "", "", nil
}
