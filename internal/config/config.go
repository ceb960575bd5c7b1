// Package config reads leadsignal's settings from the environment and keeps
// the generated secret in the data folder when none is given.
package config

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Defaults for the settings that have one.
const (
	DefaultAddr           = ":8080"
	DefaultDataDir        = "./data"
	DefaultMetaGraphURL   = "https://graph.facebook.com"
	DefaultMetaAPIVersion = "v24.0"
	DefaultHubSpotAPIURL  = "https://api.hubapi.com"
	DefaultPipedriveURL   = "https://api.pipedrive.com"
	DefaultTikTokAPIURL   = "https://business-api.tiktok.com"
	DefaultPinterestURL   = "https://api.pinterest.com"
	DefaultGoogleURL      = "https://datamanager.googleapis.com"
	DefaultGoogleTokenURL = "https://oauth2.googleapis.com/token"
	DefaultSessionIdle    = 12 * time.Hour
	DefaultSessionMax     = 14 * 24 * time.Hour
	secretFile            = "secret"
	minSecretLen          = 32
)

var apiVersionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

// Config is everything leadsignal reads from its environment.
type Config struct {
	// DatabaseURL is a postgres:// URL; empty means the embedded SQLite file.
	DatabaseURL string
	// DataDir holds the SQLite file and the generated secret.
	DataDir string
	// Addr is the HTTP listen address.
	Addr string
	// Secret keys the session cookies and the encryption of stored tokens.
	Secret string
	// MetaGraphURL is the base URL of Meta's Graph API.
	MetaGraphURL string
	// MetaAPIVersion is the Graph API version used when a dataset names none.
	MetaAPIVersion string
	// HubSpotAPIURL and PipedriveAPIURL are the CRMs' API base URLs
	// (HUBSPOT_API_URL, PIPEDRIVE_API_URL); tests point them at fakes.
	HubSpotAPIURL   string
	PipedriveAPIURL string
	// TikTokAPIURL and PinterestAPIURL are the other destinations'
	// platforms' API base URLs (TIKTOK_API_URL, PINTEREST_API_URL); tests
	// point them at fakes.
	TikTokAPIURL    string
	PinterestAPIURL string
	// GoogleAPIURL is Google's Data Manager API (GOOGLE_DATAMANAGER_URL),
	// GoogleTokenURL its OAuth token endpoint (GOOGLE_TOKEN_URL).
	GoogleAPIURL   string
	GoogleTokenURL string
	// PublicURL is the address CRMs and browsers reach this server at
	// (LEADSIGNAL_PUBLIC_URL), as PublicURL writes it; "" when unset, when
	// the one an administrator saves applies. Hook URLs are absolute with
	// it, and HubSpot's signature covers it.
	PublicURL string
	// ClientIPHeader (LEADSIGNAL_CLIENT_IP_HEADER), when set, is the one
	// header a proxy in front writes the visitor's address in, like
	// CF-Connecting-IP or X-Real-IP: the address is read from it alone.
	// Unset, X-Forwarded-For is read only from a proxy on a private or
	// loopback address.
	ClientIPHeader string
	// SessionIdle ends a session that saw no request for this long.
	SessionIdle time.Duration
	// SessionMax ends a session this long after its login, used or not.
	SessionMax time.Duration
}

// headerNameRE is an HTTP header name (RFC 9110's token).
var headerNameRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")

