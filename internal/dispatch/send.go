package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// send posts a batch; when the platform refuses it for an invalid event,
// it splits the batch in halves until the bad events are alone, so the
// good ones still go. held says that the platform or the network failed,
// not an event: the dataset is then held, and the batch waits without
// spending an attempt.
func (d *Dispatcher) send(ctx context.Context, ds models.Dataset, c store.Claim, t target, batch []prepared) (held bool, err error) {
	s := d.o.Store
	name := platform.Name(ds.Of())
	payloads := make([]json.RawMessage, len(batch))
	for i, p := range batch {
		payloads[i] = p.payload
	}
	start := d.o.Now()
	a, err := d.post(ctx, ds, t, payloads)
	elapsed := d.o.Now().Sub(start)
	d.o.Metrics.request(ds.Of(), elapsed, len(batch))

	req := models.SendRequest{
		AccountID: ds.AccountID, DatasetID: ds.ID, Kind: "batch", StartedAt: start.UTC(),
		DurationMS: int(elapsed.Milliseconds()), EventsCount: len(batch), HTTPStatus: a.HTTPStatus,
		EventsReceived: a.Received, FBTraceID: a.RequestID, Response: string(a.Body),
	}
	msg := fmt.Sprintf("HTTP %d", a.HTTPStatus)
	switch {
	case err != nil:
		msg = "network: " + err.Error()
		req.Error = err.Error()
	case a.Message != "":
		msg = a.Message
		req.Error = msg
	case a.HTTPStatus >= 300:
		req.Error = msg
	}
	if ierr := s.InsertSendRequest(ctx, &req); ierr != nil {
		return false, ierr
	}
	now := d.o.Now()

	var unsendable *destination.Unsendable
	switch {
	case errors.As(err, &unsendable):
		// No request went: the destination's settings cannot make one.
		// Waiting would not help; a person must fix them.
		return false, d.pause(ctx, ds, c, batch, name+" cannot be sent to: "+unsendable.Reason)
	case err != nil, a.Verdict == destination.Unavailable:
		// The platform or the network failed, not an event: hold the
		// dataset. Throttling is the platform asking for the same.
		return true, d.hold(ctx, ds, c, batch, msg)
	case a.Verdict == destination.Accepted:
		// Each event's JSON is its payload, kept with it; the request does
		// not keep the batch again. A platform that answers per event
		// (Pinterest) may have refused some alone.
		outs := make([]store.Outcome, len(batch))
		for i, p := range batch {
			outs[i] = store.Outcome{ID: p.event.ID, Status: models.EventSent}
			if p.built {
				outs[i].Payload = string(p.payload)
			}
			if why, refused := a.Refused[i]; refused {
				outs[i] = store.Outcome{ID: p.event.ID, Status: models.EventFailed, Error: platform.RefusedBy(ds.Of()) + why, Payload: string(p.payload)}
			}
		}
		d.o.Metrics.settled(ds.Of(), outs)
		if err := s.SettleEvents(ctx, c, &req.ID, a.RequestID, now, outs); err != nil {
			return false, err
		}
		if ds.HeldSince != nil {
			return false, d.lift(ctx, ds, c)
		}
		return false, nil
	case a.Verdict == destination.AuthRefused:
		// Never retry refused credentials blindly: pause and tell a person.
		return false, d.pause(ctx, ds, c, batch, name+" refused the access token: "+a.Message)
	case a.Verdict == destination.Refused:
		// Not about one event (a wrong dataset id, no permission, a proxy's
		// 4xx): splitting would send every event alone for nothing. Pause
		// and tell a person.
		return false, d.pause(ctx, ds, c, batch, name+" refused the requests: "+msg)
	}
	// The platform answered, so it is reachable.
	if ds.HeldSince != nil {
		if err := d.lift(ctx, ds, c); err != nil {
			return false, err
		}
		ds.HeldSince = nil
	}
	// The platform refused the batch for an invalid event: one bad event
	// sinks all. Split until the bad ones are alone.
	if len(batch) > 1 {
		mid := len(batch) / 2
		held, err := d.send(ctx, ds, c, t, batch[:mid])
		if err != nil || held {
			if held {
				err = d.requeue(ctx, c, batch[mid:], name+" unreachable: "+msg)
			}
			return held, err
		}
		return d.send(ctx, ds, c, t, batch[mid:])
	}
	out := []store.Outcome{{ID: batch[0].event.ID, Status: models.EventFailed, Error: platform.RefusedBy(ds.Of()) + msg, Payload: string(batch[0].payload)}}
	d.o.Metrics.settled(ds.Of(), out)
	return false, s.SettleEvents(ctx, c, &req.ID, a.RequestID, now, out)
}

// post sends one request to the destination's platform and reads its
// answer as the dispatcher acts on it.
func (d *Dispatcher) post(ctx context.Context, ds models.Dataset, t target, payloads []json.RawMessage) (destination.Answer, error) {
	if ds.Of() != models.KindMeta {
		return d.o.Platforms[ds.Of()].Send(ctx, t.dest, payloads)
	}
	resp, err := d.o.Sender.Send(ctx, t.meta, payloads)
	return metaAnswer(resp), err
}

