package setup

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

const destinationsFile = `{
  "account": {"slug": "fan", "name": "Fan Inc", "timezone": "UTC", "default_country": "US", "currency": "USD"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "destinations": [
    {"kind": "tiktok", "name": "TikTok", "pixel_id": "C4TIKTOK1234", "event_source": "crm", "access_token_env": "TT_TOKEN",
     "mode": "test", "test_event_code": "TEST9", "event_names": {"QualifiedLead": "ApplicationApproval"}},
    {"kind": "pinterest", "name": "Pinterest", "pixel_id": "549755885175", "access_token_env": "PIN_TOKEN", "mode": "live", "ldu": "always"},
    {"kind": "google", "name": "Google Ads", "pixel_id": "123-456-7890", "login_account": "987-654-3210", "client_id": "client.apps",
     "access_token_env": "G_REFRESH", "app_secret_env": "G_SECRET", "consent": "granted", "mode": "live",
     "event_names": {"Lead": "111111111", "Purchase": "222222222"}}
  ]
}`

// TestApplyDestinations: a file's destinations of every kind are created
// with their settings and sealed secrets, exported back as they were
// (Meta's under datasets, the others under destinations), and applied
// again as no change.
func TestApplyDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		vars := map[string]string{"TT_TOKEN": "tt-token-1234", "PIN_TOKEN": "pin-token-5678", "G_REFRESH": "1//refresh-9", "G_SECRET": "g-secret"}
		f, ps := Decode(strings.NewReader(destinationsFile))
		if len(ps) > 0 {
			t.Fatalf("Decode: %v", ps)
		}
		mustApply(t, s, box, vars, f)
		got := map[models.Kind]models.Dataset{}
		for _, d := range load(t, s, "fan").Datasets {
			got[d.Of()] = d
		}
		tt, pin, g := got[models.KindTikTok], got[models.KindPinterest], got[models.KindGoogle]
		if tt.EventSource != "crm" || tt.EventNames != `{"QualifiedLead":"ApplicationApproval"}` || tt.TestEventCode != "TEST9" {
			t.Errorf("TikTok = %+v", tt)
		}
		if pin.LDU != models.LDUAlways || pin.Mode != models.ModeLive {
			t.Errorf("Pinterest = %+v", pin)
		}
		if g.PixelID != "1234567890" || g.LoginAccount != "9876543210" || g.ClientID != "client.apps" || g.Consent != models.ConsentGranted {
			t.Errorf("Google = %+v", g)
		}
		if tok, err := box.Open(g.TokenSealed, dispatch.TokenLabel(g.ID)); err != nil || tok != "1//refresh-9" {
			t.Errorf("Google's refresh token opens to %q, %v", tok, err)
		}
		if sec, err := box.Open(g.AppSecretSealed, dispatch.AppSecretLabel(g.ID)); err != nil || sec != "g-secret" {
			t.Errorf("Google's client secret opens to %q, %v", sec, err)
		}

		exported, _, err := Export(t.Context(), s, "fan", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(exported.Datasets) != 1 || exported.Datasets[0].Kind != "" || len(exported.Destinations) != 3 {
			t.Fatalf("exported datasets %+v, destinations %+v; want Meta's alone in datasets", exported.Datasets, exported.Destinations)
		}
		for _, d := range exported.Destinations {
			if d.Name == "Google Ads" && !reflect.DeepEqual(d.EventNames, map[string]string{"Lead": "111111111", "Purchase": "222222222"}) {
				t.Errorf("exported Google's actions = %v", d.EventNames)
			}
		}
		r := mustApply(t, s, box, vars, exported)
		if len(r.Changes) != 0 {
			t.Errorf("applying the export again changed %v; want nothing", r.Changes)
		}
	})
}

