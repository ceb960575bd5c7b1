package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Outcome says what a capture did with the posted lead.
type Outcome string

// Outcomes of Capture.
const (
	// Created: a new lead was stored.
	Created Outcome = "created"
	// Existing: the account already had this external_id; nothing changed.
	Existing Outcome = "existing"
	// Upgraded: a partial lead was completed by this submission.
	Upgraded Outcome = "upgraded"
)

// Result is the stored lead and what happened to it.
type Result struct {
	Lead    models.Lead
	Outcome Outcome
	Reasons []junk.Reason
	// Events are the lead's events in the outbox, new or earlier.
	Events []QueuedEvent
}

// QueuedEvent is one event of the lead, for the API's reply.
type QueuedEvent struct {
	EventName string             `json:"event_name"`
	EventID   string             `json:"event_id"`
	Dataset   string             `json:"dataset"`
	Status    models.EventStatus `json:"status"`
	// Reason says why a failed or expired event is not sent, as the send
	// log does: "not sent: event_source_url: required for website events"
	// for one held back at capture. Empty for an event on its way.
	Reason string `json:"reason,omitempty"`
	// FilledIn: a stage event queued for an earlier stage the lead skipped.
	FilledIn bool `json:"filled_in,omitempty"`
}

// Capturer stores leads for accounts.
type Capturer struct {
	store  *store.Store
	notify func()
	batch  *batcher
	// matchers keeps the account's rules compiled.
	matchers *decide.Matchers
}

// New returns a Capturer writing to s, deciding leads' events with ms's
// compiled rules (a new cache when nil); notify (may be nil) is called
// after events were queued, to wake the dispatcher.
func New(s *store.Store, ms *decide.Matchers, notify func()) *Capturer {
	if notify == nil {
		notify = func() {}
	}
	if ms == nil {
		ms = &decide.Matchers{}
	}
	c := &Capturer{store: s, notify: notify, matchers: ms}
	c.batch = newBatcher(c)
	return c
}

// Capture stores a validated lead for an account. The same external_id
// again returns the stored lead untouched, unless the stored one is partial
// and this one is complete: then the lead is upgraded in place.
func (c *Capturer) Capture(ctx context.Context, acc models.Account, v Validated) (Result, error) {
	settings, err := JunkSettings(acc)
	if err != nil {
		return Result{}, err
	}
	j, err := newJob(acc, v, settings)
	if err != nil {
		return Result{}, err
	}
	return c.batch.submit(ctx, j)
}

// newJob does a capture's CPU work (normalising, hashing, phone parsing)
// in the caller's goroutine, so the one writer only talks to the database.
func newJob(acc models.Account, v Validated, settings junk.Settings) (*job, error) {
	l, keys, err := build(acc, v)
	if err != nil {
		return nil, err
	}
	return &job{acc: acc, v: v, settings: settings, lead: l, keys: keys, signals: junkInput(keys, v)}, nil
}

// existing answers a repeated post with the stored lead and its events.
func (c *Capturer) existing(ctx context.Context, l models.Lead) (Result, error) {
	var reasons []junk.Reason
	_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
	evs, err := c.store.LeadEvents(ctx, l.AccountID, l.ID)
	if err != nil {
		return Result{}, err
	}
	queued, err := describe(ctx, c.store, l.AccountID, evs)
	if err != nil {
		return Result{}, err
	}
	return Result{Lead: l, Outcome: Existing, Reasons: reasons, Events: queued}, nil
}

