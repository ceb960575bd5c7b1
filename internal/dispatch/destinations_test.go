package dispatch_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/tiktok"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// fanout is a bench whose account also has a TikTok destination, with
// TikTok's fake.
type fanout struct {
	*bench
	tiktok   *tiktoktest.Server
	tiktokDS models.Dataset
	// editTikTok, when set, changes the i-th TikTok event before it is
	// queued.
	editTikTok func(i int, e *models.Event)
}

func newFanout(t *testing.T, s *store.Store) *fanout {
	t.Helper()
	f := &fanout{bench: newBench(t, s, models.ModeLive), tiktok: tiktoktest.New(t)}
	f.tiktokDS = models.Dataset{AccountID: f.account.ID, Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOKPIXEL",
		EventSource: "web", Mode: models.ModeLive, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &f.tiktokDS); err != nil {
		t.Fatal(err)
	}
	f.tiktokDS.TokenSealed = f.box.Seal(tiktoktest.Token, dispatch.TokenLabel(f.tiktokDS.ID))
	if err := s.SaveDataset(t.Context(), &f.tiktokDS); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fanout) dispatcher() *dispatch.Dispatcher {
	return dispatch.New(dispatch.Options{
		Store: f.store, Sender: &capi.Client{}, Box: f.box, GraphURL: f.meta.URL, DefaultVersion: capitest.Version,
		Platforms: map[models.Kind]destination.Sender{models.KindTikTok: &tiktok.Client{BaseURL: f.tiktok.URL}},
		Now:       f.clock.now, Lease: time.Minute, Log: quiet,
	})
}

// queueBoth stores n leads with a phone, each with a Lead event for Meta
// and one for TikTok, prepared as capture prepares them.
func (f *fanout) queueBoth(n int, at time.Time) (meta, tt []models.Event) {
	f.t.Helper()
	ctx := f.t.Context()
	var evs []models.Event
	for range n {
		f.leads++
		email := fmt.Sprintf("fan%d@example.com", f.leads)
		keys := normalize.Normalize(normalize.Input{Email: email, Phone: "+1 (800) 555-0100", ClientIP: "203.0.113.9", UserAgent: "Mozilla/5.0",
			CapturedAt: at, DefaultCountry: "US"})
		kj, _ := json.Marshal(keys)
		l := models.Lead{AccountID: f.account.ID, Source: models.SourceWebsite, Email: email, EmailHash: keys.Email.Hash,
			ClientIP: "203.0.113.9", ClientUserAgent: "Mozilla/5.0", EventSourceURL: "https://example.com/form",
			CreatedAt: at, ReceivedAt: at, Fields: `{"ttclid":"tt-click-1"}`, MatchKeys: string(kj), JunkReasons: "[]"}
		if err := f.store.InsertLead(ctx, &l); err != nil {
			f.t.Fatal(err)
		}
		for _, ds := range []models.Dataset{f.dataset, f.tiktokDS} {
			e := models.Event{AccountID: f.account.ID, DatasetID: ds.ID, LeadID: l.ID, Origin: models.OriginDefault,
				EventName: "Lead", EventID: capi.EventID(ds.PixelID, "Lead", capi.RecordKey(l)), EventTime: at, NextAttemptAt: f.clock.now()}
			body, err := platform.Prepare(capi.BuildInput{Account: f.account, Dataset: ds, Lead: l, Keys: keys, Event: e})
			if err != nil {
				f.t.Fatal(err)
			}
			e.Payload, e.PayloadStamp = string(body), platform.Stamp(f.account, ds)
			if ds.ID == f.tiktokDS.ID && f.editTikTok != nil {
				f.editTikTok(len(evs)/2, &e)
			}
			evs = append(evs, e)
		}
	}
	stored, _, err := f.store.EnqueueEvents(ctx, evs)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range stored {
		if e.DatasetID == f.tiktokDS.ID {
			tt = append(tt, e)
		} else {
			meta = append(meta, e)
		}
	}
	return meta, tt
}

func (f *fanout) status(ds models.Dataset) map[models.EventStatus]int {
	f.t.Helper()
	evs, err := f.store.Events(f.t.Context(), f.account.ID, store.EventFilter{DatasetID: ds.ID}, nil, 10_000)
	if err != nil {
		f.t.Fatal(err)
	}
	c := map[models.EventStatus]int{}
	for _, e := range evs {
		c[e.State()]++
	}
	return c
}

