package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/poll"
)

// A running serve takes a CRM's delivery at its connection's hook URL and
// its worker records the stage change on the lead: the hook, the inbox and
// the worker are wired as production runs them.
func TestServeTakesCRMDelivery(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme", "--country", "US")
	key := strings.TrimSpace(d.mustRun(t, "", "key", "create", "--account", "acme", "--name", "website").stdout)
	const secret = "zap-bearer-secret-1234"
	file := writeSetup(t, `{"account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "USD"},
		"crm_connections": [{"kind": "generic", "name": "Zapier", "secret_env": "ZAPIER_SECRET"}]}`)
	if r := d.runEnv(t, map[string]string{"ZAPIER_SECRET": secret}, "", "setup", "apply", "-f", file); r.err != nil {
		t.Fatalf("setup apply: %v\n%s", r.err, r.stderr)
	}
	var exported struct {
		CRM []struct {
			URL string `json:"url"`
		} `json:"crm_connections"`
	}
	if err := json.Unmarshal([]byte(d.mustRun(t, "", "setup", "export", "--account", "acme").stdout), &exported); err != nil || len(exported.CRM) != 1 {
		t.Fatalf("export: %v %+v", err, exported)
	}
	srv := startServe(t, d)
	post := func(path, auth, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+srv.addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", auth)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := post("/api/v1/leads", "Bearer "+key, `{"email": "jane@example.com"}`); status != http.StatusCreated {
		t.Fatalf("post lead = %d %s", status, body)
	}
	path := exported.CRM[0].URL // a path: no LEADSIGNAL_PUBLIC_URL
	if status, body := post(path, "Bearer "+secret, `{"email": "Jane@Example.com", "stage": "qualified"}`); status != http.StatusOK ||
		!strings.Contains(body, `"stored":1`) {
		t.Fatalf("post to the hook = %d %s; want 200 with 1 stored", status, body)
	}
	s := d.open(t)
	poll.Until(t, 15*time.Second, func() error {
		l, err := s.Lead(t.Context(), 1, 1)
		if err == nil && l.Stage != "qualified" {
			err = fmt.Errorf("lead stage = %q; want qualified (the worker in serve records the delivery)", l.Stage)
		}
		return err
	})
}
