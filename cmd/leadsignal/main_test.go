package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

const testPassword = "correct horse battery"

// syncBuffer is a bytes.Buffer that the server's goroutines may write
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// db is one database the commands run against, as its environment.
type db struct {
	vars map[string]string
	opts store.Options
}

// sqliteDB is the default: the embedded SQLite file in a fresh data folder.
func sqliteDB(t *testing.T) db {
	t.Helper()
	dir := t.TempDir()
	return db{
		vars: map[string]string{"LEADSIGNAL_DATA": dir},
		opts: store.Options{SQLitePath: filepath.Join(dir, "leadsignal.db")},
	}
}

// postgresDB is a private, empty database on TEST_DATABASE_URL's server,
// given as DATABASE_URL; skipped without TEST_DATABASE_URL (failed under
// CI=true).
func postgresDB(t *testing.T) db {
	t.Helper()
	url := storetest.PostgresURL(t)
	return db{
		vars: map[string]string{"DATABASE_URL": url, "LEADSIGNAL_DATA": t.TempDir()},
		opts: store.Options{PostgresURL: url},
	}
}

// eachDB runs fn once on SQLite and once on Postgres.
func eachDB(t *testing.T, fn func(t *testing.T, d db)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteDB(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresDB(t)) })
}

// result is what one run of the command left behind.
type result struct {
	stdout, stderr string
	err            error
}

// run runs the command line args with stdin and the database's env vars
// plus extra ones ("KEY=value").
func (d db) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return d.runEnv(t, nil, stdin, args...)
}

func (d db) runEnv(t *testing.T, extra map[string]string, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr syncBuffer
	err := run(t.Context(), args, env{
		getenv: lookup(d.vars, extra),
		stdin:  strings.NewReader(stdin),
		stdout: &stdout,
		stderr: &stderr,
	})
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// lookup is a getenv over maps; later maps win.
func lookup(ms ...map[string]string) func(string) string {
	return func(k string) string {
		v := ""
		for _, m := range ms {
			if s, ok := m[k]; ok {
				v = s
			}
		}
		return v
	}
}

// open opens the command's database to look at what it did.
func (d db) open(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), d.opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustRun fails the test when the command fails.
func (d db) mustRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := d.run(t, stdin, args...)
	if r.err != nil {
		t.Fatalf("leadsignal %s: %v\nstderr: %s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r
}

// wantErr fails the test unless the command failed with an error that
// contains every one of parts.
func wantErr(t *testing.T, r result, args []string, parts ...string) {
	t.Helper()
	cmd := "leadsignal " + strings.Join(args, " ")
	if r.err == nil {
		t.Fatalf("%s = nil error; want one containing %q\nstdout: %s", cmd, parts, r.stdout)
	}
	for _, p := range parts {
		if !strings.Contains(r.err.Error(), p) {
			t.Errorf("%s error = %q; want it to contain %q", cmd, r.err, p)
		}
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		r := d.mustRun(t, "", "migrate")
		if !strings.Contains(r.stdout, "database is up to date") {
			t.Errorf("migrate stdout = %q; want it to say the database is up to date", r.stdout)
		}
		if !strings.Contains(r.stderr, "0001_init") {
			t.Errorf("first migrate logged %q; want the applied step 0001_init", r.stderr)
		}

		r = d.mustRun(t, "", "migrate")
		if !strings.Contains(r.stdout, "database is up to date") {
			t.Errorf("second migrate stdout = %q; want it to say the database is up to date", r.stdout)
		}
		if strings.Contains(r.stderr, "migrated") {
			t.Errorf("second migrate logged %q; want no steps applied", r.stderr)
		}
	})
}

func TestUserCreate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		r := d.mustRun(t, testPassword+"\n", "user", "create", "--email", "a@example.com", "--admin")
		if !strings.Contains(r.stdout, "a@example.com") || !strings.Contains(r.stdout, "admin: true") {
			t.Errorf("user create stdout = %q; want the new admin a@example.com", r.stdout)
		}
		// CRLF from a Windows-made file, mixed-case email, no --admin.
		d.mustRun(t, testPassword+"\r\n", "user", "create", "--email", "  B@Example.COM ")

		s := d.open(t)
		a, err := s.UserByEmail(ctx, "a@example.com")
		if err != nil {
			t.Fatalf("UserByEmail(a@example.com): %v", err)
		}
		if !a.IsAdmin {
			t.Errorf("a@example.com IsAdmin = false; want true")
		}
		if !password.Check(a.PasswordHash, testPassword) {
			t.Errorf("a@example.com's password does not check against the one given on stdin")
		}
		b, err := s.UserByEmail(ctx, "b@example.com")
		if err != nil {
			t.Fatalf("UserByEmail(b@example.com): %v", err)
		}
		if b.IsAdmin || b.Email != "b@example.com" {
			t.Errorf("second user = %q admin %v; want b@example.com, not admin", b.Email, b.IsAdmin)
		}
		if !password.Check(b.PasswordHash, testPassword) {
			t.Errorf("b@example.com's password (ended by CRLF) does not check")
		}
	})
}