func (f *fanout) destination(ds models.Dataset) models.Dataset {
	f.t.Helper()
	got, err := f.store.DatasetByID(f.t.Context(), ds.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

// TestFanOutToTikTok: one lead's events go to Meta and to TikTok, each
// once, each with its platform's hashes and its own event id; a second
// drain sends nothing again.
func TestFanOutToTikTok(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFanout(t, s)
		meta, tt := f.queueBoth(3, f.clock.now().Add(-time.Hour))
		d := f.dispatcher()
		f.drain(d)
		f.drain(d)
		if got := f.meta.EventsReceived(); got != 3 {
			t.Errorf("Meta received %d events; want 3", got)
		}
		reqs := f.tiktok.Requests()
		if len(reqs) != 1 || len(reqs[0].Data) != 3 || reqs[0].EventSourceID != "C4TIKTOKPIXEL" || reqs[0].EventSource != "web" {
			t.Fatalf("TikTok took %+v; want one web request of 3 events to C4TIKTOKPIXEL", reqs)
		}
		ev := reqs[0].Data[0]
		user := ev["user"].(map[string]any)
		if ph := user["phone"].([]any); ph[0] != normalize.Hash("+18005550100") {
			t.Errorf("TikTok phone = %v; want the hash of +E.164", ph)
		}
		if user["ttclid"] != "tt-click-1" || ev["event"] != "Lead" {
			t.Errorf("TikTok event = %v; want Lead with its ttclid", ev)
		}
		if ids := reqs[0].EventIDs(); !slices.Contains(ids, tt[0].EventID) || tt[0].EventID == meta[0].EventID {
			t.Errorf("TikTok event ids %v; want the TikTok destination's own, not Meta's %s", ids, meta[0].EventID)
		}
		if c := f.status(f.tiktokDS); c[models.EventSent] != 3 {
			t.Errorf("TikTok events %v; want 3 sent", c)
		}
		if e := f.event(tt[0].ID); e.FBTraceID == "" {
			t.Errorf("a sent TikTok event keeps no request id")
		}
	})
}

// TestTikTokOutageHoldsOnlyTikTok: TikTok throttling or down holds the
// TikTok destination alone; Meta's events go, and TikTok's follow once
// it answers, once each.
func TestTikTokOutageHoldsOnlyTikTok(t *testing.T) {
	t.Parallel()
	for _, fail := range []tiktoktest.Failure{{Code: tiktoktest.CodeTooManyRequests}, {Status: http.StatusServiceUnavailable}} {
		t.Run(fmt.Sprintf("%+v", fail), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, s *store.Store) {
				f := newFanout(t, s)
				f.queueBoth(4, f.clock.now().Add(-time.Hour))
				f.tiktok.FailNext(1, fail)
				d := f.dispatcher()
				f.drain(d)
				if got := f.meta.EventsReceived(); got != 4 {
					t.Errorf("Meta received %d events during TikTok's outage; want 4", got)
				}
				held := f.destination(f.tiktokDS)
				if held.HeldSince == nil || !strings.Contains(held.HoldError, "TikTok") {
					t.Fatalf("TikTok destination hold = %v %q; want held, naming TikTok", held.HeldSince, held.HoldError)
				}
				if f.destination(f.dataset).HeldSince != nil {
					t.Error("Meta's dataset is held for TikTok's outage")
				}
				if c := f.status(f.tiktokDS); c[models.EventQueued] != 4 {
					t.Errorf("TikTok events %v during the outage; want 4 queued", c)
				}
				f.clock.advance(held.HoldUntil.Sub(f.clock.now()))
				f.drain(d)
				if got := f.tiktok.EventsReceived(); got != 4 {
					t.Errorf("TikTok received %d events after the outage; want 4", got)
				}
				if f.destination(f.tiktokDS).HeldSince != nil {
					t.Error("TikTok destination still held after TikTok answered")
				}
				if got := f.meta.EventsReceived(); got != 4 {
					t.Errorf("Meta received %d events in all; want 4, once each", got)
				}
			})
		})
	}
}

// TestTikTokTokenRefused: a token TikTok refuses pauses the destination,
// its events kept for the new token.
func TestTikTokTokenRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFanout(t, s)
		f.queueBoth(2, f.clock.now().Add(-time.Hour))
		f.tiktok.FailNext(1, tiktoktest.Failure{Code: tiktoktest.CodeNoPermission})
		f.drain(f.dispatcher())
		ds := f.destination(f.tiktokDS)
		if ds.PausedAt == nil || !strings.HasPrefix(ds.PausedReason, "TikTok refused the access token") {
			t.Errorf("paused %v %q; want paused: TikTok refused the access token", ds.PausedAt, ds.PausedReason)
		}
		if c := f.status(f.tiktokDS); c[models.EventQueued] != 2 {
			t.Errorf("TikTok events %v; want both queued for the new token", c)
		}
		if f.destination(f.dataset).PausedAt != nil || f.meta.EventsReceived() != 2 {
			t.Error("Meta's dataset did not send its 2 events while TikTok's was paused")
		}
	})
}

