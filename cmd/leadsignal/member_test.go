package main

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// leadsignal member add and remove do what an owner does on the Members
// page, with its checks: the user must exist, the role is one of four, and
// an account never loses its last owner.
func TestMember(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		d.mustRun(t, "correct horse battery\n", "user", "create", "--email", "ada@example.com")
		d.mustRun(t, "correct horse battery\n", "user", "create", "--email", "Sam@Example.com")
		d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme", "--owner", "ada@example.com")
		s := d.open(t)
		acme, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		sam, err := s.UserByEmail(ctx, "sam@example.com")
		if err != nil {
			t.Fatal(err)
		}
		role := func() models.Role {
			t.Helper()
			a, err := s.AccountForUser(ctx, sam.ID, acme.ID)
			if err != nil {
				return ""
			}
			return a.Role
		}

		r := d.mustRun(t, "", "member", "add", "--account", "acme", "--email", "sam@example.com", "--role", "sales")
		if got := role(); got != models.RoleSales {
			t.Errorf("after member add --role sales, role = %q; want sales", got)
		}
		if !strings.Contains(r.stdout, "sam@example.com is now sales of acme") {
			t.Errorf("member add stdout = %q; want who is now what", r.stdout)
		}
		r = d.mustRun(t, "", "member", "add", "--account", "acme", "--email", "sam@example.com", "--role", "sales")
		if !strings.Contains(r.stdout, "nothing changed") {
			t.Errorf("second member add stdout = %q; want nothing changed", r.stdout)
		}
		d.mustRun(t, "", "member", "add", "--account", "acme", "--email", "sam@example.com", "--role", " Viewer ")
		if got := role(); got != models.RoleViewer {
			t.Errorf("after member add --role viewer, role = %q; want viewer", got)
		}

		tests := []struct {
			name string
			args []string
			want []string
		}{
			{"unknown role", []string{"add", "--account", "acme", "--email", "sam@example.com", "--role", "admin"}, []string{`--role "admin"`, "owner, editor, sales or viewer"}},
			{"missing role", []string{"add", "--account", "acme", "--email", "sam@example.com"}, []string{"--account, --email and --role are required"}},
			{"unknown user", []string{"add", "--account", "acme", "--email", "nobody@example.com", "--role", "editor"}, []string{"no user has email nobody@example.com", "user create"}},
			{"unknown account", []string{"add", "--account", "nope", "--email", "sam@example.com", "--role", "editor"}, []string{`no account has slug "nope"`}},
			{"NUL in email", []string{"add", "--account", "acme", "--email", "sam\x00@example.com", "--role", "editor"}, []string{"valid email address"}},
			{"not an email", []string{"remove", "--account", "acme", "--email", "sam"}, []string{"valid email address"}},
			{"demote the last owner", []string{"add", "--account", "acme", "--email", "ada@example.com", "--role", "editor"}, []string{"only owner of acme"}},
			{"remove the last owner", []string{"remove", "--account", "acme", "--email", "ada@example.com"}, []string{"only owner of acme"}},
			{"neither add nor remove", []string{"list", "--account", "acme"}, []string{"say add or remove"}},
			{"stray argument", []string{"remove", "--account", "acme", "--email", "sam@example.com", "now"}, []string{`unexpected argument "now"`}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"member"}, tt.args...)
				r := d.run(t, "", args...)
				wantErr(t, r, args, tt.want...)
				if r.stdout != "" {
					t.Errorf("failed member command printed %q; want nothing on stdout", r.stdout)
				}
			})
		}
		if got := role(); got != models.RoleViewer {
			t.Errorf("after the refused commands, sam's role = %q; want viewer", got)
		}

		// With another owner, the first may step down and leave.
		d.mustRun(t, "", "member", "add", "--account", "acme", "--email", "sam@example.com", "--role", "owner")
		r = d.mustRun(t, "", "member", "remove", "--account", "acme", "--email", "ADA@example.com")
		if !strings.Contains(r.stdout, "ada@example.com was removed from acme") {
			t.Errorf("member remove stdout = %q", r.stdout)
		}
		ada, _ := s.UserByEmail(ctx, "ada@example.com")
		if _, err := s.AccountForUser(ctx, ada.ID, acme.ID); err == nil {
			t.Error("ada is still a member after member remove")
		}
		args := []string{"member", "remove", "--account", "acme", "--email", "ada@example.com"}
		wantErr(t, d.run(t, "", args...), args, "ada@example.com is not a member of acme")
	})
}
