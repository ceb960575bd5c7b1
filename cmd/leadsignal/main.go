// Command leadsignal serves the web UI, the ingest APIs and the dispatcher,
// and administers users and accounts from a shell.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/config"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/service"
	"github.com/leadsignal/leadsignal/internal/site"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

const usage = `usage:
  leadsignal [serve]                   web UI, APIs and dispatcher; migrates on start
  leadsignal demo [--every 5s]         seed a demo account, print its URL and login, serve while it
                                     keeps capturing leads and moving deals
  leadsignal migrate                   apply database migrations
  leadsignal user create --email E [--admin]     password read from stdin
  leadsignal account create --name N --slug S [--country CC] [--owner EMAIL]
  leadsignal key create --account SLUG --name N   prints a new ingest key once
  leadsignal key create --account SLUG --name N --site --origin URL [--origin URL]...
                                                  prints a new public site key for the site snippet
  leadsignal member add --account SLUG --email E --role owner|editor|sales|viewer
                                     give an existing user a role in an account
  leadsignal member remove --account SLUG --email E
                                     take a user out of an account (never its last owner)
  leadsignal setup apply -f FILE [--dry-run] [--owner EMAIL]
                                     create or update an account and its datasets to match a setup file
  leadsignal setup export --account SLUG   print an account's setup as JSON
  leadsignal stages upload --account SLUG -f FILE [--dates month_first|day_first] [--apply]
                                     preview a CSV file of stage changes; --apply records it
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], env{getenv: os.Getenv, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "leadsignal:", err)
		os.Exit(1)
	}
}

// env is the outside world of one run, replaced in tests.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// ready, when set, receives the listening address once serve accepts
	// connections.
	ready func(addr string)
}

func run(ctx context.Context, args []string, e env) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, e)
	case "demo":
		return runDemo(ctx, args, e)
	case "migrate":
		return migrate(ctx, e)
	case "user":
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("unknown command %q (usage: leadsignal help)", strings.Join(append([]string{cmd}, args...), " "))
		}
		return createUser(ctx, args[1:], e)
	case "account":
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("unknown command %q (usage: leadsignal help)", strings.Join(append([]string{cmd}, args...), " "))
		}
		return createAccount(ctx, args[1:], e)
	case "key":
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("unknown command %q (usage: leadsignal help)", strings.Join(append([]string{cmd}, args...), " "))
		}
		return createKey(ctx, args[1:], e)
	case "setup":
		if len(args) == 0 {
			return errors.New("setup: say apply or export; " + usage)
		}
		return runSetup(ctx, args[0], args[1:], e)
	case "stages":
		return runStages(ctx, args, e)
	case "member":
		return runMember(ctx, args, e)
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func newLogger(w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// open loads the configuration, connects and migrates.
func open(ctx context.Context, e env, log *slog.Logger) (config.Config, *store.Store, error) {
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return cfg, nil, err
	}
	s, err := store.Open(ctx, store.Options{PostgresURL: cfg.DatabaseURL, SQLitePath: cfg.SQLitePath()})
	if err != nil {
		if cfg.Postgres() {
			return cfg, nil, fmt.Errorf("cannot reach the database at %s (DATABASE_URL): %s", cfg.DatabaseHost(), oneLine(err))
		}
		return cfg, nil, fmt.Errorf("cannot open the database file %s: %s", cfg.SQLitePath(), oneLine(err))
	}
	applied, err := s.Migrate(ctx)
	if err != nil {
		s.Close()
		return cfg, nil, err
	}
	for _, name := range applied {
		log.Info("migrated", slog.String("step", name))
	}
	return cfg, s, nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

func migrate(ctx context.Context, e env) error {
	log := newLogger(e.stderr)
	_, s, err := open(ctx, e, log)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintln(e.stdout, "database is up to date")
	return nil
}

func serve(ctx context.Context, e env) error {
	log := newLogger(e.stdout)
	cfg, s, err := open(ctx, e, log)
	if err != nil {
		return err
	}
	defer s.Close()
	secretFromEnv := cfg.Secret != ""
	if err := cfg.EnsureSecret(); err != nil {
		return err
	}
	if cfg.Postgres() && !secretFromEnv {
		// Replicas on one database must share the secret: each would
		// otherwise make its own, and sessions and sealed tokens of one
		// replica would not open on another.
		log.Warn("LEADSIGNAL_SECRET is not set: using the secret kept in the data folder; give every replica the same LEADSIGNAL_SECRET",
			slog.String("data", cfg.DataDir))
	}

	box, err := seal.New(cfg.Key("token-aead"))
	if err != nil {
		return err
	}
	sender := &capi.Client{}
	platforms := platform.Senders(platform.URLs{TikTok: cfg.TikTokAPIURL, Pinterest: cfg.PinterestAPIURL,
		Google: cfg.GoogleAPIURL, GoogleToken: cfg.GoogleTokenURL})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// One cache of compiled rules for capture, the recorder and the
	// dispatcher, and one recorder for every way a stage change comes in.
	matchers := &decide.Matchers{}
	disp := dispatch.New(dispatch.Options{
		Store: s, Sender: sender, Platforms: platforms, Box: box, Log: log,
		GraphURL: cfg.MetaGraphURL, DefaultVersion: cfg.MetaAPIVersion,
		Metrics: dispatch.NewMetrics(reg, s), Matchers: matchers,
	})
	// The CRM worker and the CSV uploads record stage changes through this
	// one decider too.
	decider := decide.New(s, matchers, disp.Notify)
	uploads := stageupload.New(stageupload.Options{Store: s, Decider: decider, Log: log})
	crmsync.RegisterMetrics(reg, s)
	crmWorker := crmsync.New(crmsync.Options{
		Store: s, Decider: decider, Box: box, Log: log,
		HubSpotAPIURL: cfg.HubSpotAPIURL, PipedriveAPIURL: cfg.PipedriveAPIURL,
	})
	srv := &http.Server{
		Handler: web.New(web.Options{
			Store:           s,
			Log:             log,
			SessionHashKey:  cfg.Key("session-hash"),
			SessionBlockKey: cfg.Key("session-block"),
			SessionLimits:   sessionLimits(cfg),
			Box:             box,
			Sender:          sender,
			Platforms:       platforms,
			GraphURL:        cfg.MetaGraphURL,
			APIVersion:      cfg.MetaAPIVersion,
			Notify:          disp.Notify,
			Decider:         decider,
			Metrics:         promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
			Uploads:         uploads,
			ClientIPHeader:  cfg.ClientIPHeader,
			CRM: web.CRMOptions{
				HubSpotAPIURL: cfg.HubSpotAPIURL, PipedriveAPIURL: cfg.PipedriveAPIURL,
				PublicURL: cfg.PublicURL, Notify: crmWorker.Notify,
			},
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (LEADSIGNAL_ADDR): %w", cfg.Addr, err)
	}
	browse := demoURL(cfg.Addr, ln.Addr().String())
	log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("url", browse),
		slog.String("database", s.Dialect()), slog.String("secret_fingerprint", cfg.Fingerprint()))
	// A person who started serve in a terminal is told where to go in
	// words; a log collector reads the same address as the record's url,
	// and only log records.
	if isTerminal(e.stderr) {
		fmt.Fprintln(e.stderr, welcome(ctx, s, browse))
	}
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		// The dispatcher finishes or releases its batch in flight when
		// gctx ends, then returns.
		return disp.Run(gctx)
	})
	g.Go(func() error {
		// CSV uploads of stage changes: resumed when left running; each
		// stops after its chunk in flight when gctx ends.
		return uploads.Run(gctx)
	})
	g.Go(func() error {
		// CRM deliveries: the worker writes what became of its round in
		// flight, then returns.
		return crmWorker.Run(gctx)
	})
	// The database's chores: ended sessions, new tables' statistics, the
	// Overview's counts, the search index's pending rows, backfills.
	for _, l := range []*service.Loop{
		upkeep.Sessions(s, sessionLimits(cfg), log), upkeep.Stats(s, log), upkeep.Counts(s, log), upkeep.Search(s, log),
		upkeep.Backfill(s, log),
	} {
		g.Go(func() error { return l.Run(gctx) })
	}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	})
	return g.Wait()
}

// welcome is the line that tells a person at a terminal which address
// to open, and what they will find there: the setup of the first admin on
// a fresh install, else the sign-in.
func welcome(ctx context.Context, s *store.Store, url string) string {
	if n, err := s.CountUsers(ctx); err == nil && n == 0 {
		return "leadsignal is serving on " + url + " (open it in a browser; the first visit sets up the admin)"
	}
	return "leadsignal is serving on " + url + " (open it in a browser and sign in)"
}

func sessionLimits(cfg config.Config) store.SessionLimits {
	return store.SessionLimits{Idle: cfg.SessionIdle, Absolute: cfg.SessionMax}
}

func createUser(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	email := fs.String("email", "", "the user's login email")
	admin := fs.Bool("admin", false, "make the user an administrator")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("user create: --email is required")
	}
	pw, err := readPassword(e)
	if err != nil {
		return err
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return fmt.Errorf("user create: password: %w", err)
	}
	_, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	u, err := s.CreateUser(ctx, *email, hash, *admin)
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("user create: a user with email %s already exists", *email)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created user %d %s (admin: %v)\n", u.ID, u.Email, u.IsAdmin)
	return nil
}

// readPassword reads the password from stdin: with a prompt and no echo on
// a terminal, else the first line.
func readPassword(e env) (string, error) {
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.stderr, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("user create: give the password on stdin, e.g. echo \"$PASSWORD\" | leadsignal user create --email E")
	}
	return line, nil
}

func createAccount(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("account create", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	name := fs.String("name", "", "the account's display name")
	slug := fs.String("slug", "", "the account's stable handle: lowercase letters, digits, dashes")
	cc := fs.String("country", "", "default country, ISO 3166-1 alpha-2")
	owner := fs.String("owner", "", "email of an existing user to make owner")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" || *slug == "" {
		return errors.New("account create: --name and --slug are required")
	}
	if msg := web.SlugProblem(*slug); msg != "" {
		return fmt.Errorf("account create: --slug: %s", msg)
	}
	code := ""
	if *cc != "" {
		c, ok := country.Code(*cc)
		if !ok {
			return fmt.Errorf("account create: --country %q is not an ISO 3166-1 country", *cc)
		}
		code = c
	}
	_, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	ownerID, err := ownerByEmail(ctx, s, "account create", *owner)
	if err != nil {
		return err
	}
	a, err := s.CreateAccount(ctx, models.Account{
		Slug: *slug, Name: strings.TrimSpace(*name), Timezone: "UTC", DefaultCountry: code, Currency: "USD",
	}, ownerID)
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("account create: slug %q is taken", *slug)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created account %d %s (%s)\n", a.ID, a.Slug, a.Name)
	return nil
}

func createKey(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("key create", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	slug := fs.String("account", "", "the account's slug")
	name := fs.String("name", "", "where the key is used, e.g. website")
	siteKey := fs.Bool("site", false, "a public site key for the site snippet (docs/capture-js.md), allowed from each --origin")
	var origins []string
	fs.Func("origin", "with --site: an origin the snippet may post from, like https://www.example.com (repeatable)", func(v string) error {
		o, err := site.ParseOrigin(v)
		if err != nil {
			return err
		}
		if !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || strings.TrimSpace(*name) == "" {
		return errors.New("key create: --account and --name are required")
	}
	switch {
	case *siteKey && len(origins) == 0:
		return errors.New("key create: a --site key needs at least one --origin, like --origin https://www.example.com")
	case !*siteKey && len(origins) > 0:
		return errors.New("key create: --origin is for --site keys; an ingest key works from any server")
	case len(origins) > site.MaxOrigins:
		return fmt.Errorf("key create: a site key may have %d origins", site.MaxOrigins)
	}
	_, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := s.AccountBySlug(ctx, *slug)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("key create: no account has slug %q", *slug)
	}
	if err != nil {
		return err
	}
	if *siteKey {
		k, err := s.CreateSiteKey(ctx, a.ID, strings.TrimSpace(*name), origins, time.Now())
		if errors.Is(err, store.ErrSiteKeyLimit) {
			return fmt.Errorf("key create: account %s has %d site keys, the most it may have", a.Slug, store.MaxSiteKeys)
		}
		if err != nil {
			return err
		}
		// A site key is public (it is in the snippet): stored as it is,
		// and on the account's Site snippet settings too.
		fmt.Fprintln(e.stdout, k.Key)
		fmt.Fprintf(e.stderr, "created site key %q for account %s, allowed from %s; its snippet is on the account's Settings → Site snippet\n",
			k.Name, a.Slug, strings.Join(origins, ", "))
		return nil
	}
	_, secret, err := s.CreateIngestKey(ctx, a.ID, strings.TrimSpace(*name))
	if err != nil {
		return err
	}
	// Only the key on stdout, so scripts can capture it; it is not stored
	// and cannot be shown again.
	fmt.Fprintln(e.stdout, secret)
	fmt.Fprintf(e.stderr, "created ingest key %q for account %s; it is shown only this once\n", strings.TrimSpace(*name), a.Slug)
	return nil
}

// ownerByEmail finds the user an --owner flag names: 0 for no flag, an
// error that says what to do for an unknown email.
func ownerByEmail(ctx context.Context, s *store.Store, cmd, email string) (int64, error) {
	if email == "" {
		return 0, nil
	}
	u, err := s.UserByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%s: no user has email %s (create it with leadsignal user create)", cmd, email)
	}
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}