// TestTikTokRefusedEvent: an event TikTok refuses (TikTok refuses the
// whole batch for it) is failed alone, its batch split, the rest sent.
func TestTikTokRefusedEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFanout(t, s)
		f.editTikTok = func(i int, e *models.Event) {
			if i == 2 {
				// A hash TikTok refuses, as a change of TikTok's rules would.
				e.Payload = strings.Replace(e.Payload, `"email":["`, `"email":["X`, 1)
			}
		}
		_, tt := f.queueBoth(4, f.clock.now().Add(-time.Hour))
		f.drain(f.dispatcher())
		c := f.status(f.tiktokDS)
		if c[models.EventSent] != 3 || c[models.EventFailed] != 1 {
			t.Errorf("TikTok events %v; want 3 sent and the bad one failed", c)
		}
		if e := f.event(tt[2].ID); !strings.HasPrefix(e.LastError, "TikTok refused: ") || e.State() != models.EventFailed {
			t.Errorf("bad event = %s %q; want failed, TikTok refused: ...", e.State(), e.LastError)
		}
	})
}

// TestNoSenderForKind: a server without a kind's sender pauses that
// destination with the reason, and Meta's events still go.
func TestNoSenderForKind(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFanout(t, s)
		f.queueBoth(1, f.clock.now().Add(-time.Hour))
		f.drain(f.bench.dispatcher())
		if ds := f.destination(f.tiktokDS); ds.PausedAt == nil || !strings.Contains(ds.PausedReason, "cannot send to TikTok") {
			t.Errorf("paused %v %q; want paused: this server cannot send to TikTok", ds.PausedAt, ds.PausedReason)
		}
		if got := f.meta.EventsReceived(); got != 1 {
			t.Errorf("Meta received %d; want 1", got)
		}
	})
}

// TestMetricsByPlatform: what the dispatcher settles and sends is counted
// by the destination's platform.
func TestMetricsByPlatform(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newFanout(t, s)
	reg := prometheus.NewRegistry()
	d := dispatch.New(dispatch.Options{
		Store: s, Sender: &capi.Client{}, Box: f.box, GraphURL: f.meta.URL, DefaultVersion: capitest.Version,
		Platforms: map[models.Kind]destination.Sender{models.KindTikTok: &tiktok.Client{BaseURL: f.tiktok.URL}},
		Now:       f.clock.now, Log: quiet, Metrics: dispatch.NewMetrics(reg, s),
	})
	f.queueBoth(2, f.clock.now().Add(-time.Hour))
	f.drain(d)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, fam := range families {
		for _, m := range fam.GetMetric() {
			key := fam.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetValue() + "}"
			}
			switch {
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				got[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	for k, want := range map[string]float64{
		"leadsignal_events_settled_total{meta}{sent}": 2, "leadsignal_events_settled_total{tiktok}{sent}": 2,
		"leadsignal_capi_request_seconds{meta}": 1, "leadsignal_capi_request_seconds{tiktok}": 1,
		"leadsignal_capi_batch_events{tiktok}": 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v; want %v", k, got[k], want)
		}
	}
}

// TestUnsendableSettingsPause: a destination whose settings cannot make a
// request (a Google destination without its OAuth client secret) is
// paused with the reason for a person to fix, not held as if the platform
// were down.
func TestUnsendableSettingsPause(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFanout(t, s)
		g := googletest.New(t)
		gd := models.Dataset{AccountID: f.account.ID, Kind: models.KindGoogle, Name: "Google", PixelID: googletest.OperatingAccount,
			ClientID: googletest.ClientID, EventNames: `{"Lead":"` + googletest.ConversionActions[0] + `"}`, Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &gd); err != nil {
			t.Fatal(err)
		}
		gd.TokenSealed = f.box.Seal(googletest.RefreshToken, dispatch.TokenLabel(gd.ID))
		if err := s.SaveDataset(t.Context(), &gd); err != nil {
			t.Fatal(err)
		}
		f.tiktokDS = gd
		f.queueBoth(2, f.clock.now().Add(-time.Hour))
		d := dispatch.New(dispatch.Options{
			Store: s, Sender: &capi.Client{}, Box: f.box, GraphURL: f.meta.URL, DefaultVersion: capitest.Version,
			Platforms: map[models.Kind]destination.Sender{models.KindGoogle: &google.Client{BaseURL: g.URL, TokenURL: g.TokenURL}},
			Now:       f.clock.now, Lease: time.Minute, Log: quiet,
		})
		f.drain(d)
		got := f.destination(gd)
		if got.PausedAt == nil || got.HeldSince != nil || !strings.Contains(got.PausedReason, "Google Ads cannot be sent to: no OAuth client id, client secret or refresh token") {
			t.Errorf("Google destination paused %v held %v %q; want paused with the reason, not held", got.PausedAt, got.HeldSince, got.PausedReason)
		}
		if c := f.status(gd); c[models.EventQueued] != 2 || g.Exchanges() != 0 {
			t.Errorf("events %v, token exchanges %d; want both queued for the fix, no request", c, g.Exchanges())
		}
	})
}