func TestUserCreateFails(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		args := []string{"user", "create", "--email", "a@example.com", "--admin"}
		d.mustRun(t, testPassword+"\n", args...)
		wantErr(t, d.run(t, testPassword+"\n", args...), args, "a@example.com", "already exists")

		tests := []struct {
			name  string
			stdin string
			args  []string
			want  []string
		}{
			{"short password", "short\n", []string{"user", "create", "--email", "c@example.com"}, []string{"password", "at least 10 characters"}},
			{"no password", "", []string{"user", "create", "--email", "c@example.com"}, []string{"password on stdin"}},
			{"missing --email", testPassword + "\n", []string{"user", "create", "--admin"}, []string{"--email is required"}},
			{"unknown flag", testPassword + "\n", []string{"user", "create", "--email", "c@example.com", "--root"}, []string{"root"}},
			{"no subcommand", "", []string{"user"}, []string{"unknown command", "usage"}},
			{"unknown subcommand", "", []string{"user", "delete"}, []string{"unknown command", "usage"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantErr(t, d.run(t, tt.stdin, tt.args...), tt.args, tt.want...)
			})
		}

		if _, err := d.open(t).UserByEmail(t.Context(), "c@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail(c@example.com) err = %v; want ErrNotFound after failed creates", err)
		}
	})
}

func TestAccountCreate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		d.mustRun(t, testPassword+"\n", "user", "create", "--email", "a@example.com", "--admin")
		r := d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme", "--country", "United States", "--owner", "a@example.com")
		if !strings.Contains(r.stdout, "acme") {
			t.Errorf("account create stdout = %q; want the new account acme", r.stdout)
		}
		d.mustRun(t, "", "account", "create", "--name", "  Bare  ", "--slug", "bare-2")

		s := d.open(t)
		u, err := s.UserByEmail(ctx, "a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatalf("AccountBySlug(acme): %v", err)
		}
		want := models.Account{ID: a.ID, Slug: "acme", Name: "Acme", Timezone: "UTC", DefaultCountry: "US", Currency: "USD"}
		got := a
		got.CreatedAt, got.UpdatedAt = time.Time{}, time.Time{}
		if got != want {
			t.Errorf("account acme = %+v; want %+v", got, want)
		}
		access, err := s.AccountForUser(ctx, u.ID, a.ID)
		if err != nil {
			t.Fatalf("AccountForUser(owner, acme): %v", err)
		}
		if access.Role != models.RoleOwner {
			t.Errorf("a@example.com's role in acme = %q; want %q", access.Role, models.RoleOwner)
		}

		bare, err := s.AccountBySlug(ctx, "bare-2")
		if err != nil {
			t.Fatalf("AccountBySlug(bare-2): %v", err)
		}
		if bare.Name != "Bare" || bare.DefaultCountry != "" {
			t.Errorf("account bare-2 = name %q, country %q; want Bare, no country", bare.Name, bare.DefaultCountry)
		}
		if _, err := s.AccountForUser(ctx, u.ID, bare.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountForUser(a, bare-2) err = %v; want ErrNotFound: no --owner, no member", err)
		}
	})
}