// Load reads the configuration through getenv (os.Getenv in main, a map in
// tests) and validates it. It does not touch the file system.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:     strings.TrimSpace(getenv("DATABASE_URL")),
		DataDir:         or(getenv("LEADSIGNAL_DATA"), DefaultDataDir),
		Addr:            or(getenv("LEADSIGNAL_ADDR"), DefaultAddr),
		Secret:          getenv("LEADSIGNAL_SECRET"),
		MetaGraphURL:    strings.TrimRight(or(getenv("META_GRAPH_URL"), DefaultMetaGraphURL), "/"),
		MetaAPIVersion:  or(getenv("META_API_VERSION"), DefaultMetaAPIVersion),
		HubSpotAPIURL:   strings.TrimRight(or(getenv("HUBSPOT_API_URL"), DefaultHubSpotAPIURL), "/"),
		PipedriveAPIURL: strings.TrimRight(or(getenv("PIPEDRIVE_API_URL"), DefaultPipedriveURL), "/"),
		TikTokAPIURL:    strings.TrimRight(or(getenv("TIKTOK_API_URL"), DefaultTikTokAPIURL), "/"),
		PinterestAPIURL: strings.TrimRight(or(getenv("PINTEREST_API_URL"), DefaultPinterestURL), "/"),
		GoogleAPIURL:    strings.TrimRight(or(getenv("GOOGLE_DATAMANAGER_URL"), DefaultGoogleURL), "/"),
		GoogleTokenURL:  strings.TrimSpace(or(getenv("GOOGLE_TOKEN_URL"), DefaultGoogleTokenURL)),
		PublicURL:       strings.TrimSpace(getenv("LEADSIGNAL_PUBLIC_URL")),
		ClientIPHeader:  strings.TrimSpace(getenv("LEADSIGNAL_CLIENT_IP_HEADER")),
		SessionIdle:     DefaultSessionIdle,
		SessionMax:      DefaultSessionMax,
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"LEADSIGNAL_SESSION_IDLE", &c.SessionIdle}, {"LEADSIGNAL_SESSION_MAX", &c.SessionMax}} {
		v := strings.TrimSpace(getenv(d.name))
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("config: %s %q must be a duration like 12h or 30m", d.name, v)
		}
		*d.to = dur
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	c.PublicURL, _ = PublicURL(c.PublicURL)
	return c, nil
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	if c.DatabaseURL != "" {
		u, err := url.Parse(c.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return errors.New("config: DATABASE_URL must be a postgres:// URL (leave it unset for the embedded database)")
		}
	}
	if c.Secret != "" && len(c.Secret) < minSecretLen {
		return fmt.Errorf("config: LEADSIGNAL_SECRET must be at least %d characters", minSecretLen)
	}
	for _, u := range []struct{ name, value string }{
		{"META_GRAPH_URL", c.MetaGraphURL}, {"HUBSPOT_API_URL", c.HubSpotAPIURL}, {"PIPEDRIVE_API_URL", c.PipedriveAPIURL},
		{"TIKTOK_API_URL", c.TikTokAPIURL}, {"PINTEREST_API_URL", c.PinterestAPIURL},
		{"GOOGLE_DATAMANAGER_URL", c.GoogleAPIURL}, {"GOOGLE_TOKEN_URL", c.GoogleTokenURL},
	} {
		if !httpURL(u.value) {
			return fmt.Errorf("config: %s must be an http(s) URL", u.name)
		}
	}
	if _, err := PublicURL(c.PublicURL); err != nil {
		return fmt.Errorf("config: LEADSIGNAL_PUBLIC_URL: %w", err)
	}
	if c.ClientIPHeader != "" && !headerNameRE.MatchString(c.ClientIPHeader) {
		return fmt.Errorf("config: LEADSIGNAL_CLIENT_IP_HEADER %q must be a header name like X-Real-IP", c.ClientIPHeader)
	}
	if c.SessionIdle < time.Minute {
		return errors.New("config: LEADSIGNAL_SESSION_IDLE must be at least 1m")
	}
	if c.SessionMax < c.SessionIdle {
		return errors.New("config: LEADSIGNAL_SESSION_MAX must not be shorter than LEADSIGNAL_SESSION_IDLE")
	}
	if !apiVersionRE.MatchString(c.MetaAPIVersion) {
		return fmt.Errorf("config: META_API_VERSION %q must look like v24.0", c.MetaAPIVersion)
	}
	return nil
}

// httpURL reports whether s is an absolute http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Postgres reports whether the configuration names a Postgres database.
func (c Config) Postgres() bool { return c.DatabaseURL != "" }

// SQLitePath is the embedded database file.
func (c Config) SQLitePath() string { return filepath.Join(c.DataDir, "leadsignal.db") }

// DatabaseHost names the database for error messages without its password.
func (c Config) DatabaseHost() string {
	if !c.Postgres() {
		return c.SQLitePath()
	}
	u, err := url.Parse(c.DatabaseURL)
	if err != nil {
		return "DATABASE_URL"
	}
	return u.Host
}

// EnsureSecret fills in Secret when the environment gave none: it reads the
// secret kept in the data folder, or makes and keeps a new random one there
// (mode 0600), so restarts keep sessions and stored tokens readable.
func (c *Config) EnsureSecret() error {
	if c.Secret != "" {
		return nil
	}
	p := filepath.Join(c.DataDir, secretFile)
	b, err := os.ReadFile(p)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) < minSecretLen {
			return fmt.Errorf("config: %s is shorter than %d characters; delete it to make a new one", p, minSecretLen)
		}
		c.Secret = s
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("config: read secret: %w", err)
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("config: create data folder: %w", err)
	}
	// Write a whole file under a temporary name, then link it into place:
	// two processes starting together on an empty folder both end up with
	// the one secret that won, never a half-written file.
	s := rand.Text() + rand.Text()
	tmp, err := os.CreateTemp(c.DataDir, ".secret-*")
	if err != nil {
		return fmt.Errorf("config: write secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("config: write secret: %w", err)
	}
	if _, err := tmp.WriteString(s + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("config: write secret: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: write secret: %w", err)
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, os.ErrExist) {
			return c.EnsureSecret() // another process won: use its secret
		}
		return fmt.Errorf("config: write secret: %w", err)
	}
	c.Secret = s
	return nil
}

// Key derives a 32-byte key for one purpose ("session-hash", "token-aead",
// ...) from the secret, so that no two uses share key material.
func (c Config) Key(purpose string) []byte {
	k, err := hkdf.Key(sha256.New, []byte(c.Secret), nil, "leadsignal/"+purpose, 32)
	if err != nil {
		panic(err) // only for lengths sha256 cannot give
	}
	return k
}

// Fingerprint is a short, non-reversible label of the secret for logs.
func (c Config) Fingerprint() string {
	sum := sha256.Sum256([]byte(c.Secret))
	return hex.EncodeToString(sum[:4])
}

func or(v, def string) string {
	if v = strings.TrimSpace(v); v != "" {
		return v
	}
	return def
}
