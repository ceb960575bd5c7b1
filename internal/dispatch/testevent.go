package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// TestResult is Meta's answer to a test event, in plain words.
type TestResult struct {
	OK bool
	// Sent is false when the dataset could not send at all (no test
	// code, no token): a person's fix, not Meta's answer.
	Sent bool
	// DryRun says the dataset is in dry run: the event was built and
	// nothing was sent.
	DryRun  bool
	Title   string
	Message string
	// Payload is the event's JSON as it would go to Meta, in dry run.
	Payload json.RawMessage
}

// Tester sends test events for the dataset page.
type Tester struct {
	Store          *store.Store
	Sender         Sender
	Box            *seal.Box
	GraphURL       string
	DefaultVersion string
	// Platforms send the other kinds' test events (Options.Platforms).
	Platforms map[models.Kind]destination.Sender
}

// SendTest posts one Lead event with made-up, hashed contact data and the
// dataset's test event code, logs the request, and says what Meta answered.
// A dataset in dry run sends nothing: it answers with the event's JSON, the
// pre-flight check of what would go. A dataset that cannot send (no code,
// no token) is an answer too, not an error; err is for the database.
func (t Tester) SendTest(ctx context.Context, acc models.Account, ds models.Dataset, now time.Time) (TestResult, error) {
	if ds.Of() != models.KindMeta {
		return t.sendPlatformTest(ctx, acc, ds, now)
	}
	if ds.Mode == models.ModeDryRun {
		body, err := json.Marshal(testEvent(acc, ds, now))
		if err != nil {
			return TestResult{}, err
		}
		r := TestResult{OK: true, DryRun: true, Payload: body, Title: "Dry run: nothing was sent to Meta.",
			Message: "This is the test event as it would go to Meta. Switch the dataset to test mode to send it to Events Manager → Test events."}
		if ds.TestEventCode != "" {
			r.Message = "This is the test event as it would go to Meta, with the test event code " + ds.TestEventCode +
				". Switch the dataset to test mode to send it to Events Manager → Test events."
		}
		return r, nil
	}
	if ds.TestEventCode == "" {
		return TestResult{Title: "No test event code.", Message: "Copy it from Events Manager → Test events and save it here first."}, nil
	}
	target, err := targetFor(t.Box, t.GraphURL, t.DefaultVersion, ds)
	if err != nil {
		return TestResult{Title: "The dataset cannot send.", Message: err.Error()}, nil
	}
	// Always to the Test Events tool, whatever the dataset's mode.
	target.TestEventCode = ds.TestEventCode
	body, err := json.Marshal(testEvent(acc, ds, now))
	if err != nil {
		return TestResult{}, err
	}
	sendCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start := time.Now()
	resp, serr := t.Sender.Send(sendCtx, target, []json.RawMessage{body})
	req := models.SendRequest{AccountID: acc.ID, DatasetID: ds.ID, Kind: "test", StartedAt: now.UTC(),
		DurationMS: int(time.Since(start).Milliseconds()), EventsCount: 1, HTTPStatus: resp.HTTPStatus,
		EventsReceived: resp.EventsReceived, FBTraceID: resp.FBTraceID, Response: string(resp.Body)}
	r := TestResult{Sent: true}
	switch {
	case serr != nil:
		req.Error = serr.Error()
		r.Title, r.Message = "Meta could not be reached.", serr.Error()
	case resp.Err != nil:
		req.Error = resp.Err.Error()
		r.Title = firstNonEmpty(resp.Err.UserTitle, "Meta refused the test event.")
		r.Message = firstNonEmpty(resp.Err.UserMsg, resp.Err.Message) + fmt.Sprintf(" (code %d", resp.Err.Code)
		if resp.Err.Subcode != 0 {
			r.Message += fmt.Sprintf(", subcode %d", resp.Err.Subcode)
		}
		r.Message += ", fbtrace_id " + firstNonEmpty(resp.Err.FBTraceID, resp.FBTraceID) + ")"
	case resp.HTTPStatus >= 300:
		req.Error = fmt.Sprintf("HTTP %d", resp.HTTPStatus)
		r.Title, r.Message = "Meta answered with an error.", req.Error
	default:
		r.OK = true
		r.Title = fmt.Sprintf("Meta received %d event.", resp.EventsReceived)
		r.Message = "Look for it in Events Manager → Test events. fbtrace_id " + resp.FBTraceID + "."
	}
	return r, t.Store.InsertSendRequest(ctx, &req)
}