func TestAccountCreateFails(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		d.mustRun(t, testPassword+"\n", "user", "create", "--email", "a@example.com")
		d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme")

		tests := []struct {
			name string
			args []string
			want []string
		}{
			{"duplicate slug", []string{"--name", "Acme Two", "--slug", "acme"}, []string{`slug "acme" is taken`}},
			{"bad slug", []string{"--name", "Beta", "--slug", "Beta Corp"}, []string{"--slug", "lowercase letters"}},
			{"one-letter slug", []string{"--name", "Beta", "--slug", "b"}, []string{"--slug"}},
			{"unknown owner", []string{"--name", "Beta", "--slug", "beta", "--owner", "nobody@example.com"}, []string{"no user has email nobody@example.com"}},
			{"unknown country", []string{"--name", "Beta", "--slug", "beta", "--country", "Atlantis"}, []string{`--country "Atlantis"`, "ISO 3166-1"}},
			{"missing --name", []string{"--slug", "beta"}, []string{"--name and --slug are required"}},
			{"blank --name", []string{"--name", "  ", "--slug", "beta"}, []string{"--name and --slug are required"}},
			{"missing --slug", []string{"--name", "Beta"}, []string{"--name and --slug are required"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"account", "create"}, tt.args...)
				r := d.run(t, "", args...)
				wantErr(t, r, args, tt.want...)
				if r.err != nil && strings.Contains(r.err.Error(), "\n") {
					t.Errorf("error = %q; want one line", r.err)
				}
			})
		}

		s := d.open(t)
		if _, err := s.AccountBySlug(t.Context(), "beta"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountBySlug(beta) err = %v; want ErrNotFound after failed creates", err)
		}
		if a, err := s.AccountBySlug(t.Context(), "acme"); err != nil || a.Name != "Acme" {
			t.Errorf("account acme = %+v, %v; want it unchanged by the duplicate", a, err)
		}
	})
}

func TestKeyCreate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme")
		r := d.mustRun(t, "", "key", "create", "--account", "acme", "--name", " website ")

		// Only the key on stdout, so that scripts can capture it.
		secret := strings.TrimSuffix(r.stdout, "\n")
		if !strings.HasPrefix(secret, "lsk_") || strings.ContainsAny(secret, " \n") {
			t.Fatalf("key create stdout = %q; want only the new lsk_ key", r.stdout)
		}
		if !strings.Contains(r.stderr, "only this once") {
			t.Errorf("key create stderr = %q; want the warning that the key is shown once", r.stderr)
		}

		s := d.open(t)
		acme, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		owner, _, err := s.IngestKeyAccount(ctx, secret, time.Now())
		if err != nil {
			t.Fatalf("IngestKeyAccount(printed key): %v", err)
		}
		ks, err := s.IngestKeys(ctx, acme.ID)
		if err != nil || len(ks) != 1 {
			t.Fatalf("IngestKeys = %v, %v; want the one key", ks, err)
		}
		k := ks[0]
		if owner.ID != acme.ID || k.AccountID != acme.ID || k.Name != "website" {
			t.Errorf("key = account %d, name %q; want account %d, name website", k.AccountID, k.Name, acme.ID)
		}
		if strings.Contains(k.KeyHash, secret) {
			t.Error("the key is stored in the clear")
		}

		second := strings.TrimSpace(d.mustRun(t, "", "key", "create", "--account", "acme", "--name", "website").stdout)
		if second == secret {
			t.Error("two key creates printed the same key")
		}

		tests := []struct {
			name string
			args []string
			want []string
		}{
			{"unknown account", []string{"--account", "nope", "--name", "website"}, []string{`no account has slug "nope"`}},
			{"missing --account", []string{"--name", "website"}, []string{"--account and --name are required"}},
			{"blank --name", []string{"--account", "acme", "--name", " "}, []string{"--account and --name are required"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"key", "create"}, tt.args...)
				r := d.run(t, "", args...)
				wantErr(t, r, args, tt.want...)
				if r.stdout != "" {
					t.Errorf("failed key create printed %q; want nothing on stdout", r.stdout)
				}
			})
		}
		if ks, err := s.IngestKeys(ctx, acme.ID); err != nil || len(ks) != 2 {
			t.Errorf("IngestKeys(acme) = %d keys, %v; want 2", len(ks), err)
		}
	})
}

