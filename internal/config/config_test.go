package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// getenv serves env vars from a map, as main does from os.Getenv.
func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var defaults = Config{
	DataDir:         DefaultDataDir,
	Addr:            DefaultAddr,
	MetaGraphURL:    DefaultMetaGraphURL,
	MetaAPIVersion:  DefaultMetaAPIVersion,
	HubSpotAPIURL:   DefaultHubSpotAPIURL,
	PipedriveAPIURL: DefaultPipedriveURL,
	TikTokAPIURL:    DefaultTikTokAPIURL,
	PinterestAPIURL: DefaultPinterestURL,
	GoogleAPIURL:    DefaultGoogleURL,
	GoogleTokenURL:  DefaultGoogleTokenURL,
	SessionIdle:     DefaultSessionIdle,
	SessionMax:      DefaultSessionMax,
}

// with returns the defaults changed by fn.
func with(fn func(c *Config)) Config {
	c := defaults
	fn(&c)
	return c
}

func TestLoad(t *testing.T) {
	secret := strings.Repeat("s", 32)
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{"defaults", nil, defaults},
		{"blank values mean defaults", map[string]string{
			"LEADSIGNAL_DATA": "  ", "LEADSIGNAL_ADDR": " ", "META_GRAPH_URL": " ", "META_API_VERSION": "\t",
		}, defaults},
		{"postgres URL", map[string]string{"DATABASE_URL": " postgres://u:p@db:5432/leads?sslmode=disable "},
			with(func(c *Config) { c.DatabaseURL = "postgres://u:p@db:5432/leads?sslmode=disable" })},
		{"postgresql scheme", map[string]string{"DATABASE_URL": "postgresql://db/leads"},
			with(func(c *Config) { c.DatabaseURL = "postgresql://db/leads" })},
		{"data dir", map[string]string{"LEADSIGNAL_DATA": "/var/lib/leadsignal"},
			with(func(c *Config) { c.DataDir = "/var/lib/leadsignal" })},
		{"addr", map[string]string{"LEADSIGNAL_ADDR": "127.0.0.1:9000"},
			with(func(c *Config) { c.Addr = "127.0.0.1:9000" })},
		{"secret", map[string]string{"LEADSIGNAL_SECRET": secret},
			with(func(c *Config) { c.Secret = secret })},
		{"graph URL loses its trailing slash", map[string]string{"META_GRAPH_URL": "http://127.0.0.1:9999/"},
			with(func(c *Config) { c.MetaGraphURL = "http://127.0.0.1:9999" })},
		{"API version", map[string]string{"META_API_VERSION": "v23.0"},
			with(func(c *Config) { c.MetaAPIVersion = "v23.0" })},
		{"CRM APIs and public URL", map[string]string{"HUBSPOT_API_URL": "http://127.0.0.1:9001/", "PIPEDRIVE_API_URL": "http://127.0.0.1:9002",
			"LEADSIGNAL_PUBLIC_URL": " https://leads.example.com/ "},
			with(func(c *Config) {
				c.HubSpotAPIURL, c.PipedriveAPIURL, c.PublicURL = "http://127.0.0.1:9001", "http://127.0.0.1:9002", "https://leads.example.com"
			})},
		{"session limits", map[string]string{"LEADSIGNAL_SESSION_IDLE": "30m", "LEADSIGNAL_SESSION_MAX": " 72h "},
			with(func(c *Config) { c.SessionIdle, c.SessionMax = 30*time.Minute, 72*time.Hour })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(getenv(tt.env))
			if err != nil {
				t.Fatalf("Load(%v) error: %v", tt.env, err)
			}
			if got != tt.want {
				t.Errorf("Load(%v) = %+v; want %+v", tt.env, got, tt.want)
			}
		})
	}
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // the env var the error must name
	}{
		{"mysql URL", map[string]string{"DATABASE_URL": "mysql://u:p@db/leads"}, "DATABASE_URL"},
		{"file path as DATABASE_URL", map[string]string{"DATABASE_URL": "./data/leadsignal.db"}, "DATABASE_URL"},
		{"unparsable DATABASE_URL", map[string]string{"DATABASE_URL": "postgres://db:port/x"}, "DATABASE_URL"},
		{"short secret", map[string]string{"LEADSIGNAL_SECRET": strings.Repeat("s", 31)}, "LEADSIGNAL_SECRET"},
		{"graph URL without scheme", map[string]string{"META_GRAPH_URL": "graph.facebook.com"}, "META_GRAPH_URL"},
		{"TikTok URL without scheme", map[string]string{"TIKTOK_API_URL": "business-api.tiktok.com"}, "TIKTOK_API_URL"},
		{"Pinterest URL not http", map[string]string{"PINTEREST_API_URL": "ftp://api.pinterest.com"}, "PINTEREST_API_URL"},
		{"graph URL with ftp scheme", map[string]string{"META_GRAPH_URL": "ftp://graph.facebook.com"}, "META_GRAPH_URL"},
		{"graph URL without host", map[string]string{"META_GRAPH_URL": "https://"}, "META_GRAPH_URL"},
		{"HubSpot URL without scheme", map[string]string{"HUBSPOT_API_URL": "api.hubapi.com"}, "HUBSPOT_API_URL"},
		{"Pipedrive URL of javascript", map[string]string{"PIPEDRIVE_API_URL": "javascript:alert(1)"}, "PIPEDRIVE_API_URL"},
		{"public URL without scheme", map[string]string{"LEADSIGNAL_PUBLIC_URL": "leads.example.com"}, "LEADSIGNAL_PUBLIC_URL"},
		{"public URL with a query", map[string]string{"LEADSIGNAL_PUBLIC_URL": "https://leads.example.com/?x=1"}, "LEADSIGNAL_PUBLIC_URL"},
		{"public URL with a path", map[string]string{"LEADSIGNAL_PUBLIC_URL": "https://leads.example.com/leadsignal"}, "LEADSIGNAL_PUBLIC_URL"},
		{"public URL with credentials", map[string]string{"LEADSIGNAL_PUBLIC_URL": "https://u:p@leads.example.com"}, "LEADSIGNAL_PUBLIC_URL"},
		{"client IP header with a colon", map[string]string{"LEADSIGNAL_CLIENT_IP_HEADER": "X-Real-IP: 1.2.3.4"}, "LEADSIGNAL_CLIENT_IP_HEADER"},
		{"API version without v", map[string]string{"META_API_VERSION": "24.0"}, "META_API_VERSION"},
		{"idle limit without unit", map[string]string{"LEADSIGNAL_SESSION_IDLE": "12"}, "LEADSIGNAL_SESSION_IDLE"},
		{"idle limit of seconds", map[string]string{"LEADSIGNAL_SESSION_IDLE": "30s"}, "LEADSIGNAL_SESSION_IDLE"},
		{"negative idle limit", map[string]string{"LEADSIGNAL_SESSION_IDLE": "-1h"}, "LEADSIGNAL_SESSION_IDLE"},
		{"max limit as days", map[string]string{"LEADSIGNAL_SESSION_MAX": "14d"}, "LEADSIGNAL_SESSION_MAX"},
		{"max shorter than idle", map[string]string{"LEADSIGNAL_SESSION_IDLE": "2h", "LEADSIGNAL_SESSION_MAX": "1h"}, "LEADSIGNAL_SESSION_MAX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(getenv(tt.env))
			if err == nil {
				t.Fatalf("Load(%v) = nil error; want one naming %s", tt.env, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Load(%v) error = %q; want it to name %s", tt.env, err, tt.wantErr)
			}
		})
	}
}

