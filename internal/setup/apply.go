package setup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Change is one thing Apply changed, at the JSON path of the file that
// asked for it: {"account.timezone", "UTC → Europe/Berlin"}. Secrets are
// never shown, only the variable they came from.
type Change struct {
	Path string
	What string
}

// String is "path: what".
func (c Change) String() string { return c.Path + ": " + c.What }

// Note is something Apply or Export left alone on purpose, or that a
// person should do next; it is not a change.
type Note struct {
	Path    string
	Message string
}

// String is "path: message".
func (n Note) String() string { return n.Path + ": " + n.Message }

// Report is what Apply changed and what it wants a person to know.
type Report struct {
	Changes []Change
	Notes   []Note
	// Warnings are what the file asks for that a person may not mean; they
	// follow from the file alone, so a preview's Fingerprint leaves them
	// out.
	Warnings []Warning
	// Summary counts the changes by section, for a short overview.
	Summary Summary
}

// Summary counts what an apply changed in each section of the file.
type Summary struct {
	AccountCreated bool
	// AccountSettings is how many settings of an existing account changed.
	AccountSettings int
	DatasetsAdded   int
	DatasetsChanged int
	// JunkChanges is how many changes the junk section made: one a signal.
	JunkChanges  int
	RulesAdded   int
	RulesChanged int
	RulesDeleted int
	// RulesReordered is true when rules the account kept changed places.
	RulesReordered bool
	// StagesAdded counts the stages the stages section and the stage
	// mappings added to the account's list.
	StagesAdded int
	// StagesChanged counts the stages whose aliases or booking mark the
	// stages section changed; StagesReordered is true when it changed
	// their order.
	StagesChanged   int
	StagesReordered bool
	MappingsAdded   int
	MappingsChanged int
	MappingsDeleted int
	// MappingsReordered is true when mappings the account kept changed
	// places.
	MappingsReordered bool
	SequencesAdded    int
	SequencesDeleted  int
	CRMAdded          int
	CRMChanged        int
	// CRMDeleted counts the CRM connections deleted: their hook URLs
	// answer 404 from then on.
	CRMDeleted int
	// SiteKeysAdded, SiteKeysChanged (origins) and SiteKeysRevoked count
	// the site keys' changes.
	SiteKeysAdded   int
	SiteKeysChanged int
	SiteKeysRevoked int
}