// TestDestinationProblems: what a file gets wrong about a destination is
// named at its path.
func TestDestinationProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		vars := map[string]string{"TT_TOKEN": "tt-token-1234", "PIN_TOKEN": "p", "G_REFRESH": "r", "G_SECRET": "s"}
		f, _ := Decode(strings.NewReader(destinationsFile))
		mustApply(t, s, box, vars, f)
		tests := []struct {
			name, file, want string
		}{
			{"no kind", `{"kind": "", "name": "X", "pixel_id": "123456", "mode": "dry_run"}`, "destinations[0].kind: required"},
			{"unknown kind", `{"kind": "myspace", "name": "X", "pixel_id": "123456", "mode": "dry_run"}`, "destinations[0].kind: \"myspace\" is not a kind"},
			{"bad TikTok id", `{"kind": "tiktok", "name": "X", "pixel_id": "C4 !", "mode": "dry_run"}`, "destinations[0].pixel_id: must be the pixel code"},
			{"bad event source", `{"kind": "tiktok", "name": "X", "pixel_id": "C4ABCDE", "event_source": "app", "mode": "dry_run"}`, "destinations[0].event_source:"},
			{"Meta's field", `{"kind": "pinterest", "name": "X", "pixel_id": "123456", "api_version": "v24.0", "mode": "dry_run"}`, "destinations[0].api_version: a Pinterest destination has no api_version"},
			{"bad names", `{"kind": "pinterest", "name": "X", "pixel_id": "123456", "mode": "dry_run", "event_names": {"Lead": ""}}`, "destinations[0].event_names: Lead:"},
			{"Google id", `{"kind": "google", "name": "X", "pixel_id": "12345", "mode": "dry_run"}`, "destinations[0].pixel_id: must be the Google Ads customer id"},
			{"Google client", `{"kind": "google", "name": "X", "pixel_id": "1234567890", "mode": "live", "access_token_env": "G_REFRESH"}`, "destinations[0].client_id: live mode needs"},
			{"Google secret", `{"kind": "google", "name": "X", "pixel_id": "1234567890", "mode": "live", "client_id": "c", "access_token_env": "G_REFRESH"}`, "destinations[0].app_secret_env: live mode needs"},
			{"Google action", `{"kind": "google", "name": "X", "pixel_id": "1234567890", "mode": "dry_run", "event_names": {"Lead": "abc"}}`, "destinations[0].event_names: Lead: \"abc\" is not a conversion action id"},
			{"kind changes", `{"kind": "pinterest", "name": "TikTok", "pixel_id": "123456", "mode": "dry_run"}`, "destinations[0].kind: \"TikTok\" is a TikTok destination of the account"},
			{"same name twice", `{"kind": "pinterest", "name": "main", "pixel_id": "123456", "mode": "dry_run"}`, "destinations[0].name: \"main\" is also the name of datasets[0]"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				file := `{"account": {"slug": "fan", "name": "Fan Inc", "timezone": "UTC", "default_country": "US", "currency": "USD"},
					"datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}], "destinations": [` + tt.file + `]}`
				f, ps := Decode(strings.NewReader(file))
				if len(ps) == 0 {
					// Apply checks against the account too (a kind that changes).
					_, err := Apply(t.Context(), s, box, env(vars), f, Options{})
					var inv *Invalid
					if errors.As(err, &inv) {
						ps = inv.Problems
					}
				}
				var found []string
				for _, p := range ps {
					found = append(found, p.String())
					if strings.HasPrefix(p.String(), tt.want) {
						return
					}
				}
				t.Errorf("problems %q; want one starting %q", found, tt.want)
			})
		}
		t.Run("a dataset of another kind", func(t *testing.T) {
			f, _ := Decode(strings.NewReader(`{"account": {"slug": "fan", "name": "Fan Inc", "timezone": "UTC", "default_country": "US", "currency": "USD"},
				"datasets": [{"kind": "tiktok", "name": "T2", "pixel_id": "C4ABCDE", "mode": "dry_run"}]}`))
			_, err := Apply(t.Context(), s, box, env(vars), f, Options{})
			var inv *Invalid
			if !errors.As(err, &inv) || !strings.Contains(inv.Error(), "datasets are Meta's") {
				t.Errorf("Apply = %v; want datasets[0].kind refused", err)
			}
		})
	})
}