// metaAnswer is Meta's response as the dispatcher acts on it.
func metaAnswer(r capi.Response) destination.Answer {
	a := destination.Answer{HTTPStatus: r.HTTPStatus, Received: r.EventsReceived, RequestID: r.FBTraceID, Body: r.Body}
	if r.Err != nil {
		a.Message = r.Err.Error()
	}
	switch {
	case r.Retryable():
		a.Verdict = destination.Unavailable
	case r.HTTPStatus >= 200 && r.HTTPStatus < 300 && r.Err == nil:
		a.Verdict = destination.Accepted
	case r.Err != nil && r.Err.TokenInvalid():
		a.Verdict, a.Message = destination.AuthRefused, r.Err.Message
	case eventLevel(r):
		a.Verdict = destination.EventRefused
	default:
		a.Verdict = destination.Refused
	}
	return a
}

// hold holds a dataset that Meta or the network failed (why says how), or
// counts one more failed try of its hold (its probe's, under the probe's
// lease), and puts the batch back in its place without spending an
// attempt: an outage is the dataset's, not its events'.
func (d *Dispatcher) hold(ctx context.Context, ds models.Dataset, c store.Claim, batch []prepared, why string) error {
	reason := platform.Name(ds.Of()) + " unreachable: " + why
	var probe *store.Lease
	if ds.HeldSince != nil {
		probe = &c.Lease
	}
	held, started, err := d.o.Store.HoldDataset(ctx, ds.ID, d.o.Now(), why, probeWait, probe)
	if err != nil {
		return err
	}
	if started {
		d.o.Log.Warn("dataset held: platform unreachable", slog.Int64("dataset_id", ds.ID), slog.String("reason", reason))
	} else {
		d.o.Log.Debug("held dataset's probe failed", slog.Int64("dataset_id", ds.ID), slog.Int("tries", held.HoldTries),
			slog.Time("next_try", *held.HoldUntil), slog.String("reason", reason))
	}
	return d.requeue(ctx, c, batch, reason)
}

// lift ends a dataset's hold after Meta took its probe's request, under
// the lease of the probe's claim c.
func (d *Dispatcher) lift(ctx context.Context, ds models.Dataset, c store.Claim) error {
	since, err := d.o.Store.LiftHold(ctx, ds.ID, c.Lease)
	if err != nil || since == nil {
		return err
	}
	d.o.Log.Info("dataset hold lifted: platform reachable again", slog.Int64("dataset_id", ds.ID),
		slog.Duration("held_for", d.o.Now().Sub(*since)))
	return nil
}

// pause stops a dataset until a person acts, and puts the batch back.
func (d *Dispatcher) pause(ctx context.Context, ds models.Dataset, c store.Claim, batch []prepared, reason string) error {
	d.o.Log.Warn("dataset paused", slog.Int64("dataset_id", ds.ID), slog.String("reason", reason))
	if err := d.o.Store.PauseDataset(ctx, ds.ID, reason, d.o.Now()); err != nil {
		return err
	}
	return d.requeue(ctx, c, batch, reason)
}

// FixesPause reports whether a change from before to after to a paused
// dataset may fix what paused it, so that sending resumes: a new token or
// app secret (the platform refused the token), another dataset id or Graph
// API version, or another TikTok event source or Google OAuth client or
// manager account, or its own event names (Google's conversion actions)
// (the platform refused every request for the dataset). Other edits leave
// the pause to a person who fixes the cause.
func FixesPause(before, after models.Dataset) bool {
	return before.PausedAt != nil && (before.TokenSealed != after.TokenSealed || before.AppSecretSealed != after.AppSecretSealed ||
		before.PixelID != after.PixelID || before.APIVersion != after.APIVersion || before.EventSource != after.EventSource ||
		before.ClientID != after.ClientID || before.LoginAccount != after.LoginAccount || before.EventNames != after.EventNames)
}

// requeue puts a batch back in its place without spending an attempt, for
// a held or paused dataset: it goes out once Meta answers again, or once a
// person fixes the token.
func (d *Dispatcher) requeue(ctx context.Context, c store.Claim, batch []prepared, reason string) error {
	now := d.o.Now()
	outs := make([]store.Outcome, len(batch))
	for i, p := range batch {
		outs[i] = store.Outcome{ID: p.event.ID, Status: models.EventQueued, Error: reason, NextAttemptAt: now, Untried: true}
	}
	return d.o.Store.SettleEvents(ctx, c, nil, "", now, outs)
}

// eventLevel reports whether Meta refused a batch because of an event in
// it (invalid parameter, 100/2804xxx), the case that splitting resolves.
func eventLevel(r capi.Response) bool {
	return r.Err != nil && r.Err.Code == 100 && r.Err.Subcode >= 2804000 && r.Err.Subcode < 2805000
}

// probeWait is how long a held dataset waits after its tries-th failed
// try: 1 s doubling each time, with ±20% jitter so that datasets held by
// one outage do not probe in step, at most 5 minutes.
func probeWait(tries int) time.Duration {
	d := firstProbe << min(max(tries-1, 0), 16)
	jitter := 0.8 + 0.4*rand.Float64()
	return min(time.Duration(float64(d)*jitter), maxProbe)
}