// key create --site prints a public site key allowed from its origins,
// read as browsers send them; a site key needs an origin, an ingest key
// takes none, and a bad origin is refused before anything is made.
func TestSiteKeyCreate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme")
		r := d.mustRun(t, "", "key", "create", "--account", "acme", "--name", "Website", "--site",
			"--origin", "https://www.example.com/contact", "--origin", "HTTPS://EXAMPLE.COM", "--origin", "https://www.example.com")
		key := strings.TrimSuffix(r.stdout, "\n")
		if !strings.HasPrefix(key, "pk_") || strings.ContainsAny(key, " \n") {
			t.Fatalf("stdout = %q; want only the new pk_ key", r.stdout)
		}
		s := d.open(t)
		acc, k, err := s.SiteKeyAccount(ctx, key)
		if err != nil || acc.Slug != "acme" || k.Name != "Website" || len(k.Origins) != 2 {
			t.Fatalf("site key = %s, %+v, %v; want acme's Website with 2 origins", acc.Slug, k, err)
		}
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--site"}, "needs at least one --origin"},
			{[]string{"--origin", "https://www.example.com"}, "--origin is for --site keys"},
			{[]string{"--site", "--origin", "javascript:alert(1)"}, "an origin is http:// or https://"},
			{[]string{"--site", "--origin", "https://user:pw@example.com"}, "scheme and host only"},
		} {
			args := append([]string{"key", "create", "--account", "acme", "--name", "Other"}, tt.args...)
			r := d.run(t, "", args...)
			wantErr(t, r, args, tt.want)
			if r.stdout != "" {
				t.Errorf("%v printed %q", tt.args, r.stdout)
			}
		}
		if ks, _ := s.SiteKeys(ctx, acc.ID); len(ks) != 1 {
			t.Errorf("%d site keys; want the one", len(ks))
		}
	})
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	for _, args := range [][]string{{"frobnicate"}, {"account"}, {"account", "delete"}, {"key"}, {"key", "list"}} {
		r := d.run(t, "", args...)
		wantErr(t, r, args, "unknown command", "usage:")
	}
	r := d.run(t, "", "frobnicate")
	wantErr(t, r, []string{"frobnicate"}, `"frobnicate"`)

	r = d.mustRun(t, "", "help")
	if !strings.Contains(r.stdout, "usage:") || !strings.Contains(r.stdout, "account create") {
		t.Errorf("help stdout = %q; want the usage", r.stdout)
	}
}

// server is a `leadsignal serve` running in the background.
type server struct {
	addr   string
	stop   context.CancelFunc
	done   chan struct{} // closed when run has returned
	err    error         // run's result, set before done closes
	stdout *syncBuffer
}

// wait returns run's result once it has returned, or fails the test when
// that takes longer than timeout.
func (s *server) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(timeout):
		t.Fatalf("run did not return within %v", timeout)
		return nil
	}
}

// startServe starts `leadsignal serve` (or `leadsignal` alone) on a free
// port and returns once it accepts connections. It is stopped when the test
// ends.
func startServe(t *testing.T, d db, args ...string) *server {
	t.Helper()
	return startServeTo(t, d, io.Discard, args...)
}