func TestLoadErrorHidesDatabasePassword(t *testing.T) {
	_, err := Load(getenv(map[string]string{"DATABASE_URL": "mysql://u:hunter2@db/leads"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Load error = %v; want an error without the password", err)
	}
}

func TestEnsureSecretGeneratesAndKeeps(t *testing.T) {
	// A data folder that does not exist yet: EnsureSecret creates it.
	dir := filepath.Join(t.TempDir(), "data")
	c := with(func(c *Config) { c.DataDir = dir })
	if err := c.EnsureSecret(); err != nil {
		t.Fatalf("EnsureSecret: %v", err)
	}
	if len(c.Secret) < minSecretLen {
		t.Fatalf("generated secret has %d characters; want at least %d", len(c.Secret), minSecretLen)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate after EnsureSecret: %v", err)
	}

	p := filepath.Join(dir, secretFile)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatalf("secret file: %v", err)
	}
	if runtime.GOOS != "windows" {
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("secret file mode = %v; want 0600", mode)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != c.Secret {
		t.Errorf("secret file holds %q; want %q", got, c.Secret)
	}

	// A second call keeps the secret it has.
	first := c.Secret
	if err := c.EnsureSecret(); err != nil || c.Secret != first {
		t.Errorf("second EnsureSecret: secret %q, err %v; want %q, nil", c.Secret, err, first)
	}

	// A fresh Config (the next start) reads the same secret back.
	fresh := Config{DataDir: dir}
	if err := fresh.EnsureSecret(); err != nil {
		t.Fatalf("EnsureSecret on restart: %v", err)
	}
	if fresh.Secret != first {
		t.Errorf("secret after restart = %q; want %q", fresh.Secret, first)
	}
	if !bytes.Equal(fresh.Key("session-hash"), c.Key("session-hash")) {
		t.Error("session key changed across restarts")
	}

	// Another data folder gets another secret.
	other := Config{DataDir: t.TempDir()}
	if err := other.EnsureSecret(); err != nil {
		t.Fatal(err)
	}
	if other.Secret == first {
		t.Error("two data folders got the same generated secret")
	}
}

func TestEnsureSecretEnvWins(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("e", 40)
	c, err := Load(getenv(map[string]string{"LEADSIGNAL_DATA": dir, "LEADSIGNAL_SECRET": secret}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureSecret(); err != nil {
		t.Fatalf("EnsureSecret: %v", err)
	}
	if c.Secret != secret {
		t.Errorf("Secret = %q; want the env secret %q", c.Secret, secret)
	}
	if _, err := os.Stat(filepath.Join(dir, secretFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("secret file exists (stat err %v); want none written when LEADSIGNAL_SECRET is set", err)
	}
}

func TestEnsureSecretFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // "" means an error
	}{
		{"kept secret with newline", strings.Repeat("k", 32) + "\n", strings.Repeat("k", 32)},
		{"kept secret with spaces", "  " + strings.Repeat("k", 40) + " \r\n", strings.Repeat("k", 40)},
		{"too short", "short\n", ""},
		{"empty", "", ""},
		{"short once trimmed", strings.Repeat(" ", 40) + "abc\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, secretFile)
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			c := Config{DataDir: dir}
			err := c.EnsureSecret()
			if tt.want == "" {
				if err == nil {
					t.Fatalf("EnsureSecret with file %q = nil error, secret %q; want an error", tt.content, c.Secret)
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("EnsureSecret error = %q; want it to name the file %s", err, p)
				}
				if c.Secret != "" {
					t.Errorf("Secret = %q after an error; want it empty", c.Secret)
				}
				b, _ := os.ReadFile(p)
				if string(b) != tt.content {
					t.Errorf("secret file changed to %q; want it left alone", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("EnsureSecret: %v", err)
			}
			if c.Secret != tt.want {
				t.Errorf("Secret = %q; want %q", c.Secret, tt.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	a := Config{Secret: strings.Repeat("a", 32)}
	b := Config{Secret: strings.Repeat("b", 32)}
	purposes := []string{"session-hash", "session-block", "token-aead"}
	seen := map[string]string{}
	for _, p := range purposes {
		k := a.Key(p)
		if len(k) != 32 {
			t.Errorf("Key(%q) has %d bytes; want 32", p, len(k))
		}
		if again := a.Key(p); !bytes.Equal(k, again) {
			t.Errorf("Key(%q) = %x, then %x; want the same key", p, k, again)
		}
		if other := b.Key(p); bytes.Equal(k, other) {
			t.Errorf("Key(%q) is the same for two secrets", p)
		}
		if bytes.Contains(k, []byte(a.Secret[:8])) {
			t.Errorf("Key(%q) = %x contains the secret", p, k)
		}
		if prev, ok := seen[string(k)]; ok {
			t.Errorf("Key(%q) = Key(%q); want a different key per purpose", p, prev)
		}
		seen[string(k)] = p
	}
}

func TestFingerprint(t *testing.T) {
	a := Config{Secret: strings.Repeat("a", 32)}
	b := Config{Secret: strings.Repeat("b", 32)}
	if got := a.Fingerprint(); len(got) != 8 || got != a.Fingerprint() {
		t.Errorf("Fingerprint() = %q; want 8 stable hex characters", got)
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("two secrets have the same fingerprint")
	}
	if strings.Contains(a.Fingerprint(), "aaaa") {
		t.Errorf("Fingerprint() = %q shows the secret", a.Fingerprint())
	}
}

func TestDatabaseHost(t *testing.T) {
	tests := []struct {
		name     string
		c        Config
		want     string
		postgres bool
	}{
		{"password hidden", Config{DatabaseURL: "postgres://leads:s3cr3t@db.internal:5432/leads?sslmode=require"}, "db.internal:5432", true},
		{"no port", Config{DatabaseURL: "postgresql://leads:s3cr3t@db.internal/leads"}, "db.internal", true},
		{"no user", Config{DatabaseURL: "postgres://127.0.0.1:1/db"}, "127.0.0.1:1", true},
		{"sqlite file", Config{DataDir: "/srv/data"}, filepath.Join("/srv/data", "leadsignal.db"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.DatabaseHost(); got != tt.want {
				t.Errorf("DatabaseHost() of %q = %q; want %q", tt.c.DatabaseURL, got, tt.want)
			}
			if strings.Contains(tt.c.DatabaseHost(), "s3cr3t") {
				t.Errorf("DatabaseHost() = %q shows the password", tt.c.DatabaseHost())
			}
			if got := tt.c.Postgres(); got != tt.postgres {
				t.Errorf("Postgres() = %v; want %v", got, tt.postgres)
			}
		})
	}
}

func TestSQLitePath(t *testing.T) {
	c, err := Load(getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.SQLitePath(), filepath.Join("data", "leadsignal.db"); got != want {
		t.Errorf("SQLitePath() = %q; want %q", got, want)
	}
}