// Fingerprint identifies the report's changes and notes: a preview shows
// a report, and Apply with Options.Expect set to its fingerprint applies
// only while it would still make exactly those changes.
func (r Report) Fingerprint() string {
	h := sha256.New()
	for _, c := range r.Changes {
		fmt.Fprintf(h, "c\x00%s\x00%s\n", c.Path, c.What)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(h, "n\x00%s\x00%s\n", n.Path, n.Message)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Invalid is Apply's error for a file with problems; nothing was changed.
type Invalid struct {
	Problems []Problem
}

func (e *Invalid) Error() string {
	ps := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		ps[i] = p.String()
	}
	return fmt.Sprintf("setup file has %s: %s", plural(len(e.Problems), "problem"), strings.Join(ps, "; "))
}

// ErrChanged is Apply's error when Options.Expect is set and the apply
// would no longer make the changes of that preview: the account changed
// in between. Nothing was changed.
var ErrChanged = errors.New("setup: the account changed since the preview")

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Apply makes the database match the file. In one transaction it
// validates the whole file against the account as it is (an *Invalid
// error, nothing changed), then creates the account when its slug is new
// or updates its settings, creates or updates the datasets by name
// (ignoring case), seals their secrets from the environment variables the
// file names, replaces the junk settings when the file has a junk section,
// replaces the send rules when it has send_rules, and the stage mappings
// when it has stage_mappings (after the stages, when it has stages: their
// order, aliases and booking stage, store.ArrangeStages, never deleting
// one): rules and mappings are found by name
// (ignoring case), created, updated, deleted when their list leaves them
// out, and put in the file's order; a mapping's stage the account lacks
// is added to the end of its stages; the sequences when it has
// sequences; and the CRM connections when it has crm_connections, found
// by kind and name, keeping their hook URLs (crmConnections). Datasets in
// the database but not in the file are left alone, with a note. Applying the same file again
// reports no changes and writes nothing. The report's warnings say what
// the file asks for that a person may not mean, such as two automatic
// rules that make one event.
//
// getenv looks up the secrets' environment variables. A nil getenv reads
// none: an upload in the web UI must not reach the server's environment,
// which holds the server's own secrets and perhaps other accounts' tokens.
// Secrets then stay as stored, and a live or test dataset must already
// have a token; a new CRM connection records its variables' names, with
// no secret.
func Apply(ctx context.Context, s *store.Store, box *seal.Box, getenv func(string) string, f File, o Options) (Report, error) {
	return apply(ctx, s, box, getenv, f, o, false)
}

// Options are what an apply takes besides the file.
type Options struct {
	// OwnerID, when not 0, is the user who owns the account if the apply
	// creates it. An existing account's members are left as they are.
	OwnerID int64
	// UserID, when not 0, is the person applying (in the web UI), kept
	// with each send rule version the apply records; 0 records none (the
	// command line).
	UserID int64
	// Expect, when set, is the Fingerprint of the Report a preview
	// showed: the apply then changes nothing and returns ErrChanged unless
	// it makes exactly those changes.
	Expect string
}

// Plan is Apply without the changes: it reports what Apply would change
// and rolls everything back.
func Plan(ctx context.Context, s *store.Store, box *seal.Box, getenv func(string) string, f File, o Options) (Report, error) {
	return apply(ctx, s, box, getenv, f, o, true)
}

// errPlanOnly rolls back a plan's transaction.
var errPlanOnly = errors.New("setup: plan only")

func apply(ctx context.Context, s *store.Store, box *seal.Box, getenv func(string) string, f File, o Options, plan bool) (Report, error) {
	var r Report
	err := s.Tx(ctx, func(tx *store.Store) error {
		r = Report{}
		k, err := knownAccount(ctx, tx, strings.TrimSpace(f.Account.Slug))
		if err != nil {
			return err
		}
		if ps := f.validate(getenv, k); len(ps) > 0 {
			return &Invalid{Problems: ps}
		}
		a := applier{tx: tx, box: box, getenv: getenv, owner: o.OwnerID, report: &r}
		if o.UserID != 0 {
			a.by = &o.UserID
		}
		clean := f.clean()
		if err := a.run(ctx, clean); err != nil {
			return err
		}
		r.Warnings = clean.warnings()
		if o.Expect != "" && r.Fingerprint() != o.Expect {
			return ErrChanged
		}
		if plan {
			return errPlanOnly
		}
		return nil
	})
	if inv, ok := errors.AsType[*Invalid](err); ok {
		return Report{}, inv
	}
	switch {
	case plan && errors.Is(err, errPlanOnly):
	case errors.Is(err, ErrChanged):
		return Report{}, ErrChanged
	case err != nil:
		return Report{}, fmt.Errorf("setup: apply: %w", err)
	}
	return r, nil
}

// knownAccount reads what validation needs of the account with the slug:
// its datasets, rules and booking stage; none and the template's booking
// stage when there is no such account yet.
func knownAccount(ctx context.Context, tx *store.Store, slug string) (*known, error) {
	k := &known{datasets: map[string]models.Dataset{}, rules: map[string]models.SendRule{}, crm: map[string]models.CRMConnection{}}
	acc, err := tx.AccountBySlug(ctx, slug)
	if errors.Is(err, store.ErrNotFound) {
		k.hasBookingStage = true // store.TemplateStages has one
		k.stages = store.TemplateStages
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	ss, err := tx.Stages(ctx, acc.ID)
	if err != nil {
		return nil, err
	}
	_, k.hasBookingStage = store.BookingStage(ss)
	k.stages = ss
	if err := k.readCRM(ctx, tx, acc.ID); err != nil {
		return nil, err
	}
	ds, err := tx.Datasets(ctx, acc.ID)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		k.datasets[strings.ToLower(d.Name)] = d
	}
	rs, err := tx.SendRules(ctx, acc.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		k.rules[strings.ToLower(r.Name)] = r
	}
	return k, nil
}

// applier carries one apply's transaction and report.
type applier struct {
	tx     *store.Store
	box    *seal.Box
	getenv func(string) string
	owner  int64
	// by is the person applying, for the send rules' versions; nil for
	// none.
	by *int64
	// keepRules is true when the file has no send_rules: a new dataset
	// keeps the default rule the store gives it.
	keepRules bool
	// booking are the ids of the stage mappings the file's booking rules
	// became (bookingMapping), in the file's order.
	booking []int64
	report  *Report
}

func (a *applier) change(path, format string, args ...any) {
	a.report.Changes = append(a.report.Changes, Change{Path: path, What: fmt.Sprintf(format, args...)})
}

func (a *applier) note(path, format string, args ...any) {
	a.report.Notes = append(a.report.Notes, Note{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (a *applier) run(ctx context.Context, f File) error {
	acc, err := a.account(ctx, f.Account)
	if err != nil {
		return err
	}
	// The rules as they were, before a new dataset adds its default one.
	before, err := a.tx.SendRules(ctx, acc.ID)
	if err != nil {
		return err
	}
	a.keepRules = f.SendRules == nil
	if err := a.datasets(ctx, acc.ID, f.destinations()); err != nil {
		return err
	}
	if f.Junk != nil {
		if err := a.junk(ctx, acc, f.Junk); err != nil {
			return err
		}
	}
	// Before the send rules: a booking rule sends at the booking stage.
	if f.Stages != nil {
		if err := a.stages(ctx, acc.ID, f.Stages); err != nil {
			return err
		}
	}
	// Send rules and stage mappings share their names: the mappings the
	// file drops go before any send rule is made, and the send rules it
	// drops before any mapping is.
	var gone []models.SendRule
	if f.StageMappings != nil {
		if gone, err = a.deleteMappings(ctx, acc.ID, f.StageMappings, f.bookingNames()); err != nil {
			return err
		}
	}
	if f.SendRules != nil {
		if err := a.rules(ctx, acc.ID, before, f.SendRules); err != nil {
			return err
		}
	}
	if f.StageMappings != nil {
		if err := a.mappings(ctx, acc.ID, before, gone, f.StageMappings); err != nil {
			return err
		}
	}
	if f.Sequences != nil {
		if err := a.sequences(ctx, acc.ID, f.Sequences); err != nil {
			return err
		}
	}
	if f.SiteKeys != nil {
		if err := a.siteKeys(ctx, acc.ID, f.SiteKeys); err != nil {
			return err
		}
	}
	// After the stage mappings, whose stages stage_ids may name.
	if f.CRMConnections != nil {
		return a.crmConnections(ctx, acc.ID, f.CRMConnections)
	}
	return nil
}

func (a *applier) account(ctx context.Context, spec AccountSpec) (models.Account, error) {
	acc, err := a.tx.AccountBySlug(ctx, spec.Slug)
	if errors.Is(err, store.ErrNotFound) {
		acc, err = a.tx.CreateAccount(ctx, models.Account{
			Slug: spec.Slug, Name: spec.Name, Timezone: spec.Timezone, DefaultCountry: spec.DefaultCountry,
			Currency: spec.Currency, CRMName: spec.CRMName, WebsiteURL: spec.WebsiteURL, JunkSettings: "{}",
		}, a.owner)
		if err != nil {
			return acc, err
		}
		a.change("account", "created %s (%s)", acc.Slug, acc.Name)
		a.report.Summary.AccountCreated = true
		if a.owner == 0 {
			a.note("account", "the new account has no members, so nobody can open it in the web UI yet; "+
				"apply with --owner EMAIL to give it an owner")
		}
		return acc, nil
	}
	if err != nil {
		return acc, err
	}
	want := acc
	n := len(a.report.Changes)
	a.set("account.name", &want.Name, spec.Name)
	a.set("account.timezone", &want.Timezone, spec.Timezone)
	a.set("account.currency", &want.Currency, spec.Currency)
	// The optional settings a file leaves out stay as they are.
	if spec.has("default_country") {
		a.set("account.default_country", &want.DefaultCountry, spec.DefaultCountry)
	}
	if spec.has("crm_name") {
		a.set("account.crm_name", &want.CRMName, spec.CRMName)
	}
	if spec.has("website_url") {
		a.set("account.website_url", &want.WebsiteURL, spec.WebsiteURL)
	}
	if len(a.report.Changes) == n {
		return acc, nil
	}
	a.report.Summary.AccountSettings += len(a.report.Changes) - n
	return a.tx.UpdateAccountSettings(ctx, want)
}

// set makes *cur want, reporting the change when they differ.
func (a *applier) set(path string, cur *string, want string) {
	if *cur == want {
		return
	}
	a.change(path, "%s → %s", show(*cur), show(want))
	*cur = want
}

func show(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func (a *applier) datasets(ctx context.Context, accountID int64, specs []DatasetSpec) error {
	existing, err := a.tx.Datasets(ctx, accountID)
	if err != nil {
		return err
	}
	byName := map[string]models.Dataset{}
	for _, d := range existing {
		byName[strings.ToLower(d.Name)] = d
	}
	inFile := map[int64]bool{}
	for _, spec := range specs {
		path := spec.path
		if d, ok := byName[strings.ToLower(spec.Name)]; ok {
			inFile[d.ID] = true
			if err := a.updateDataset(ctx, path, d, spec); err != nil {
				return err
			}
			continue
		}
		if err := a.createDataset(ctx, path, accountID, spec); err != nil {
			return err
		}
	}
	for _, d := range existing {
		if !inFile[d.ID] {
			a.note("datasets", "%q is in the database but not in the file; it is left as it is (delete it in the web UI if it should go)", d.Name)
		}
	}
	return nil
}

func (a *applier) createDataset(ctx context.Context, path string, accountID int64, spec DatasetSpec) error {
	names, _ := platform.EventNamesJSON(spec.Kind, spec.EventNames) // checked by Validate
	d := models.Dataset{
		AccountID: accountID, Kind: spec.Kind, Name: spec.Name, PixelID: spec.PixelID, TestEventCode: spec.TestEventCode,
		APIVersion: spec.APIVersion, Mode: spec.Mode, LDU: spec.LDU, EventSource: spec.EventSource, EventNames: names,
		LoginAccount: spec.LoginAccount, ClientID: spec.ClientID, Consent: spec.Consent,
	}
	if err := a.tx.CreateDataset(ctx, &d); err != nil {
		return err
	}
	if d.Of() == models.KindMeta {
		a.change(path, "created %q (dataset id %s, %s)", d.Name, d.PixelID, d.Mode)
	} else {
		a.change(path, "created %q (%s %s, %s)", d.Name, platform.Name(d.Of()), d.PixelID, d.Mode)
	}
	a.report.Summary.DatasetsAdded++
	if a.keepRules {
		a.note(path, "the new dataset sends every completed lead that is not junk as Lead (its default send rule); "+
			"give the file send_rules to choose its rules")
	}
	if a.getenv == nil {
		a.secretsNotRead(path, d, spec)
		return nil
	}
	// The seal labels name the dataset's id, known only after the insert.
	if !a.secrets(path, &d, spec) {
		return nil
	}
	return a.tx.SaveDataset(ctx, &d)
}

func (a *applier) updateDataset(ctx context.Context, path string, d models.Dataset, spec DatasetSpec) error {
	before := d
	n := len(a.report.Changes)
	a.set(path+".name", &d.Name, spec.Name)
	a.set(path+".pixel_id", &d.PixelID, spec.PixelID)
	a.set(path+".test_event_code", &d.TestEventCode, spec.TestEventCode)
	a.set(path+".api_version", &d.APIVersion, spec.APIVersion)
	a.set(path+".event_source", &d.EventSource, spec.EventSource)
	a.set(path+".login_account", &d.LoginAccount, spec.LoginAccount)
	a.set(path+".client_id", &d.ClientID, spec.ClientID)
	if d.Consent != spec.Consent {
		a.change(path+".consent", "%s → %s", show(string(d.Consent)), show(string(spec.Consent)))
		d.Consent = spec.Consent
	}
	if names, _ := platform.EventNamesJSON(spec.Kind, spec.EventNames); names != d.EventNames {
		a.change(path+".event_names", "%s → %s", show(platform.EventNamesText(d.EventNames)), show(platform.EventNamesText(names)))
		d.EventNames = names
	}
	if d.Mode != spec.Mode {
		a.change(path+".mode", "%s → %s", show(string(d.Mode)), spec.Mode)
		d.Mode = spec.Mode
	}
	if d.LDU != spec.LDU {
		a.change(path+".ldu", "%s → %s", show(string(d.LDU)), spec.LDU)
		d.LDU = spec.LDU
	}
	if a.getenv == nil {
		a.secretsNotRead(path, d, spec)
	} else {
		a.secrets(path, &d, spec)
	}
	if spec.AccessTokenEnv == "" && d.TokenSealed != "" {
		a.note(path+".access_token_env", "not given; the stored token (…%s) is kept", d.TokenLast4)
	}
	if spec.AppSecretEnv == "" && d.AppSecretSealed != "" {
		a.note(path+".app_secret_env", "not given; the stored app secret is kept")
	}
	if d == before {
		return nil
	}
	if len(a.report.Changes) > n {
		a.report.Summary.DatasetsChanged++
	}
	if err := a.tx.SaveDataset(ctx, &d); err != nil {
		return err
	}
	if dispatch.FixesPause(before, d) {
		if err := a.tx.ResumeDataset(ctx, d.AccountID, d.ID, time.Now()); err != nil {
			return err
		}
		a.change(path, "sending resumed (it was paused: %s)", d.PausedReason)
	}
	return nil
}

// secrets brings the dataset's sealed token and app secret in line with
// the environment variables the spec names and reports whether the token
// was replaced. A secret the spec names no variable for is kept.
func (a *applier) secrets(path string, d *models.Dataset, spec DatasetSpec) (tokenReplaced bool) {
	if spec.AccessTokenEnv != "" {
		tokenReplaced = a.secret(path+".access_token_env", "token", &d.TokenSealed, &d.TokenEnv, spec.AccessTokenEnv, dispatch.TokenLabel(d.ID))
		if tokenReplaced {
			d.TokenLast4 = last4(strings.TrimSpace(a.getenv(spec.AccessTokenEnv)))
		}
	}
	if spec.AppSecretEnv != "" {
		a.secret(path+".app_secret_env", "app secret", &d.AppSecretSealed, &d.AppSecretEnv, spec.AppSecretEnv, dispatch.AppSecretLabel(d.ID))
	}
	return tokenReplaced
}

// secretsNotRead notes, for an apply that reads no environment variable,
// the secrets the spec names that it leaves as they are.
func (a *applier) secretsNotRead(path string, d models.Dataset, spec DatasetSpec) {
	const why = envNotRead
	if spec.AccessTokenEnv != "" {
		if d.TokenSealed != "" {
			a.note(path+".access_token_env", "%s; the stored token (…%s) is kept", why, d.TokenLast4)
		} else {
			a.note(path+".access_token_env", "%s; save the token on the dataset's page", why)
		}
	}
	if spec.AppSecretEnv != "" {
		if d.AppSecretSealed != "" {
			a.note(path+".app_secret_env", "%s; the stored app secret is kept", why)
		} else {
			a.note(path+".app_secret_env", "%s; save the app secret on the dataset's page", why)
		}
	}
}

// envNotRead says why an apply without an environment leaves a secret as
// it is.
const envNotRead = "not read: an upload in the web UI reads no environment variables"

// secret seals the value of the environment variable env into *sealed
// unless it already holds that value (compared by opening it, so an
// unchanged secret is no change), and records env as its source. It
// reports whether the sealed value changed.
func (a *applier) secret(path, what string, sealed, source *string, env, label string) bool {
	val := strings.TrimSpace(a.getenv(env))
	if *sealed != "" {
		if cur, err := a.box.Open(*sealed, label); err == nil && cur == val {
			if *source != env {
				a.change(path, "%s → %s (same %s)", show(*source), env, what)
				*source = env
			}
			return false
		}
	}
	verb := "set"
	if *sealed != "" {
		verb = "replaced"
	}
	*sealed = a.box.Seal(val, label)
	*source = env
	a.change(path, "%s %s (from $%s)", what, verb, env)
	return true
}

// last4 is what the UI shows of a token; short values show nothing.
func last4(s string) string {
	if len(s) <= 4 {
		return ""
	}
	return s[len(s)-4:]
}

// junk replaces the account's junk settings with the file's when they
// differ, reporting each signal that changes.
func (a *applier) junk(ctx context.Context, acc models.Account, want junk.Settings) error {
	cur, readable := storedJunk(acc.JunkSettings)
	if readable && equalJunk(cur, want) {
		return nil
	}
	b, err := json.Marshal(want)
	if err != nil {
		return err
	}
	if err := a.tx.UpdateJunkSettings(ctx, acc.ID, string(b)); err != nil {
		return err
	}
	n := len(a.report.Changes)
	if !readable {
		a.change("junk", "unreadable stored settings replaced")
	}
	sigs := make([]junk.Signal, 0, len(cur)+len(want))
	for sig := range cur {
		sigs = append(sigs, sig)
	}
	for sig := range want {
		if _, ok := cur[sig]; !ok {
			sigs = append(sigs, sig)
		}
	}
	slices.Sort(sigs)
	for _, sig := range sigs {
		before, hadBefore := cur[sig]
		after, hasAfter := want[sig]
		if hadBefore == hasAfter && equalSetting(before, after) {
			continue
		}
		from, to := describe(before, hadBefore), describe(after, hasAfter)
		if from == to {
			a.change("junk."+string(sig), "keywords changed")
			continue
		}
		a.change("junk."+string(sig), "%s → %s", from, to)
	}
	a.report.Summary.JunkChanges = len(a.report.Changes) - n
	return nil
}

// storedJunk reads an account's junk settings; "" and "{}" are empty.
func storedJunk(s string) (junk.Settings, bool) {
	out := junk.Settings{}
	if strings.TrimSpace(s) == "" {
		return out, true
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return junk.Settings{}, false
	}
	return out, true
}

func equalJunk(x, y junk.Settings) bool {
	if len(x) != len(y) {
		return false
	}
	for sig, sx := range x {
		sy, ok := y[sig]
		if !ok || !equalSetting(sx, sy) {
			return false
		}
	}
	return true
}

func equalSetting(x, y junk.Setting) bool {
	return x.Enabled == y.Enabled && x.Threshold == y.Threshold && slices.Equal(x.Keywords, y.Keywords)
}

// describe says a junk setting in a few words for the change report.
func describe(st junk.Setting, present bool) string {
	if !present {
		return "default"
	}
	s := "off"
	if st.Enabled {
		s = "on"
	}
	if st.Threshold != 0 {
		s += fmt.Sprintf(", threshold %g", st.Threshold)
	}
	if len(st.Keywords) > 0 {
		s += ", " + plural(len(st.Keywords), "keyword")
	}
	return s
}
