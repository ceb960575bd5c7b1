package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

// runMember adds an existing user to an account with a role, changes a
// member's role, or removes a member: what an owner does on the Members
// page, for agencies that script onboarding. The checks are the page's:
// a known role, a valid email, never an account without an owner.
func runMember(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "remove") {
		return fmt.Errorf("member: say add or remove\n%s", usage)
	}
	cmd := "member " + args[0]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	slug := fs.String("account", "", "the account's slug")
	email := fs.String("email", "", "the user's login email (the user must exist)")
	role := ""
	if args[0] == "add" {
		fs.StringVar(&role, "role", "", "owner, editor, sales or viewer")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	*email = strings.TrimSpace(*email)
	role = strings.ToLower(strings.TrimSpace(role))
	if *slug == "" || *email == "" || (args[0] == "add" && role == "") {
		if args[0] == "add" {
			return errors.New("member add: --account, --email and --role are required")
		}
		return errors.New("member remove: --account and --email are required")
	}
	if msg := web.EmailProblem(*email); msg != "" {
		return fmt.Errorf("%s: --email %q: %s", cmd, *email, msg)
	}
	if args[0] == "add" && !models.Role(role).Valid() {
		return fmt.Errorf("member add: --role %q: say owner, editor, sales or viewer", role)
	}
	_, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := s.AccountBySlug(ctx, *slug)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: no account has slug %q", cmd, *slug)
	}
	if err != nil {
		return err
	}
	u, err := s.UserByEmail(ctx, *email)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: no user has email %s (create it with leadsignal user create)", cmd, *email)
	}
	if err != nil {
		return err
	}
	if args[0] == "add" {
		return addMember(ctx, s, e, a, u, models.Role(role))
	}
	return removeMember(ctx, s, e, a, u)
}

// addMember makes u a member of a with role r; a member already gets the
// role, unless that leaves the account without an owner.
func addMember(ctx context.Context, s *store.Store, e env, a models.Account, u models.User, r models.Role) error {
	before, err := s.AccountForUser(ctx, u.ID, a.ID)
	member := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if member && before.Role == r {
		fmt.Fprintf(e.stdout, "%s is already %s of %s; nothing changed\n", u.Email, r, a.Slug)
		return nil
	}
	err = s.SetMember(ctx, a.ID, u.ID, r)
	if errors.Is(err, store.ErrLastOwner) {
		return fmt.Errorf("member add: %s is the only owner of %s: make someone else owner first", u.Email, a.Slug)
	}
	if err != nil {
		return err
	}
	if member {
		fmt.Fprintf(e.stdout, "%s is now %s of %s (was %s)\n", u.Email, r, a.Slug, before.Role)
	} else {
		fmt.Fprintf(e.stdout, "%s is now %s of %s\n", u.Email, r, a.Slug)
	}
	if u.PasswordHash == "" {
		fmt.Fprintf(e.stderr, "%s has no password yet: an administrator makes them a set-password link under Users\n", u.Email)
	}
	return nil
}

// removeMember takes u out of a and ends u's sessions, unless u is its
// last owner.
func removeMember(ctx context.Context, s *store.Store, e env, a models.Account, u models.User) error {
	err := s.RemoveMember(ctx, a.ID, u.ID, "")
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("member remove: %s is not a member of %s", u.Email, a.Slug)
	case errors.Is(err, store.ErrLastOwner):
		return fmt.Errorf("member remove: %s is the only owner of %s: make someone else owner first", u.Email, a.Slug)
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stdout, "%s was removed from %s\n", u.Email, a.Slug)
	return nil
}