func describe(ctx context.Context, s *store.Store, accountID int64, evs []models.Event) ([]QueuedEvent, error) {
	if len(evs) == 0 {
		return []QueuedEvent{}, nil
	}
	datasets, err := s.Datasets(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return Describe(evs, datasets), nil
}

// Describe lists events as the ingest API's replies do, naming their
// datasets.
func Describe(evs []models.Event, datasets []models.Dataset) []QueuedEvent {
	names := map[int64]string{}
	for _, d := range datasets {
		names[d.ID] = d.Name
	}
	out := make([]QueuedEvent, 0, len(evs))
	for _, e := range evs {
		q := QueuedEvent{EventName: e.EventName, EventID: e.EventID, Dataset: names[e.DatasetID], Status: e.Status, FilledIn: e.FilledIn}
		if e.Status == models.EventFailed || e.Status == models.EventExpired {
			q.Reason = e.LastError
		}
		out = append(out, q)
	}
	return out
}

// JunkSettings reads an account's junk settings, filled with defaults.
func JunkSettings(acc models.Account) (junk.Settings, error) {
	var s junk.Settings
	if strings.TrimSpace(acc.JunkSettings) != "" {
		if err := json.Unmarshal([]byte(acc.JunkSettings), &s); err != nil {
			return nil, fmt.Errorf("capture: account %d junk settings: %w", acc.ID, err)
		}
	}
	return s.With(junk.Defaults()), nil
}

// build makes the lead row from the request: raw fields as given, match
// keys normalised and hashed.
func build(acc models.Account, v Validated) (models.Lead, normalize.Keys, error) {
	keys := normalize.Normalize(normalize.Input{
		Email: v.Email, Phone: v.Phone, FirstName: v.FirstName, LastName: v.LastName,
		City: v.City, State: v.State, Zip: v.Zip, Country: v.Country, Gender: v.Gender,
		DateOfBirth: v.DateOfBirth, ExternalID: deref(v.ExternalID),
		ClientIP: v.ClientIP, UserAgent: v.ClientUserAgent,
		FBC: v.FBC, FBP: v.FBP, FBCLID: v.FBCLID,
		CapturedAt: v.CreatedAt, DefaultCountry: acc.DefaultCountry,
	})
	keysJSON, err := json.Marshal(keys)
	if err != nil {
		return models.Lead{}, keys, err
	}
	fields, err := json.Marshal(v.Fields)
	if err != nil {
		return models.Lead{}, keys, err
	}
	return models.Lead{
		AccountID: acc.ID, ExternalID: v.ExternalID, Source: v.Source, Partial: v.Partial,
		Email: v.Email, Phone: v.Phone, PhoneE164: phoneDigits(keys), PhoneCountry: keys.PhoneRegion(),
		FirstName: v.FirstName, LastName: v.LastName, City: v.City, State: v.State, Zip: v.Zip,
		Country: v.Country, Gender: v.Gender, DateOfBirth: v.DateOfBirth, Message: v.Message,
		FBCLID: v.FBCLID, FBC: v.FBC, FBP: v.FBP, ClientIP: v.ClientIP, ClientUserAgent: v.ClientUserAgent,
		EventSourceURL: sourceURL(acc, v), FillSeconds: v.FillSeconds, Honeypot: v.Honeypot,
		MetaLeadID: v.MetaLeadID, Fields: string(fields), MatchKeys: string(keysJSON), Test: v.Test,
		EmailHash: keys.Email.Hash, PhoneHash: keys.Phone.Hash,
		// ReceivedAt is left to the store, which stamps it on its clock
		// when it writes the lead.
		CreatedAt: v.CreatedAt,
	}, keys, nil
}

// sourceURL is the page the lead was captured on: the caller's
// event_source_url, or for a website lead posted without one the account's
// Website URL, which Meta needs on every website event.
func sourceURL(acc models.Account, v Validated) string {
	if strings.TrimSpace(v.EventSourceURL) == "" && v.Source == models.SourceWebsite {
		return acc.WebsiteURL
	}
	return v.EventSourceURL
}

// MaxWebsiteURL is the longest Website URL an account may have, in
// characters.
const MaxWebsiteURL = 2000

// WebsiteURLProblem says what is wrong with s as an account's Website URL,
// in words that finish "Website URL: ...", or "" when it can be one: an
// absolute http or https URL with a host, of at most MaxWebsiteURL
// characters, or empty for none.
func WebsiteURLProblem(s string) string {
	switch {
	case s == "":
		return ""
	case utf8.RuneCountInString(s) > MaxWebsiteURL:
		return fmt.Sprintf("use at most %d characters", MaxWebsiteURL)
	case !pageURL(s):
		return "write the full address of a page of your site, starting with https://, like https://www.example.com/contact"
	}
	return ""
}

// phoneDigits is the normalised phone when it parsed, for search.
func phoneDigits(k normalize.Keys) string {
	if k.Phone.Hash == "" {
		return ""
	}
	return k.Phone.Normalized
}

// junkInput is what the junk signals look at, but for the duplicate check,
// which needs the database.
func junkInput(keys normalize.Keys, v Validated) junk.Input {
	in := junk.Input{
		FillSeconds: v.FillSeconds,
		Honeypot:    v.Honeypot,
		Email:       strings.ToLower(strings.TrimSpace(v.Email)),
		Message:     v.Message,
	}
	if keys.Phone.Hash != "" {
		// E.164 digits are the country code, then the national
		// significant number: no need to parse the number again.
		in.Phone = keys.Phone.Normalized
		if cc := strconv.Itoa(phonenumbers.GetCountryCodeForRegion(keys.PhoneCountry)); cc != "0" {
			in.PhoneNational, _ = strings.CutPrefix(in.Phone, cc)
		}
	} else {
		in.Phone = strings.TrimSpace(v.Phone)
	}
	return in
}

// verdict runs the junk signals on a lead, dup saying whether the same
// person wrote in recently, and records the reasons and the verdict in
// force (a person's override wins).
func verdict(l *models.Lead, in junk.Input, settings junk.Settings, dup bool) error {
	in.Duplicate = dup
	reasons := junk.Check(in, settings)
	if reasons == nil {
		reasons = []junk.Reason{}
	}
	b, err := json.Marshal(reasons)
	if err != nil {
		return err
	}
	l.JunkReasons = string(b)
	switch l.JunkOverride {
	case "junk":
		l.Junk = true
	case "not_junk":
		l.Junk = false
	default:
		l.Junk = len(reasons) > 0
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
