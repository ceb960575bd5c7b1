package benchkit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/dispatch"
)

// FakeGraph is a fast Graph API stand-in for the load drivers.
// capitest.Server needs a testing.TB, so this is its request handling
// without the recording: by default it decodes the body the way capitest
// does (numbers as json.Number, every event into a map) and runs the same
// per-event checks; Light only counts the data array.
type FakeGraph struct {
	Light bool
	// Token is the access token it takes; any other is refused (190).
	Token    string
	Requests atomic.Int64
	// Received counts the events of the batches it took, Refused the
	// requests it answered with an error.
	Received atomic.Int64
	Refused  atomic.Int64
}

// Reset sets the counts to zero.
func (f *FakeGraph) Reset() {
	f.Requests.Store(0)
	f.Received.Store(0)
	f.Refused.Store(0)
}

func (f *FakeGraph) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	trace := "FakeTrace" + strconv.FormatInt(f.Requests.Add(1), 10)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 3 || parts[2] != "events" {
		f.refuse(w, trace, 2500, "Unknown path components: "+r.URL.Path)
		return
	}
	if r.URL.Query().Get("access_token") != f.Token {
		f.refuse(w, trace, 190, "Error validating access token")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		f.refuse(w, trace, 100, "cannot read body")
		return
	}
	n := 0
	if f.Light {
		var body struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			f.refuse(w, trace, 100, "(#100) bad JSON: "+err.Error())
			return
		}
		n = len(body.Data)
	} else {
		var body struct {
			Data          []map[string]any `json:"data"`
			TestEventCode string           `json:"test_event_code"`
			PartnerAgent  string           `json:"partner_agent"`
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&body); err != nil {
			f.refuse(w, trace, 100, "(#100) bad JSON: "+err.Error())
			return
		}
		now := time.Now()
		for i, e := range body.Data {
			if msg := checkEvent(e, now); msg != "" {
				f.refuse(w, trace, 100, fmt.Sprintf("%s (event %d of the batch)", msg, i))
				return
			}
		}
		n = len(body.Data)
	}
	if n == 0 || n > capi.MaxBatch {
		f.refuse(w, trace, 100, "(#100) param data must be an array of 1 to 1000 elements")
		return
	}
	f.Received.Add(int64(n))
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("X-Fb-Trace-Id", trace)
	_ = json.NewEncoder(w).Encode(map[string]any{"events_received": n, "messages": []string{}, "fbtrace_id": trace})
}

func (f *FakeGraph) refuse(w http.ResponseWriter, trace string, code int, msg string) {
	f.Refused.Add(1)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "OAuthException", "code": code, "fbtrace_id": trace}})
}

var actionSources = map[string]bool{
	"website": true, "app": true, "email": true, "phone_call": true, "chat": true,
	"physical_store": true, "system_generated": true, "business_messaging": true, "other": true,
}

// checkEvent is capitest's per-event check: "" when Meta would take it.
func checkEvent(e map[string]any, now time.Time) string {
	if name, _ := e["event_name"].(string); name == "" {
		return "event_name is required"
	}
	n, ok := e["event_time"].(json.Number)
	t, err := n.Int64()
	if !ok || err != nil || t <= 0 {
		return "event_time must be a Unix timestamp in seconds"
	}
	if now.Sub(time.Unix(t, 0)) > dispatch.MaxAge {
		return "event_time is more than 7 days ago"
	}
	if time.Unix(t, 0).Sub(now) > time.Minute {
		return "event_time is in the future"
	}
	action, _ := e["action_source"].(string)
	if !actionSources[action] {
		return "action_source is not valid"
	}
	ud, ok := e["user_data"].(map[string]any)
	if !ok {
		return "user_data is required"
	}
	for _, k := range []string{"em", "ph"} {
		if v, ok := ud[k]; ok && !allHashed(v) {
			return "user_data." + k + " must be SHA-256 hashed"
		}
	}
	if action == "website" {
		if u, _ := e["event_source_url"].(string); u == "" {
			return "event_source_url is required for website events"
		}
		if ua, _ := ud["client_user_agent"].(string); ua == "" {
			return "client_user_agent is required for website events"
		}
	}
	return ""
}

func allHashed(v any) bool {
	list, ok := v.([]any)
	if !ok {
		s, ok := v.(string)
		return ok && isSHA256(s)
	}
	for _, x := range list {
		if s, ok := x.(string); !ok || !isSHA256(s) {
			return false
		}
	}
	return len(list) > 0
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// BaselineRun is one run of Baseline: the rate at which the fake took
// ready-made batches, over the measured time (the warmup left out).
type BaselineRun struct {
	Rate     float64 // events/s
	Requests int64
	Events   int64
	Seconds  float64
}

// Baseline posts the ready-made batch with conc plain clients for d (after
// a short warmup) and returns the rate: what the fake takes when nothing
// but sending is done, the yardstick of the dispatch budgets.
func Baseline(c *capi.Client, t capi.Target, batch []json.RawMessage, conc int, d time.Duration) (BaselineRun, error) {
	return BaselineOf(func(ctx context.Context) error {
		resp, err := c.Send(ctx, t, batch)
		if err == nil && !resp.OK() {
			err = fmt.Errorf("HTTP %d: %s", resp.HTTPStatus, resp.Body)
		}
		return err
	}, len(batch), conc, d)
}
