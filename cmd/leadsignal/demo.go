package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/leadsignal/leadsignal/internal/demo"
)

// runDemo is `leadsignal demo`: it seeds the demo account on the
// configured database (progress on stderr), then serves exactly as serve
// does while the demo keeps capturing leads and moving deals. Once the
// server listens, stdout gets the URL and the demo login, and nothing
// else; serve's log goes to stderr.
func runDemo(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	every := fs.Duration("every", demo.Every, "how often the demo captures a new lead and moves deals")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *every <= 0 {
		return errors.New("demo: --every must be a positive duration, like 5s")
	}
	log := newLogger(e.stderr)
	cfg, s, err := open(ctx, e, log)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := demo.Seed(ctx, s, demo.Options{Progress: demo.NewBar(e.stderr, isTerminal(e.stderr)).Update})
	if err != nil {
		return err
	}
	if d.Seeded {
		fmt.Fprintf(e.stderr, "demo account %q made with %d leads and %d stage changes\n", d.Account.Name, d.Leads, d.Changes)
	} else {
		fmt.Fprintf(e.stderr, "demo account %q is there already: not seeding it again\n", d.Account.Name)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := e
	served.stdout = e.stderr
	served.ready = func(addr string) {
		fmt.Fprintf(e.stdout, "URL:      %s\nEmail:    %s\nPassword: %s\n", demoURL(cfg.Addr, addr), d.Login.Email, d.Login.Password)
		if e.ready != nil {
			e.ready(addr)
		}
	}
	var g errgroup.Group
	g.Go(func() error {
		defer cancel() // a server that stops stops the demo
		return serve(ctx, served)
	})
	g.Go(func() error { return d.Run(ctx, *every, log.With(slog.String("account", demo.Slug))) })
	return g.Wait()
}

// demoURL is the address to open for a server configured to listen on
// configured (LEADSIGNAL_ADDR) and listening on listening: the configured
// host, localhost when it names none or every interface, and the port it
// listens on.
func demoURL(configured, listening string) string {
	host, _, err := net.SplitHostPort(configured)
	if err != nil {
		host = ""
	}
	_, port, err := net.SplitHostPort(listening)
	if err != nil {
		return "http://" + listening
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
