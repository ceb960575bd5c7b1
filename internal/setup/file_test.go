package setup

import (
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/models"
)

const validJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "Europe/Berlin",
              "default_country": "DE", "currency": "EUR", "crm_name": "HubSpot",
              "website_url": "https://acme.example/contact"},
  "datasets": [
    {"name": "Main", "pixel_id": "123456789012345", "access_token_env": "META_TOKEN_ACME",
     "app_secret_env": "META_APP_SECRET_ACME", "api_version": "v24.0", "mode": "live", "ldu": "california"},
    {"name": "Staging", "pixel_id": "987654321", "test_event_code": "TEST123", "mode": "test",
     "access_token_env": "META_TOKEN_STAGING", "ldu": "off"}
  ],
  "junk": {"too_fast": {"enabled": true, "threshold": 3}, "vendor_pitch": {"enabled": false, "keywords": ["seo services"]}}
}`

func TestDecodeValid(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(validJSON))
	if len(problems) > 0 {
		t.Fatalf("Decode(valid) problems = %v; want none", problems)
	}
	want := File{
		Account: AccountSpec{Slug: "acme", Name: "Acme Inc", Timezone: "Europe/Berlin", DefaultCountry: "DE", Currency: "EUR", CRMName: "HubSpot",
			WebsiteURL: "https://acme.example/contact"},
		Datasets: []DatasetSpec{
			{Name: "Main", PixelID: "123456789012345", AccessTokenEnv: "META_TOKEN_ACME", AppSecretEnv: "META_APP_SECRET_ACME",
				APIVersion: "v24.0", Mode: models.ModeLive, LDU: models.LDUCalifornia},
			{Name: "Staging", PixelID: "987654321", TestEventCode: "TEST123", Mode: models.ModeTest,
				AccessTokenEnv: "META_TOKEN_STAGING", LDU: models.LDUOff},
		},
		Junk: junk.Settings{
			junk.TooFast:     {Enabled: true, Threshold: 3},
			junk.VendorPitch: {Enabled: false, Keywords: []string{"seo services"}},
		},
	}
	if f.Account.present["website_url"] != true || f.Account.present["slug"] != true {
		t.Errorf("Decode(valid) account keys given = %v; want every key of the file", f.Account.present)
	}
	f.Account.present = nil
	if !reflect.DeepEqual(f, want) {
		t.Errorf("Decode(valid) =\n%+v\nwant\n%+v", f, want)
	}
}

func TestDecodeProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want []string // each problem's String(), or a prefix of it
	}{
		{
			name: "unknown top-level key",
			json: `{"account": {"slug": "acme"}, "datsets": []}`,
			want: []string{"datsets: unknown field; the file has account, datasets, destinations, junk, send_rules, stages, stage_mappings, sequences, crm_connections and site_keys"},
		},
		{
			name: "unknown sequence key",
			json: `{"account": {"slug": "acme"}, "sequences": [{"dataset": "Main", "initial_event": "Lead", "final": "Purchase"}]}`,
			want: []string{"sequences[0].final: unknown field; known fields are dataset, initial_event, final_event"},
		},
		{
			name: "sequences not a list",
			json: `{"account": {"slug": "acme"}, "sequences": {"dataset": "Main"}}`,
			want: []string{"sequences: must be a list of sequences, not an object"},
		},
		{
			name: "unknown dataset key",
			json: `{"datasets": [{"name": "A"}, {"name": "B", "pixel": "123456"}]}`,
			want: []string{"datasets[1].pixel: unknown field; known fields are name, pixel_id,"},
		},
		{
			name: "wrong types",
			json: `{"account": {"slug": 12, "website_url": {"href": "https://acme.example"}}, "datasets": [{"pixel_id": 123456789, "mode": ["live"]}]}`,
			want: []string{
				"account.slug: must be a string, not a number",
				"account.website_url: must be a string: a URL like https://www.example.com/contact, not an object",
				"datasets[0].pixel_id: must be a string of digits, not a number",
				"datasets[0].mode: must be a string: live, test or dry_run, not a list",
			},
		},
		{
			name: "sections of the wrong shape",
			json: `{"account": "acme", "datasets": {"name": "A"}, "junk": []}`,
			want: []string{"account: must be an object", "datasets: must be a list of datasets, not an object", "junk: must be an object of signals"},
		},
		{
			name: "junk setting",
			json: `{"junk": {"too_fast": {"threshold": "2"}, "honeypot": true, "duplicate": {"enabled": true, "days": 3}}}`,
			want: []string{
				"junk.too_fast.threshold: must be a number, not a string",
				"junk.too_fast.enabled: required: true or false",
				"junk.honeypot: must be an object",
				"junk.duplicate.days: unknown field; known fields are enabled, threshold, keywords",
			},
		},
		{
			name: "key given twice",
			json: `{"account": {"slug": "a", "slug": "b"}}`,
			want: []string{"account.slug: given twice"},
		},
		{
			name: "syntax error",
			json: "{\n  \"account\": {\"slug\": \"acme\",}\n}",
			want: []string{"invalid JSON at line 2, column"},
		},
		{
			name: "truncated",
			json: `{"account": {"slug": "acme"`,
			want: []string{"invalid JSON: the file ends in the middle of a value"},
		},
		{
			name: "data after the object",
			json: `{"account": {}} {"account": {}}`,
			want: []string{"invalid JSON at line 1, column"},
		},
		{
			name: "not an object",
			json: `[1, 2]`,
			want: []string{"must be one JSON object"},
		},
		{
			name: "empty",
			json: "  \n",
			want: []string{"the file is empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Decode(strings.NewReader(tt.json))
			if len(problems) != len(tt.want) {
				t.Fatalf("Decode(%s) problems = %q; want %d: %q", tt.json, problems, len(tt.want), tt.want)
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("Decode(%s) problem %d = %q; want it to start with %q", tt.json, i, p, tt.want[i])
				}
			}
		})
	}
}

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestValidateValid(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(validJSON))
	if len(problems) > 0 {
		t.Fatalf("Decode(valid) problems = %v", problems)
	}
	getenv := env(map[string]string{"META_TOKEN_ACME": "EAAtoken1", "META_APP_SECRET_ACME": "s3cret", "META_TOKEN_STAGING": "EAAtoken2"})
	if ps := f.Validate(getenv); len(ps) > 0 {
		t.Errorf("Validate(valid) = %q; want no problems", ps)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	t.Parallel()
	const token = "EAAsecretvalue1234"
	f := File{
		Account: AccountSpec{Slug: "Acme!", Name: "", Timezone: "Mars/Olympus", DefaultCountry: "XX", Currency: "usd", WebsiteURL: "acme.example/contact"},
		Datasets: []DatasetSpec{
			{Name: "Main", PixelID: "12ab", Mode: models.ModeLive, AccessTokenEnv: "META_TOKEN_ACME", LDU: "sometimes"},
			{Name: "main", PixelID: "123456789", Mode: models.ModeTest, APIVersion: "24"},
			{Name: "Third", PixelID: "123456789", Mode: "fast", AccessTokenEnv: "META-TOKEN", AppSecretEnv: "SET_SECRET"},
			{Name: "Fourth", PixelID: "123456789", Mode: models.ModeDryRun, AccessTokenEnv: "EAA" + strings.Repeat("x", 100)},
		},
		Junk: junk.Settings{"too_fast": {Enabled: true, Threshold: -1}, "psychic": {Enabled: true}},
	}
	getenv := env(map[string]string{"SET_SECRET": "with space", "UNRELATED": token})
	got := f.Validate(getenv)
	want := []string{
		"account.slug",
		"account.name: required",
		"account.timezone",
		"account.default_country",
		"account.currency",
		`account.website_url: write the full address of a page of your site`,
		"datasets[0].pixel_id",
		"datasets[0].ldu",
		"datasets[0].access_token_env: environment variable META_TOKEN_ACME is not set",
		`datasets[1].name: "main" is also the name of datasets[0]`,
		"datasets[1].api_version",
		"datasets[1].test_event_code: test mode needs the test event code",
		"datasets[1].access_token_env: test mode needs an access token",
		"datasets[2].mode",
		"datasets[2].access_token_env: must be the name of an environment variable",
		"datasets[2].app_secret_env: environment variable SET_SECRET holds spaces",
		"datasets[3].access_token_env: this looks like a secret itself",
		`junk.psychic: unknown junk signal "psychic"`,
		"junk.too_fast: threshold must not be negative",
	}
	if len(got) != len(want) {
		t.Fatalf("Validate = %d problems:\n%s\nwant %d starting with:\n%s", len(got), join2(got), len(want), strings.Join(want, "\n"))
	}
	for i, p := range got {
		if !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d = %q; want it to start with %q", i, p, want[i])
		}
		for _, secret := range []string{token, "with space"} {
			if strings.Contains(p.String(), secret) {
				t.Errorf("problem %d = %q shows a secret value", i, p)
			}
		}
	}
}

func join2(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func TestSuggestedTokenEnv(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want string }{
		{"Main", "META_TOKEN_MAIN"},
		{"Main EU (web)", "META_TOKEN_MAIN_EU_WEB"},
		{"  acme-2 ", "META_TOKEN_ACME_2"},
		{"Ünïcode", "META_TOKEN_N_CODE"},
		{"日本", "META_TOKEN_DATASET"},
	}
	for _, tt := range tests {
		if got, _ := suggestedEnvs(models.KindMeta, tt.name); got != tt.want {
			t.Errorf("suggestedEnvs(meta, %q) = %q; want %q", tt.name, got, tt.want)
		}
	}
	// Each platform's variables are named after it.
	for _, tt := range []struct {
		kind          models.Kind
		token, secret string
	}{
		{models.KindMeta, "META_TOKEN_ADS", "META_APP_SECRET_ADS"},
		{"", "META_TOKEN_ADS", "META_APP_SECRET_ADS"},
		{models.KindTikTok, "TIKTOK_TOKEN_ADS", "TIKTOK_APP_SECRET_ADS"},
		{models.KindPinterest, "PINTEREST_TOKEN_ADS", "PINTEREST_APP_SECRET_ADS"},
		{models.KindGoogle, "GOOGLE_REFRESH_TOKEN_ADS", "GOOGLE_CLIENT_SECRET_ADS"},
	} {
		if token, secret := suggestedEnvs(tt.kind, "Ads"); token != tt.token || secret != tt.secret {
			t.Errorf("suggestedEnvs(%q, Ads) = %s, %s; want %s, %s", tt.kind, token, secret, tt.token, tt.secret)
		}
	}
}
