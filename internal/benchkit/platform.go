package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/pinterest"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/tiktok"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// FakePlatform is a fast stand-in for the API of a platform other than
// Meta, for the load drivers, in the manner of FakeGraph's Light mode: it
// checks the credentials as the platform does, reads the body, counts the
// events of the batch (TikTok's and Pinterest's data, Google's events)
// and answers the platform's success body. The per-event checks are the
// test fakes' (internal/tiktok/tiktoktest and the others), not this one's.
//
//   - TikTok: POST /open_api/v1.3/event/track/ with the Access-Token
//     header; event_source_id must be AccountID. {"code":0,"message":"OK",...}.
//   - Pinterest: POST /v5/ad_accounts/{AccountID}/events with
//     "Authorization: Bearer Token". {"num_events_received":N,
//     "num_events_processed":N,"events":[{"status":"processed",...}...]}.
//   - Google: POST /token exchanges the refresh token Token of ClientID
//     and ClientSecret for an access token; POST /v1/events:ingest takes
//     "Authorization: Bearer <access token>" and destinations of
//     AccountID. {"requestId":...}.
//
// Refusals are the platform's shapes (TikTok's non-zero code with HTTP
// 200, Pinterest's and Google's 4xx bodies), which its client reads as a
// refusal. NewFakePlatform gives one with the bench's credentials.
type FakePlatform struct {
	Kind models.Kind
	// Token is TikTok's access token, Pinterest's conversion token,
	// Google's OAuth refresh token.
	Token string
	// AccountID is TikTok's pixel code, Pinterest's ad account, Google's
	// operating account.
	AccountID string
	// ClientID and ClientSecret are Google's OAuth client;
	// ConversionAction the conversion action Google destinations name.
	ClientID, ClientSecret, ConversionAction string

	// Requests counts the batch requests, Exchanges the token requests.
	Requests  atomic.Int64
	Exchanges atomic.Int64
	// Received counts the events of the batches it took, Refused the
	// requests it refused.
	Received atomic.Int64
	Refused  atomic.Int64

	access sync.Map // Google's access tokens given
}

// NewFakePlatform is a fake of kind's API with the bench's credentials.
func NewFakePlatform(kind models.Kind) *FakePlatform {
	f := &FakePlatform{Kind: kind}
	switch kind {
	case models.KindTikTok:
		f.Token, f.AccountID = "bench-tiktok-access-token", "CBENCHTIKTOKPIXEL0001"
	case models.KindPinterest:
		f.Token, f.AccountID = "pina_bench-conversion-token", "549755885175"
	case models.KindGoogle:
		f.Token, f.AccountID = "1//bench-refresh-token", "1234567890"
		f.ClientID, f.ClientSecret = "bench.apps.googleusercontent.com", "GOCSPX-bench-secret"
		f.ConversionAction = "111111111"
	}
	return f
}

// Reset sets the counts to zero.
func (f *FakePlatform) Reset() {
	f.Requests.Store(0)
	f.Exchanges.Store(0)
	f.Received.Store(0)
	f.Refused.Store(0)
}

// URLs are the platform URLs (platform.Senders) that send to f at base,
// the URL it is served at.
func (f *FakePlatform) URLs(base string) platform.URLs {
	return platform.URLs{TikTok: base, Pinterest: base, Google: base, GoogleToken: base + "/token"}
}

// LiveDestination connects a live destination of f's kind to acc, with
// the settings its platform needs and the secrets f takes, sealed with box
// as the destinations page seals them.
func (f *FakePlatform) LiveDestination(ctx context.Context, st *store.Store, box *seal.Box, acc models.Account) (models.Dataset, error) {
	if !platform.ValidID(f.Kind, f.AccountID) {
		return models.Dataset{}, fmt.Errorf("%q is not %s", f.AccountID, platform.IDWant(f.Kind))
	}
	ds := models.Dataset{AccountID: acc.ID, Kind: f.Kind, Name: "Bench " + platform.Name(f.Kind), PixelID: f.AccountID,
		Mode: models.ModeLive, LDU: models.LDUOff, TokenLast4: f.Token[len(f.Token)-4:]}
	switch f.Kind {
	case models.KindTikTok:
		ds.EventSource = "web"
	case models.KindGoogle:
		names, err := platform.EventNamesJSON(f.Kind, map[string]string{"Lead": f.ConversionAction})
		if err != nil {
			return ds, err
		}
		ds.EventNames, ds.ClientID, ds.Consent = names, f.ClientID, models.ConsentGranted
	}
	if err := st.CreateDataset(ctx, &ds); err != nil {
		return ds, err
	}
	ds.TokenSealed = box.Seal(f.Token, dispatch.TokenLabel(ds.ID))
	if f.ClientSecret != "" {
		ds.AppSecretSealed = box.Seal(f.ClientSecret, dispatch.AppSecretLabel(ds.ID))
	}
	return ds, st.SaveDataset(ctx, &ds)
}