// startServeTo is startServe with the command's stderr.
func startServeTo(t *testing.T, d db, stderr io.Writer, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	s := &server{stop: cancel, done: make(chan struct{}), stdout: &syncBuffer{}}
	e := env{
		getenv: lookup(d.vars, map[string]string{"LEADSIGNAL_ADDR": "127.0.0.1:0"}),
		stdin:  strings.NewReader(""),
		stdout: s.stdout,
		stderr: stderr,
		ready:  func(addr string) { ready <- addr },
	}
	go func() {
		defer close(s.done)
		s.err = run(ctx, args, e)
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	select {
	case s.addr = <-ready:
	case <-s.done:
		t.Fatalf("serve ended before it was ready: %v\nstdout: %s", s.err, s.stdout)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve not ready after 30s\nstdout: %s", s.stdout)
	}
	return s
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return res.StatusCode, res.Header, string(body)
}

func TestServe(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve"}, nil} {
		name := "serve"
		if args == nil {
			name = "no command"
		}
		t.Run(name, func(t *testing.T) {
			d := sqliteDB(t)
			dataDir := d.vars["LEADSIGNAL_DATA"]
			srv := startServe(t, d, args...)
			addr := srv.addr

			status, _, body := get(t, "http://"+addr+"/healthz")
			if status != http.StatusOK || !strings.Contains(body, "ok") {
				t.Errorf("GET /healthz = %d %q; want 200 ok", status, body)
			}
			status, _, body = get(t, "http://"+addr+"/metrics")
			if status != http.StatusOK || !strings.Contains(body, "leadsignal_events_queue") || !strings.Contains(body, "go_goroutines") ||
				!strings.Contains(body, `leadsignal_crm_deliveries_waiting{waiting_for="mapping"} 0`) {
				t.Errorf("GET /metrics = %d; want the outbox, CRM inbox and runtime metrics", status)
			}
			// A fresh install sends its first visitor to the setup page.
			status, header, _ := get(t, "http://"+addr+"/")
			if status != http.StatusSeeOther || header.Get("Location") != "/setup" {
				t.Errorf("GET / = %d to %q; want 303 to /setup", status, header.Get("Location"))
			}
			status, _, body = get(t, "http://"+addr+"/setup")
			if status != http.StatusOK || !strings.Contains(body, "<form") {
				t.Errorf("GET /setup = %d; want 200 with the setup form", status)
			}

			// Without LEADSIGNAL_SECRET the secret is made and kept in the
			// data folder, readable by its owner only.
			fi, err := os.Stat(filepath.Join(dataDir, "secret"))
			if err != nil {
				t.Errorf("secret file: %v", err)
			} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
				t.Errorf("secret file mode = %v; want 0600", fi.Mode().Perm())
			}
			if _, err := os.Stat(filepath.Join(dataDir, "leadsignal.db")); err != nil {
				t.Errorf("SQLite file: %v", err)
			}

			srv.stop()
			if err := srv.wait(t, 5*time.Second); err != nil {
				t.Errorf("run after cancel = %v; want nil (graceful shutdown)", err)
			}
			for _, want := range []string{`"serving"`, `"shutting down"`} {
				if !strings.Contains(srv.stdout.String(), want) {
					t.Errorf("serve log lacks %s:\n%s", want, srv.stdout)
				}
			}
		})
	}
}