// testEvent is a Lead event whose contact data is made up and hashed: it
// proves the connection without sending anyone's data.
func testEvent(a models.Account, d models.Dataset, now time.Time) capi.ServerEvent {
	return capi.Build(testInput(a, d, now))
}

// testInput is what testEvent is built from.
func testInput(a models.Account, d models.Dataset, now time.Time) capi.BuildInput {
	keys := normalize.Normalize(normalize.Input{
		Email: "test@leadsignal.invalid", ExternalID: "leadsignal-test", CapturedAt: now, DefaultCountry: a.DefaultCountry,
	})
	id := "test-" + strconv.FormatInt(now.UnixNano(), 36)
	lead := models.Lead{AccountID: a.ID, Source: models.SourceCRM, ExternalID: &id, CreatedAt: now}
	ev := models.Event{EventName: "Lead", EventID: capi.EventID(d.PixelID, "Lead", id), EventTime: now, Origin: models.OriginTest}
	return capi.BuildInput{Account: a, Dataset: d, Lead: lead, Keys: keys, Event: ev}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// sendPlatformTest is SendTest for a destination other than Meta's: one
// Lead event (the destination's first own event name for Google, whose
// events need a conversion action), in the platform's test mode: TikTok's
// test event code, Pinterest's test=true, Google's validateOnly.
func (t Tester) sendPlatformTest(ctx context.Context, acc models.Account, ds models.Dataset, now time.Time) (TestResult, error) {
	name := platform.Name(ds.Of())
	in := testInput(acc, ds, now)
	if ds.Of() == models.KindGoogle {
		if ours := platform.FirstMapped(ds); ours != "" {
			in.Event.EventName = ours
		}
	}
	body, err := platform.Prepare(in)
	if err != nil {
		var inv *capi.Invalid
		if errors.As(err, &inv) {
			return TestResult{Title: "The test event cannot be built.", Message: inv.Error()}, nil
		}
		return TestResult{}, err
	}
	if ds.Mode == models.ModeDryRun {
		return TestResult{OK: true, DryRun: true, Payload: body, Title: "Dry run: nothing was sent to " + name + ".",
			Message: "This is the test event as it would go to " + name + ". Switch the destination to test mode to send it to " + name + "'s test mode."}, nil
	}
	if ds.Of() == models.KindTikTok && ds.TestEventCode == "" {
		return TestResult{Title: "No test event code.", Message: "Copy it from TikTok's Events Manager → Test events and save it here first."}, nil
	}
	sender := t.Platforms[ds.Of()]
	if sender == nil {
		return TestResult{Title: "The destination cannot send.", Message: "this server cannot send to " + name}, nil
	}
	target, err := DestinationTarget(t.Box, ds)
	if err != nil {
		return TestResult{Title: "The destination cannot send.", Message: err.Error()}, nil
	}
	// Always to the platform's test mode, whatever the destination's mode.
	target.Test, target.TestEventCode = true, ds.TestEventCode
	sendCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start := time.Now()
	a, serr := sender.Send(sendCtx, target, []json.RawMessage{body})
	req := models.SendRequest{AccountID: acc.ID, DatasetID: ds.ID, Kind: "test", StartedAt: now.UTC(),
		DurationMS: int(time.Since(start).Milliseconds()), EventsCount: 1, HTTPStatus: a.HTTPStatus,
		EventsReceived: a.Received, FBTraceID: a.RequestID, Response: string(a.Body)}
	r := TestResult{Sent: true}
	switch {
	case serr != nil:
		req.Error = serr.Error()
		r.Title, r.Message = name+" could not be reached.", serr.Error()
	case a.Verdict != destination.Accepted || len(a.Refused) > 0:
		req.Error = firstNonEmpty(a.Message, a.Refused[0], fmt.Sprintf("HTTP %d", a.HTTPStatus))
		r.Title, r.Message = name+" refused the test event.", req.Error
	default:
		r.OK = true
		r.Title = name + " took the test event."
		r.Message = "It was sent in " + name + "'s test mode, which records nothing."
		if ds.Of() == models.KindTikTok {
			r.Message = "Look for it in TikTok's Events Manager → Test events."
		}
		if a.RequestID != "" {
			r.Message += " Request " + a.RequestID + "."
		}
	}
	return r, t.Store.InsertSendRequest(ctx, &req)
}
