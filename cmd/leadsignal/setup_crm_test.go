package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// setup apply reads a CRM connection's secret from the variable the file
// names, refusing the file while it is unset, and setup export writes the
// connection's hook URL on LEADSIGNAL_PUBLIC_URL, never the secret.
func TestSetupCRMConnections(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		const secret = "zap-signing-secret-7777"
		file := writeSetup(t, `{"account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"},
			"crm_connections": [{"kind": "generic", "name": "Zapier", "secret_env": "ZAPIER_SECRET"}]}`)

		r := d.run(t, "", "setup", "apply", "-f", file)
		wantErr(t, r, []string{"setup", "apply"}, "nothing was changed")
		if !strings.Contains(r.stderr, "crm_connections[0].secret_env: environment variable ZAPIER_SECRET is not set") {
			t.Errorf("setup apply without the variable: stderr = %q; want the variable named", r.stderr)
		}

		vars := map[string]string{"ZAPIER_SECRET": secret}
		r = d.runEnv(t, vars, "", "setup", "apply", "-f", file)
		if r.err != nil {
			t.Fatalf("setup apply: %v\nstderr: %s", r.err, r.stderr)
		}
		if !strings.Contains(r.stdout, `crm_connections[0]: created "Zapier" (Generic webhook)`) || strings.Contains(r.stdout, secret) {
			t.Errorf("setup apply stdout = %q; want the connection created, without its secret", r.stdout)
		}

		ex := d.runEnv(t, map[string]string{"LEADSIGNAL_PUBLIC_URL": "https://leads.example.com"}, "", "setup", "export", "--account", "acme")
		if ex.err != nil {
			t.Fatalf("setup export: %v\nstderr: %s", ex.err, ex.stderr)
		}
		var got struct {
			CRM []struct {
				SecretEnv string `json:"secret_env"`
				URL       string `json:"url"`
			} `json:"crm_connections"`
		}
		if err := json.Unmarshal([]byte(ex.stdout), &got); err != nil {
			t.Fatalf("setup export printed invalid JSON: %v\n%s", err, ex.stdout)
		}
		if len(got.CRM) != 1 || got.CRM[0].SecretEnv != "ZAPIER_SECRET" || !strings.HasPrefix(got.CRM[0].URL, "https://leads.example.com/hooks/generic/") {
			t.Errorf("exported crm_connections = %+v; want Zapier with its absolute hook URL", got.CRM)
		}
		if strings.Contains(ex.stdout, secret) {
			t.Errorf("setup export shows the secret:\n%s", ex.stdout)
		}
	})
}
