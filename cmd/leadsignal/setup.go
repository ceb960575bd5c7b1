package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/setup"
	"github.com/leadsignal/leadsignal/store"
)

// runSetup runs leadsignal setup apply|export.
func runSetup(ctx context.Context, sub string, args []string, e env) error {
	switch sub {
	case "apply":
		return setupApply(ctx, args, e)
	case "export":
		return setupExport(ctx, args, e)
	}
	return fmt.Errorf("setup: unknown command %q; say apply or export\n%s", sub, usage)
}

// setupApply makes the database match a setup file, or with --dry-run
// says what it would change.
func setupApply(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("setup apply", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	file := fs.String("f", "", "the setup file (JSON); - reads stdin")
	dryRun := fs.Bool("dry-run", false, "validate and print the changes, changing nothing")
	owner := fs.String("owner", "", "email of an existing user to own the account, when the apply creates it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || fs.NArg() > 0 {
		return errors.New("setup apply: give the file with -f FILE, e.g. leadsignal setup apply -f acme.json")
	}
	f, err := readSetupFile(*file, e)
	if err != nil {
		return err
	}
	// Check the file before touching the database, so a broken file
	// fails fast and the same way everywhere.
	if err := setupProblems(e, f.Validate(e.getenv)); err != nil {
		return err
	}

	cfg, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	// The same key serve uses, so the tokens sealed here open there.
	if err := cfg.EnsureSecret(); err != nil {
		return err
	}
	box, err := seal.New(cfg.Key("token-aead"))
	if err != nil {
		return err
	}
	do := setup.Apply
	if *dryRun {
		do = setup.Plan
	}
	ownerID, err := ownerByEmail(ctx, s, "setup apply", *owner)
	if err != nil {
		return err
	}
	report, err := do(ctx, s, box, e.getenv, f, setup.Options{OwnerID: ownerID})
	if inv, ok := errors.AsType[*setup.Invalid](err); ok {
		return setupProblems(e, inv.Problems)
	}
	if err != nil {
		return err
	}
	for _, c := range report.Changes {
		fmt.Fprintln(e.stdout, c)
	}
	for _, n := range report.Notes {
		fmt.Fprintln(e.stdout, "note:", n)
	}
	for _, w := range report.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	switch n := len(report.Changes); {
	case n == 0:
		fmt.Fprintf(e.stdout, "no changes: the database already matches %s\n", *file)
	case *dryRun:
		fmt.Fprintf(e.stdout, "%s to make; dry run, nothing was changed\n", count(n, "change"))
	default:
		fmt.Fprintln(e.stdout, count(n, "change"))
	}
	return nil
}

// readSetupFile decodes the file, printing its problems.
func readSetupFile(name string, e env) (setup.File, error) {
	r := e.stdin
	if name != "-" {
		fh, err := os.Open(name)
		if err != nil {
			return setup.File{}, fmt.Errorf("setup apply: %w", err)
		}
		defer fh.Close()
		r = fh
	}
	f, problems := setup.Decode(r)
	return f, setupProblems(e, problems)
}

// setupProblems prints each problem on its own line to stderr and
// returns the error that ends the command, or nil when there are none.
func setupProblems(e env, problems []setup.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		fmt.Fprintln(e.stderr, p)
	}
	return fmt.Errorf("setup file has %s; nothing was changed", count(len(problems), "problem"))
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// setupExport prints an account's setup as indented JSON.
func setupExport(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("setup export", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	slug := fs.String("account", "", "the account's slug")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() > 0 {
		return errors.New("setup export: give the account with --account SLUG")
	}
	cfg, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	base, err := s.PublicURL(ctx, cfg.PublicURL)
	if err != nil {
		return err
	}
	f, notes, err := setup.Export(ctx, s, *slug, base)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("setup export: no account has slug %q", *slug)
	}
	if err != nil {
		return err
	}
	// Only the JSON on stdout, so it can be redirected to a file.
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	return nil
}