func (f *FakePlatform) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.Kind == models.KindGoogle && r.URL.Path == "/token" {
		f.serveToken(w, r)
		return
	}
	id := "bench-" + strconv.FormatInt(f.Requests.Add(1), 10)
	switch f.Kind {
	case models.KindTikTok:
		f.serveTikTok(w, r, id)
	case models.KindPinterest:
		f.servePinterest(w, r, id)
	case models.KindGoogle:
		f.serveGoogle(w, r, id)
	default:
		f.Refused.Add(1)
		http.NotFound(w, r)
	}
}

// readJSON reads a request body into v: "" when it could, else why not.
// v names the batch's array as []json.RawMessage, so that its events are
// counted, not decoded, as FakeGraph's Light mode does.
func readJSON(r *http.Request, v any) string {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return "the request body could not be read"
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return "invalid request body: " + err.Error()
	}
	return ""
}

func (f *FakePlatform) writeJSON(w http.ResponseWriter, status int, body []byte) {
	if status/100 != 2 {
		f.Refused.Add(1)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func jsonOf(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// serveTikTok answers as TikTok's Events API 2.0: HTTP 200 always, the
// code in the body.
func (f *FakePlatform) serveTikTok(w http.ResponseWriter, r *http.Request, id string) {
	answer := func(code int, msg string) {
		if code != tiktok.CodeOK {
			f.Refused.Add(1)
		}
		f.writeJSON(w, http.StatusOK, jsonOf(map[string]any{"code": code, "message": msg, "request_id": id, "data": map[string]any{}}))
	}
	if r.Method != http.MethodPost || r.URL.Path != tiktok.Path {
		f.writeJSON(w, http.StatusNotFound, []byte(`{"code":40404,"message":"not found"}`))
		return
	}
	if r.Header.Get("Access-Token") != f.Token {
		answer(tiktok.CodeNoPermission, "No permission to operate pixel code: the Access-Token header is missing or not this pixel's")
		return
	}
	var head struct {
		EventSource   string            `json:"event_source"`
		EventSourceID string            `json:"event_source_id"`
		Data          []json.RawMessage `json:"data"`
	}
	msg := readJSON(r, &head)
	evs := head.Data
	switch {
	case msg != "":
		answer(tiktok.CodeInvalidParameter, msg)
	case head.EventSourceID != f.AccountID:
		answer(tiktok.CodeNoPermission, "No permission to operate pixel code "+head.EventSourceID)
	case head.EventSource != "web" && head.EventSource != "crm" && head.EventSource != "offline":
		answer(tiktok.CodeInvalidParameter, "event_source: "+head.EventSource)
	case len(evs) == 0 || len(evs) > tiktok.MaxBatch:
		answer(tiktok.CodeInvalidParameter, fmt.Sprintf("data: Length must be between 1 and %d.", tiktok.MaxBatch))
	default:
		f.Received.Add(int64(len(evs)))
		answer(tiktok.CodeOK, "OK")
	}
}

// processed is one event of Pinterest's answer.
const processed = `{"status":"processed","error_message":"","warning_message":""}`

// servePinterest answers as Pinterest's Conversions API.
func (f *FakePlatform) servePinterest(w http.ResponseWriter, r *http.Request, id string) {
	w.Header().Set("X-Pinterest-Rid", id)
	refuse := func(status, code int, msg string) {
		f.writeJSON(w, status, jsonOf(map[string]any{"code": code, "message": msg}))
	}
	account, ok := strings.CutPrefix(r.URL.Path, "/v5/ad_accounts/")
	account, ok2 := strings.CutSuffix(account, "/events")
	switch {
	case r.Method != http.MethodPost || !ok || !ok2:
		refuse(http.StatusNotFound, 404, "Not found: "+r.URL.Path)
		return
	case r.Header.Get("Authorization") != "Bearer "+f.Token:
		refuse(http.StatusUnauthorized, 2, "Authentication failed.")
		return
	case account != f.AccountID:
		refuse(http.StatusForbidden, 29, "You are not permitted to access that resource.")
		return
	}
	var body struct {
		Data []json.RawMessage `json:"data"`
	}
	msg := readJSON(r, &body)
	evs := body.Data
	switch {
	case msg != "":
		refuse(http.StatusBadRequest, 4196, msg)
		return
	case len(evs) == 0 || len(evs) > pinterest.MaxBatch:
		refuse(http.StatusBadRequest, 4196, fmt.Sprintf("data must hold 1 to %d events, not %d.", pinterest.MaxBatch, len(evs)))
		return
	}
	n := len(evs)
	var b bytes.Buffer
	b.Grow(80 + n*(len(processed)+1))
	fmt.Fprintf(&b, `{"num_events_received":%d,"num_events_processed":%d,"events":[`, n, n)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(processed)
	}
	b.WriteString("]}")
	f.Received.Add(int64(n))
	f.writeJSON(w, http.StatusOK, b.Bytes())
}

// serveToken answers as Google's OAuth token endpoint to a refresh token
// grant.
func (f *FakePlatform) serveToken(w http.ResponseWriter, r *http.Request) {
	n := f.Exchanges.Add(1)
	oauthErr := func(status int, code, description string) {
		f.writeJSON(w, status, jsonOf(map[string]string{"error": code, "error_description": description}))
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	switch {
	case r.Method != http.MethodPost:
		oauthErr(http.StatusMethodNotAllowed, "invalid_request", "POST only")
	case r.ParseForm() != nil:
		oauthErr(http.StatusBadRequest, "invalid_request", "the body is not a form")
	case r.PostForm.Get("grant_type") != "refresh_token":
		oauthErr(http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
	case r.PostForm.Get("client_id") != f.ClientID || r.PostForm.Get("client_secret") != f.ClientSecret:
		oauthErr(http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
	case r.PostForm.Get("refresh_token") != f.Token:
		oauthErr(http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
	default:
		tok := "ya29.bench-access-" + strconv.FormatInt(n, 10)
		f.access.Store(tok, true)
		f.writeJSON(w, http.StatusOK, jsonOf(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"}))
	}
}

// serveGoogle answers as the Data Manager API's events:ingest.
func (f *FakePlatform) serveGoogle(w http.ResponseWriter, r *http.Request, id string) {
	refuse := func(status int, reason, msg string) {
		f.writeJSON(w, status, jsonOf(map[string]any{"error": map[string]any{"code": status, "message": msg,
			"status": http.StatusText(status), "details": []any{map[string]any{
				"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "datamanager.googleapis.com"}}}}))
	}
	tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	_, valid := f.access.Load(tok)
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/events:ingest":
		refuse(http.StatusNotFound, "NOT_FOUND", "Not found: "+r.URL.Path)
		return
	case !bearer || !valid:
		refuse(http.StatusUnauthorized, "ACCESS_TOKEN_EXPIRED", "Request had invalid authentication credentials. Expected OAuth 2 access token.")
		return
	}
	var head struct {
		Destinations []struct {
			OperatingAccount struct {
				AccountID string `json:"accountId"`
			} `json:"operatingAccount"`
			ProductDestinationID string `json:"productDestinationId"`
		} `json:"destinations"`
		Events []json.RawMessage `json:"events"`
	}
	msg := readJSON(r, &head)
	evs := head.Events
	switch {
	case msg != "":
		refuse(http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	case len(head.Destinations) == 0 || len(head.Destinations) > google.MaxDestinations:
		refuse(http.StatusBadRequest, "TOO_MANY_DESTINATIONS", "destinations: 1 to 10")
		return
	case len(evs) == 0 || len(evs) > google.MaxBatch:
		refuse(http.StatusBadRequest, "TOO_MANY_EVENTS", fmt.Sprintf("events: 1 to %d", google.MaxBatch))
		return
	}
	for _, d := range head.Destinations {
		if d.OperatingAccount.AccountID != f.AccountID || d.ProductDestinationID != f.ConversionAction {
			refuse(http.StatusForbidden, "PERMISSION_DENIED", "The caller does not have permission on the destination.")
			return
		}
	}
	f.Received.Add(int64(len(evs)))
	f.writeJSON(w, http.StatusOK, jsonOf(map[string]string{"requestId": id}))
}

// PlatformBaseline is Baseline for the sender of a platform other than
// Meta (platform.Senders): the rate at which the fake takes the
// ready-made batch from conc plain clients over d, after a short warmup.
func PlatformBaseline(s destination.Sender, t destination.Target, batch []json.RawMessage, conc int, d time.Duration) (BaselineRun, error) {
	return BaselineOf(func(ctx context.Context) error {
		a, err := s.Send(ctx, t, batch)
		if err == nil && (a.Verdict != destination.Accepted || len(a.Refused) > 0) {
			err = fmt.Errorf("HTTP %d: %s %s", a.HTTPStatus, a.Message, a.Body)
		}
		return err
	}, len(batch), conc, d)
}

// BaselineOf is Baseline's measure for any client: send posts the
// ready-made batch of n events once, and errs when it was not taken.
func BaselineOf(send func(context.Context) error, n, conc int, d time.Duration) (BaselineRun, error) {
	ctx := context.Background()
	warm := min(d/10, time.Second)
	for range conc {
		if err := send(ctx); err != nil {
			return BaselineRun{}, fmt.Errorf("send: %w", err)
		}
	}
	start := time.Now()
	from := start.Add(warm)
	end := from.Add(d)
	var (
		reqs, evs atomic.Int64
		firstErr  error
		once      sync.Once
		wg        sync.WaitGroup
	)
	for range conc {
		wg.Go(func() {
			for {
				err := send(ctx)
				done := time.Now()
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if done.After(end) {
					return
				}
				if !done.Before(from) {
					reqs.Add(1)
					evs.Add(int64(n))
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return BaselineRun{}, firstErr
	}
	return BaselineRun{Rate: float64(evs.Load()) / d.Seconds(), Requests: reqs.Load(), Events: evs.Load(), Seconds: d.Seconds()}, nil
}
