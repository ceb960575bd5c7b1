package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// sink is where the bench's batches of one destination kind go: the
// in-process fake of its platform (benchkit.FakeGraph for Meta,
// benchkit.FakePlatform for the others), the plain client that posts
// ready-made batches to it (the baseline: capi.Client for Meta, the
// platform's own sender of platform.Senders for the others), and the
// dispatcher's senders pointed at it (dispatch.Options.Sender for Meta,
// Options.Platforms for the others).
type sink struct {
	kind models.Kind
	// One of graph and fake is set.
	graph *benchkit.FakeGraph
	fake  *benchkit.FakePlatform
	url   string // where the fake is served; set by connect

	// Meta's client and target.
	tr     *http.Transport
	client *capi.Client
	meta   capi.Target
	// The other kinds' sender and target.
	sender destination.Sender
	dest   destination.Target
}

func newSink(kind models.Kind, light bool) *sink {
	if kind == models.KindMeta {
		return &sink{kind: kind, graph: &benchkit.FakeGraph{Light: light, Token: fakeToken}}
	}
	return &sink{kind: kind, fake: benchkit.NewFakePlatform(kind)}
}

// handler is the fake, to serve.
func (s *sink) handler() http.Handler {
	if s.graph != nil {
		return s.graph
	}
	return s.fake
}

// counts are the fake's counts of events taken and requests refused.
func (s *sink) counts() (received, refused *atomic.Int64) {
	if s.graph != nil {
		return &s.graph.Received, &s.graph.Refused
	}
	return &s.fake.Received, &s.fake.Refused
}

func (s *sink) reset() {
	if s.graph != nil {
		s.graph.Reset()
		return
	}
	s.fake.Reset()
}

// destination connects the bench's live destination to acc: a dataset of
// Meta, else one of the kind with its platform's settings and the fake's
// secrets, sealed.
func (s *sink) destination(ctx context.Context, st *store.Store, box *seal.Box, acc models.Account) (models.Dataset, error) {
	if s.graph != nil {
		return benchkit.LiveDataset(ctx, st, box, acc, pixelID, "v24.0", fakeToken)
	}
	return s.fake.LiveDestination(ctx, st, box, acc)
}

// connect points the clients at the fake served at url; ds is the bench's
// destination, whose secrets box opens as the dispatcher does.
func (s *sink) connect(url string, ds models.Dataset, box *seal.Box, conc int) error {
	s.url = url
	if s.graph != nil {
		s.tr = &http.Transport{
			MaxIdleConns:        conc * 2,
			MaxIdleConnsPerHost: conc * 2,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		}
		s.client = &capi.Client{HTTP: &http.Client{Transport: s.tr, Timeout: 30 * time.Second}}
		s.meta = capi.Target{BaseURL: url, Version: ds.APIVersion, PixelID: ds.PixelID, Token: fakeToken}
		return nil
	}
	s.sender = platform.Senders(s.fake.URLs(url))[s.kind]
	if s.sender == nil {
		return fmt.Errorf("platform.Senders has no sender of %s", s.kind)
	}
	t, err := dispatch.DestinationTarget(box, ds)
	s.dest = t
	return err
}

func (s *sink) close() {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}

// baseline posts the ready-made batch with conc plain clients for d (after
// a short warmup) and returns the rate.
func (s *sink) baseline(batch []json.RawMessage, conc int, d time.Duration) (baselineResult, error) {
	var r benchkit.BaselineRun
	var err error
	if s.graph != nil {
		r, err = benchkit.Baseline(s.client, s.meta, batch, conc, d)
	} else {
		r, err = benchkit.PlatformBaseline(s.sender, s.dest, batch, conc, d)
	}
	if err != nil {
		return baselineResult{}, err
	}
	return baselineResult{rate: r.Rate, requests: r.Requests, events: r.Events, seconds: r.Seconds}, nil
}

// dispatcher is a real dispatch.Dispatcher that sends to the fake through
// t, which times each request.
func (s *sink) dispatcher(st *store.Store, box *seal.Box, t *timing) *dispatch.Dispatcher {
	o := dispatch.Options{Store: st, Box: box, Log: slog.New(slog.DiscardHandler), GraphURL: s.url, DefaultVersion: "v24.0"}
	if s.graph != nil {
		o.Sender = &timedMeta{timing: t, next: s.client}
	} else {
		o.Platforms = map[models.Kind]destination.Sender{s.kind: &timedDest{timing: t, next: s.sender}}
	}
	return dispatch.New(o)
}

// timing is what one dispatcher's sender saw: each request timed.
type timing struct {
	cur      time.Duration // send time of the batch in progress
	requests int
	events   int
	failed   int
	firstErr string
}

func (t *timing) record(d time.Duration, n int, failed func() string) {
	t.cur += d
	t.requests++
	if why := failed(); why != "" {
		t.failed++
		if t.firstErr == "" {
			t.firstErr = why
		}
		return
	}
	t.events += n
}

// timedMeta times a dispatcher's Meta sender.
type timedMeta struct {
	*timing
	next dispatch.Sender
}

func (t *timedMeta) Send(ctx context.Context, tg capi.Target, evs []json.RawMessage) (capi.Response, error) {
	t0 := time.Now()
	resp, err := t.next.Send(ctx, tg, evs)
	t.record(time.Since(t0), len(evs), func() string {
		if err != nil || !resp.OK() {
			return fmt.Sprintf("HTTP %d %s %v", resp.HTTPStatus, resp.Body, err)
		}
		return ""
	})
	return resp, err
}

// timedDest times a dispatcher's sender of another platform.
type timedDest struct {
	*timing
	next destination.Sender
}

func (t *timedDest) Send(ctx context.Context, tg destination.Target, evs []json.RawMessage) (destination.Answer, error) {
	t0 := time.Now()
	a, err := t.next.Send(ctx, tg, evs)
	t.record(time.Since(t0), len(evs), func() string {
		if err != nil || a.Verdict != destination.Accepted || len(a.Refused) > 0 {
			return fmt.Sprintf("HTTP %d %s %s %v", a.HTTPStatus, a.Message, a.Body, err)
		}
		return ""
	})
	return a, err
}