// TestServeCapturesLead is the quick start end to end: an account and an
// ingest key made on the command line, a lead posted to the running server.
func TestServeCapturesLead(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme", "--country", "US")
	key := strings.TrimSpace(d.mustRun(t, "", "key", "create", "--account", "acme", "--name", "website").stdout)
	srv := startServe(t, d)

	post := func(auth string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+srv.addr+"/api/v1/leads",
			strings.NewReader(`{"email": "Jane.Doe@Example.com", "first_name": "Jane"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST /api/v1/leads: %v", err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if status, body := post("Bearer " + key); status != http.StatusCreated || !strings.Contains(body, `"lead_id"`) {
		t.Errorf("POST /api/v1/leads with the new key = %d %s; want 201 with a lead_id", status, body)
	}
	if status, body := post("Bearer lsk_wrong"); status != http.StatusUnauthorized {
		t.Errorf("POST /api/v1/leads with a wrong key = %d %s; want 401", status, body)
	}
}

func TestServeKeepsSecretAcrossRestarts(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	p := filepath.Join(d.vars["LEADSIGNAL_DATA"], "secret")

	srv := startServe(t, d)
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("secret after first start: %v", err)
	}
	srv.stop()
	if err := srv.wait(t, 5*time.Second); err != nil {
		t.Fatalf("first run: %v", err)
	}

	srv = startServe(t, d)
	second, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("secret after restart: %v", err)
	}
	srv.stop()
	if err := srv.wait(t, 5*time.Second); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Error("the kept secret changed across restarts")
	}
}

func TestServeWithEnvSecretWritesNoFile(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	d.vars["LEADSIGNAL_SECRET"] = strings.Repeat("x", 32)
	srv := startServe(t, d)
	if status, _, _ := get(t, "http://"+srv.addr+"/healthz"); status != http.StatusOK {
		t.Errorf("GET /healthz = %d; want 200", status)
	}
	if _, err := os.Stat(filepath.Join(d.vars["LEADSIGNAL_DATA"], "secret")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("secret file stat err = %v; want none written when LEADSIGNAL_SECRET is set", err)
	}
}

func TestServeAddrInUse(t *testing.T) {
	t.Parallel()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := sqliteDB(t)
	r := d.runEnv(t, map[string]string{"LEADSIGNAL_ADDR": ln.Addr().String()}, "", "serve")
	wantErr(t, r, []string{"serve"}, ln.Addr().String(), "LEADSIGNAL_ADDR")
}

func TestUnreachableDatabase(t *testing.T) {
	t.Parallel()
	d := db{vars: map[string]string{
		"DATABASE_URL":    "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2",
		"LEADSIGNAL_DATA": t.TempDir(),
		"LEADSIGNAL_ADDR": "127.0.0.1:0",
	}}
	tests := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"serve"}},
		{"", []string{"migrate"}},
		{testPassword + "\n", []string{"user", "create", "--email", "a@example.com"}},
		{"", []string{"account", "create", "--name", "Acme", "--slug", "acme"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:min(2, len(tt.args))], " "), func(t *testing.T) {
			start := time.Now()
			r := d.run(t, tt.stdin, tt.args...)
			wantErr(t, r, tt.args, "127.0.0.1:1", "DATABASE_URL")
			if r.err == nil {
				return
			}
			msg := r.err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines; want one line:\n%s", msg)
			}
			if strings.Contains(msg, "secret") {
				t.Errorf("error = %q; want it without the password", msg)
			}
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("failing took %v; want the connect timeout to cut it short", elapsed)
			}
		})
	}
}

func TestBadConfigurationFails(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"short secret", map[string]string{"LEADSIGNAL_SECRET": "short"}, []string{"LEADSIGNAL_SECRET"}},
		{"not a postgres URL", map[string]string{"DATABASE_URL": "mysql://u:secret@db/x"}, []string{"DATABASE_URL"}},
		{"bad graph URL", map[string]string{"META_GRAPH_URL": "graph.facebook.com"}, []string{"META_GRAPH_URL"}},
		{"data folder is a file", map[string]string{"LEADSIGNAL_DATA": filepath.Join(file, "data")}, []string{"cannot open the database file", "not-a-folder"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sqliteDB(t)
			for _, cmd := range [][]string{{"serve"}, {"migrate"}} {
				r := d.runEnv(t, tt.vars, "", cmd...)
				wantErr(t, r, cmd, tt.want...)
				if r.err != nil && strings.Contains(r.err.Error(), "secret@") {
					t.Errorf("error = %q; want it without the password", r.err)
				}
			}
		})
	}
}
