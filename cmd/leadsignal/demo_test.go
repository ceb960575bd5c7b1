package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/demo"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/store"
)

// runDemoCmd runs `leadsignal demo --every 20ms` on d until it serves and
// has ticked a few times, checks the server answers, stops it, and returns
// what it printed.
func runDemoCmd(t *testing.T, d db) result {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--every", "20ms"}, env{
			getenv: lookup(d.vars, map[string]string{"LEADSIGNAL_ADDR": "127.0.0.1:0"}),
			stdin:  strings.NewReader(""),
			stdout: &stdout,
			stderr: &stderr,
			ready:  func(addr string) { ready <- addr },
		})
	}()
	select {
	case addr := <-ready:
		if status, _, _ := get(t, "http://"+addr+"/healthz"); status != http.StatusOK {
			t.Errorf("GET /healthz of the demo = %d; want 200", status)
		}
		if !strings.Contains(stdout.String(), "URL:      http://"+addr+"\n") {
			t.Errorf("demo stdout = %q; want the URL http://%s", stdout.String(), addr)
		}
	case err := <-done:
		t.Fatalf("demo ended before it served: %v\nstderr: %s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("demo not serving after 60s\nstderr: %s", stderr.String())
	}
	poll.Until(t, 10*time.Second, func() error {
		if n := strings.Count(stderr.String(), "demo: new lead"); n < 2 {
			return fmt.Errorf("the demo captured %d leads; want 2\nstderr: %s", n, stderr.String())
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
	case <-time.After(15 * time.Second):
		t.Fatalf("demo did not stop within 15s of its context's end")
		return result{}
	}
}

// demoLogin reads the email and password a demo run printed.
func demoLogin(t *testing.T, stdout string) (email, pw string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "URL:") {
		t.Fatalf("demo stdout = %q; want exactly the URL, the email and the password", stdout)
	}
	email, ok1 := strings.CutPrefix(lines[1], "Email:    ")
	pw, ok2 := strings.CutPrefix(lines[2], "Password: ")
	if !ok1 || !ok2 || email == "" || pw == "" {
		t.Fatalf("demo stdout = %q; want Email: and Password: lines", stdout)
	}
	return email, pw
}

func TestDemo(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		r := runDemoCmd(t, d)
		if r.err != nil {
			t.Fatalf("leadsignal demo = %v; want nil after its context ends\nstderr: %s", r.err, r.stderr)
		}
		email, pw := demoLogin(t, r.stdout)
		for _, want := range []string{"seeding demo leads", "made with", `"serving"`, "demo: new lead", `"shutting down"`} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("demo stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		s := d.open(t)
		u, err := s.UserByEmail(ctx, email)
		if err != nil {
			t.Fatalf("UserByEmail(%s): %v", email, err)
		}
		if !password.Check(u.PasswordHash, pw) {
			t.Errorf("the printed password does not sign %s in", email)
		}
		acc, err := s.AccountBySlug(ctx, demo.Slug)
		if err != nil {
			t.Fatalf("AccountBySlug(%s): %v", demo.Slug, err)
		}
		n, err := s.CountLeads(ctx, acc.ID, store.LeadFilter{}, 100000)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var seeded, changes int64
		if i := strings.Index(r.stderr, "demo account "); i < 0 {
			t.Errorf("demo stderr says nothing of the demo account:\n%s", r.stderr)
		} else if _, err := fmt.Sscanf(r.stderr[i:], "demo account %q made with %d leads and %d stage changes", &name, &seeded, &changes); err != nil {
			t.Errorf("demo stderr = %q; want what it seeded: %v", r.stderr[i:], err)
		}
		if seeded < 20*demo.Days || changes == 0 || n < seeded+2 {
			t.Errorf("demo seeded %d leads and %d stage changes, and has %d leads; want 20 to 40 a day for %d days, some changes, and two live leads more",
				seeded, changes, n, demo.Days)
		}

		// Again: no new seeding, a new password that signs in.
		again := runDemoCmd(t, d)
		if again.err != nil {
			t.Fatalf("second leadsignal demo = %v\nstderr: %s", again.err, again.stderr)
		}
		if !strings.Contains(again.stderr, "not seeding it again") || strings.Contains(again.stderr, "seeding demo leads") {
			t.Errorf("second demo stderr = %s; want it not to seed again", again.stderr)
		}
		email2, pw2 := demoLogin(t, again.stdout)
		u, _ = s.UserByEmail(ctx, email2)
		if email2 != email || pw2 == pw || !password.Check(u.PasswordHash, pw2) {
			t.Errorf("second demo login = %s (new password: %v, signs in: %v); want %s with a new password that signs in",
				email2, pw2 != pw, password.Check(u.PasswordHash, pw2), email)
		}
	})
}

func TestDemoURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ configured, listening, want string }{
		{":8080", "[::]:8080", "http://localhost:8080"},
		{"0.0.0.0:8080", "0.0.0.0:8080", "http://localhost:8080"},
		{"127.0.0.1:18080", "127.0.0.1:18080", "http://127.0.0.1:18080"},
		{"127.0.0.1:0", "127.0.0.1:40123", "http://127.0.0.1:40123"},
		{"demo.example:80", "192.0.2.1:80", "http://demo.example:80"},
		{"[::1]:8080", "[::1]:8080", "http://[::1]:8080"},
	} {
		if got := demoURL(tt.configured, tt.listening); got != tt.want {
			t.Errorf("demoURL(%q, %q) = %q; want %q", tt.configured, tt.listening, got, tt.want)
		}
	}
}
