package benchkit

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
)

// TestFakePlatform: each platform's own sender gets its success answer
// from the fake with the fake's credentials, and its refusal without.
func TestFakePlatform(t *testing.T) {
	for _, kind := range []models.Kind{models.KindTikTok, models.KindPinterest, models.KindGoogle} {
		t.Run(string(kind), func(t *testing.T) {
			f := NewFakePlatform(kind)
			srv := httptest.NewServer(f)
			defer srv.Close()
			sender := platform.Senders(f.URLs(srv.URL))[kind]
			n := platform.MaxBatch(kind)
			evs := make([]json.RawMessage, n)
			for i := range evs {
				evs[i] = json.RawMessage(fmt.Sprintf(`{"event_id":"e%d","destinationReferences":[%q]}`, i, f.ConversionAction))
			}
			good := destination.Target{AccountID: f.AccountID, Token: f.Token, EventSource: "web"}
			if kind == models.KindGoogle {
				good.Token = ""
				good.OAuth = destination.OAuth{ClientID: f.ClientID, ClientSecret: f.ClientSecret, RefreshToken: f.Token}
			}
			for range 2 {
				a, err := sender.Send(t.Context(), good, evs)
				if err != nil || a.Verdict != destination.Accepted || a.Received != n || len(a.Refused) > 0 {
					t.Fatalf("Send = %+v, %v; want %d events accepted", a, err, n)
				}
			}
			if got := f.Received.Load(); got != int64(2*n) {
				t.Errorf("Received = %d; want %d", got, 2*n)
			}

			bad := good
			bad.Token, bad.OAuth.RefreshToken = "wrong-token", "wrong-token"
			if kind == models.KindGoogle {
				// Another client: the access token of the good one is cached.
				sender = platform.Senders(f.URLs(srv.URL))[kind]
			}
			a, err := sender.Send(t.Context(), bad, evs[:1])
			if err != nil || a.Verdict != destination.AuthRefused {
				t.Errorf("Send with a wrong token = %+v, %v; want AuthRefused", a, err)
			}
			if f.Refused.Load() != 1 || f.Received.Load() != int64(2*n) {
				t.Errorf("Refused %d, Received %d; want 1, %d", f.Refused.Load(), f.Received.Load(), 2*n)
			}

			r, err := PlatformBaseline(sender, good, evs, 2, 200*time.Millisecond)
			if err != nil || r.Events == 0 || r.Rate <= 0 {
				t.Errorf("PlatformBaseline = %+v, %v", r, err)
			}
		})
	}
}
