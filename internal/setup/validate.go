package setup

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

var (
	// slugRE is the web form's rule for account slugs (web.SlugProblem).
	slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$`)
	// apiVersionRE is the dataset form's rule.
	apiVersionRE = regexp.MustCompile(`^v[0-9]{1,3}\.[0-9]$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

const (
	maxEnvNameLen = 100
	maxCodeLen    = 100
)

// Validate lists every problem of the file at once, each with its JSON
// path: account settings, datasets (unique names, ids, modes, and the
// environment variables that must hold their secrets), junk settings,
// send rules and stage mappings (as rule.CheckRule checks them, with their
// dataset or destinations, value, currency, stage and names). getenv
// looks the secrets up; no message ever shows a secret's value. A rule's
// destination that is not in the file, and a name the account's rules or
// mappings have, are checked by Apply, which knows the account.
func (f File) Validate(getenv func(string) string) []Problem {
	return f.validate(getenv, nil)
}

// known is what the database holds of the file's account, for the checks
// that need it.
type known struct {
	// datasets are the account's, by lower-case name; empty for an
	// account the apply creates.
	datasets map[string]models.Dataset
	// rules are the account's send rules and stage mappings, by
	// lower-case name.
	rules map[string]models.SendRule
	// hasBookingStage is true when the account has a booking stage, which
	// the file's booking rules become mappings of.
	hasBookingStage bool
	// stages are the account's stages, in order; store.TemplateStages for
	// an account the apply creates.
	stages []models.Stage
	// crm are the account's CRM connections, by crmKey.
	crm map[string]models.CRMConnection
}

// validate is Validate, with what the database knows when k is not nil. A
// nil getenv reads no environment variable (an upload in the web UI, see
// Apply): variable names are only checked for their form, and a live or
// test dataset must have a stored token.
func (f File) validate(getenv func(string) string, k *known) []Problem {
	f = f.clean()
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}

	a := f.Account
	if a.Slug == "" {
		add("account.slug", "required: the account's handle, like acme")
	} else if !slugRE.MatchString(a.Slug) {
		add("account.slug", "use 2 to 40 lowercase letters, digits and dashes, starting and ending with a letter or digit")
	}
	if msg := name.Problem(a.Name); msg != "" {
		add("account.name", "%s", msg)
	}
	if a.Timezone == "" {
		add("account.timezone", "required: an IANA time zone, like Europe/Berlin or UTC")
	} else if !country.ValidTimezone(a.Timezone) {
		add("account.timezone", "%q is not an IANA time zone; write one like Europe/Berlin or UTC", a.Timezone)
	}
	if a.DefaultCountry != "" && (!country.Valid(a.DefaultCountry) || strings.ToUpper(a.DefaultCountry) != a.DefaultCountry) {
		add("account.default_country", "%q is not an ISO 3166-1 alpha-2 code; write one like US or DE, or leave it empty", a.DefaultCountry)
	}
	if a.Currency == "" {
		add("account.currency", "required: an ISO 4217 code, like USD or EUR")
	} else if !country.ValidCurrency(a.Currency) {
		add("account.currency", "%q is not an ISO 4217 code; write one like USD or EUR, in upper case", a.Currency)
	}
	if msg := name.Problem(a.CRMName); a.CRMName != "" && msg != "" {
		add("account.crm_name", "%s", msg)
	}
	if p := capture.WebsiteURLProblem(a.WebsiteURL); p != "" {
		add("account.website_url", "%s", p)
	}

	all := f.destinations()
	if msg := datasetCountProblem(all, k); msg != "" {
		add("datasets", "%s", msg)
	}
	firstByName := map[string]int{}
	firstPath := map[string]string{}
	for i, d := range all {
		p := d.path
		if msg := name.Problem(d.Name); msg != "" {
			add(p+".name", "%s", msg)
		} else if j, ok := firstPath[strings.ToLower(d.Name)]; ok {
			add(p+".name", "%q is also the name of %s; destination names must differ (ignoring case)", d.Name, j)
		} else {
			firstByName[strings.ToLower(d.Name)], firstPath[strings.ToLower(d.Name)] = i, p
		}
		ps = append(ps, kindProblems(d, k)...)
		if d.APIVersion != "" && !apiVersionRE.MatchString(d.APIVersion) {
			add(p+".api_version", "%q is not a Graph API version; write it like v24.0, or leave it empty for the server's default", d.APIVersion)
		}
		switch d.Mode {
		case models.ModeLive, models.ModeTest, models.ModeDryRun:
		case "":
			add(p+".mode", "required: live, test or dry_run")
		default:
			add(p+".mode", "%q is not a mode; use live, test or dry_run", d.Mode)
		}
		switch d.LDU {
		case models.LDUOff, models.LDUCalifornia, models.LDUAlways:
		default:
			add(p+".ldu", "%q is not a Limited Data Use setting; use off, california or always", d.LDU)
		}
		if d.Mode == models.ModeTest && d.TestEventCode == "" && (d.Kind == models.KindMeta || d.Kind == models.KindTikTok) {
			add(p+".test_event_code", "test mode needs the test event code from Events Manager → Test events")
		}
		if len(d.TestEventCode) > maxCodeLen {
			add(p+".test_event_code", "use at most %d characters", maxCodeLen)
		}
		sends := d.Mode == models.ModeLive || d.Mode == models.ModeTest
		switch {
		case getenv == nil:
			if stored, ok := k.dataset(d.Name); sends && k != nil && (!ok || stored.TokenSealed == "") {
				add(p+".access_token_env", "%s mode needs an access token, and an upload in the web UI reads no environment variables: "+
					"upload this dataset in dry_run mode and save its token on the dataset's page, or apply the file with leadsignal setup apply", d.Mode)
			}
		case sends && d.AccessTokenEnv == "":
			tokenEnv, _ := suggestedEnvs(d.Kind, d.Name)
			add(p+".access_token_env", "%s mode needs an access token: name the environment variable that holds it, like %s (or use dry_run until you have one)", d.Mode, tokenEnv)
		}
		if d.AccessTokenEnv != "" {
			if msg := secretEnvProblem(d.AccessTokenEnv, getenv); msg != "" {
				add(p+".access_token_env", "%s", msg)
			}
		}
		if d.AppSecretEnv != "" {
			if msg := secretEnvProblem(d.AppSecretEnv, getenv); msg != "" {
				add(p+".app_secret_env", "%s", msg)
			}
		}
	}

	// Junk problems come sorted by signal, so the output is stable.
	jp := f.Junk.Validate()
	sigs := make([]junk.Signal, 0, len(jp))
	for sig := range jp {
		sigs = append(sigs, sig)
	}
	slices.Sort(sigs)
	for _, sig := range sigs {
		add("junk."+string(sig), "%s", jp[sig])
	}

	var stages []models.Stage
	if k != nil {
		stages = k.stages
	}
	if f.Stages != nil {
		ps = append(ps, f.stageProblems(stages)...)
		if k != nil {
			// The file's booking rules send at the booking stage its
			// stages leave.
			kk := *k
			_, kk.hasBookingStage = store.BookingStage(stageList(f.Stages, k.stages))
			k = &kk
		}
	}

	refs := &datasetRefs{inFile: firstByName, datasets: all, k: k}
	firstRule := map[string]int{}
	rules := make([]models.SendRule, len(f.SendRules))
	for i, r := range f.SendRules {
		p := fmt.Sprintf("send_rules[%d]", i)
		if msg := name.Problem(r.Name); msg != "" {
			add(p+".name", "%s", msg)
		} else if j, ok := firstRule[strings.ToLower(r.Name)]; ok {
			add(p+".name", "%q is also the name of send_rules[%d]; rule names must differ (ignoring case)", r.Name, j)
		} else {
			firstRule[strings.ToLower(r.Name)] = i
			if m, ok := k.rule(r.Name); ok && f.StageMappings == nil && isMapping(m) && !r.isBooking() {
				add(p+".name", "%q is the name of the account's stage mapping of stage %s, which the file leaves as it is (it has no stage_mappings); "+
					"send rules and stage mappings share their names, which must differ (ignoring case)", r.Name, m.Stage)
			}
		}
		ps = append(ps, refs.destinationProblems(p, r.Dataset, r.Destinations)...)
		if r.Mode == rule.Stage {
			add(p+".mode", "a send rule of mode stage is a stage mapping: move it to stage_mappings, with its stage")
			continue
		}
		// The rule is checked as the rule form checks it, by the package
		// whose matcher will run it; a custom field no lead has carried yet
		// is fine (the form may not be live). The file names the field a
		// value or currency is read from inside that key. A booking rule
		// is checked as the stage mapping it becomes.
		rules[i] = ruleOf(models.SendRule{}, r, nil)
		if r.isBooking() {
			if k != nil && !k.hasBookingStage {
				add(p+".mode", "%s", bookingStageProblem)
			}
			rules[i] = bookingMappingOf(models.SendRule{}, r, nil, models.StageBooked)
		}
		_, rps := rule.CheckRule(rules[i], ruleSchema)
		for _, rp := range rps {
			add(p+"."+filePath(rp.Path), "%s", rp.Message)
		}
	}
	mps, mappings := f.mappingProblems(refs, firstRule, k)
	ps = append(ps, mps...)
	ps = append(ps, f.sequenceProblems(refs)...)
	ps = append(ps, f.crmProblems(getenv, k)...)
	ps = append(ps, f.siteKeyProblems()...)

	// The file's lists replace the account's, so each is the account's
	// whole cost of its kind; a list left out costs what the account's
	// does.
	if f.SendRules != nil || f.StageMappings != nil {
		var all []models.SendRule
		booking := f.bookingNames() // the account's mappings they replace
		for _, r := range k.allRules() {
			if isMapping(r) && f.StageMappings == nil && !booking[strings.ToLower(r.Name)] || !isMapping(r) && f.SendRules == nil {
				all = append(all, r)
			}
		}
		all = append(append(all, rules...), mappings...)
		if msg := rule.CostProblem(rule.AccountCost(all)); msg != "" {
			path := "send_rules"
			if f.SendRules == nil {
				path = "stage_mappings"
			}
			add(path, "%s", msg)
		}
	}
	return ps
}

// datasetRefs checks the datasets that rules and mappings name: one of
// the file's (inFile, by lower-case name), or when k is not nil one of
// the account's.
type datasetRefs struct {
	inFile   map[string]int
	datasets []DatasetSpec
	k        *known
	// names are knownDatasetNames, for problems, listed once.
	names []string
}

// problem says what is wrong with a reference to a dataset, or "".
func (d *datasetRefs) problem(ref string) string {
	_, inAccount := d.k.dataset(ref)
	_, inFile := d.inFile[strings.ToLower(ref)]
	switch {
	case ref == "":
		return "required: the name of one of the datasets"
	case inFile || inAccount || d.k == nil:
		return ""
	}
	if d.names == nil {
		d.names = knownDatasetNames(d.datasets, d.k)
	}
	return datasetRefProblem(ref, d.names)
}

// datasetCountProblem says what is wrong with the number of datasets the
// account would have after the file is applied: the file's, and those of
// the account that the file leaves as they are. An account that has more
// than store.MaxDatasets from before the limit may keep them, but gets no
// new one.
func datasetCountProblem(inFile []DatasetSpec, k *known) string {
	if len(inFile) > store.MaxDatasets {
		return fmt.Sprintf("use at most %d datasets, not %d: every automatic send rule of every dataset may queue an event for each lead",
			store.MaxDatasets, len(inFile))
	}
	if k == nil {
		return ""
	}
	named := make(map[string]bool, len(inFile))
	created := 0
	for _, d := range inFile {
		l := strings.ToLower(d.Name)
		if _, ok := k.datasets[l]; !ok && !named[l] {
			created++
		}
		named[l] = true
	}
	kept := 0
	for l := range k.datasets {
		if !named[l] {
			kept++
		}
	}
	if total := len(named) + kept; created > 0 && total > store.MaxDatasets {
		return fmt.Sprintf("the account would have %d datasets, over the limit of %d: it has %d that the file leaves out, "+
			"which apply leaves as they are; delete those it no longer needs on the Datasets page, or add fewer", total, store.MaxDatasets, kept)
	}
	return ""
}

// ruleSchema is what a rule of a file may name: any custom form field,
// since the account may have no leads yet.
var ruleSchema = rule.Schema{Open: true}

// rule finds the account's send rule or stage mapping of that name,
// ignoring case; never on a nil k.
func (k *known) rule(ruleName string) (models.SendRule, bool) {
	if k == nil {
		return models.SendRule{}, false
	}
	r, ok := k.rules[strings.ToLower(ruleName)]
	return r, ok
}

// allRules lists the account's send rules and stage mappings, in no
// particular order; none on a nil k.
func (k *known) allRules() []models.SendRule {
	if k == nil {
		return nil
	}
	out := make([]models.SendRule, 0, len(k.rules))
	for _, r := range k.rules {
		out = append(out, r)
	}
	return out
}

// dataset finds the account's dataset of that name, ignoring case; never
// on a nil k.
func (k *known) dataset(datasetName string) (models.Dataset, bool) {
	if k == nil {
		return models.Dataset{}, false
	}
	d, ok := k.datasets[strings.ToLower(datasetName)]
	return d, ok
}

// knownDatasetNames lists the names of the file's datasets, then those of
// the account's that the file leaves out, sorted.
func knownDatasetNames(inFile []DatasetSpec, k *known) []string {
	names := []string{}
	seen := map[string]bool{}
	for _, d := range inFile {
		if l := strings.ToLower(d.Name); d.Name != "" && !seen[l] {
			seen[l] = true
			names = append(names, d.Name)
		}
	}
	var more []string
	for l, d := range k.datasets {
		if !seen[l] {
			more = append(more, d.Name)
		}
	}
	slices.Sort(more)
	return append(names, more...)
}

// datasetRefProblem says that a rule names a dataset neither the file nor
// the account has, and which ones there are (knownDatasetNames).
func datasetRefProblem(ref string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("no dataset is named %q: the account has no dataset yet; add it to datasets", ref)
	}
	return fmt.Sprintf("no dataset is named %q in the file or the account; there are %s", ref, strings.Join(quoteAll(names), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// secretEnvProblem checks the name of an environment variable that must
// hold a secret, and the secret it holds (unless getenv is nil), without
// ever showing the value.
func secretEnvProblem(env string, getenv func(string) string) string {
	if looksLikeToken(env) {
		return "this looks like a secret itself, not the name of an environment variable: put the secret in an environment variable and write its name here"
	}
	if len(env) > maxEnvNameLen || !envNameRE.MatchString(env) {
		return "must be the name of an environment variable: letters, digits and underscores, like META_TOKEN_ACME"
	}
	if getenv == nil {
		return ""
	}
	v := strings.TrimSpace(getenv(env))
	if v == "" {
		return "environment variable " + env + " is not set"
	}
	if strings.ContainsAny(v, " \t\r\n") {
		return "environment variable " + env + " holds spaces or line breaks; a token has none"
	}
	return ""
}

// looksLikeToken catches a Meta access token pasted where its variable's
// name belongs: tokens start with EAA and run to well over 100 characters.
func looksLikeToken(s string) bool {
	return (strings.HasPrefix(s, "EAA") && len(s) > 40) || len(s) > 150
}

// clean trims the file's strings and fills in defaults, so that apply
// compares and stores exactly what Validate checked.
func (f File) clean() File {
	t := strings.TrimSpace
	a := &f.Account
	a.Slug, a.Name, a.Timezone, a.DefaultCountry, a.Currency, a.CRMName, a.WebsiteURL =
		t(a.Slug), t(a.Name), t(a.Timezone), t(a.DefaultCountry), t(a.Currency), t(a.CRMName), t(a.WebsiteURL)
	cleanDestinations := func(in []DatasetSpec, kindless models.Kind) []DatasetSpec {
		ds := make([]DatasetSpec, len(in))
		for i, d := range in {
			d.Name, d.PixelID, d.TestEventCode, d.APIVersion = t(d.Name), t(d.PixelID), t(d.TestEventCode), t(d.APIVersion)
			d.AccessTokenEnv, d.AppSecretEnv = t(d.AccessTokenEnv), t(d.AppSecretEnv)
			d.Mode, d.LDU = models.Mode(t(string(d.Mode))), models.LDU(t(string(d.LDU)))
			d.Kind, d.EventSource, d.ClientID = models.Kind(t(string(d.Kind))), t(d.EventSource), t(d.ClientID)
			d.LoginAccount, d.Consent = t(d.LoginAccount), models.Consent(t(string(d.Consent)))
			if d.Kind == "" {
				d.Kind = kindless
			}
			if d.LDU == "" {
				d.LDU = models.LDUOff
			}
			if d.Kind == models.KindTikTok && d.EventSource == "" {
				d.EventSource = "web"
			}
			if d.Kind == models.KindGoogle {
				d.PixelID, d.LoginAccount = strings.ReplaceAll(d.PixelID, "-", ""), strings.ReplaceAll(d.LoginAccount, "-", "")
			}
			ds[i] = d
		}
		return ds
	}
	// A dataset is Meta's; a destination names its kind, which Validate
	// requires.
	f.Datasets = cleanDestinations(f.Datasets, models.KindMeta)
	if f.Destinations != nil {
		f.Destinations = cleanDestinations(f.Destinations, "")
	}
	if f.SendRules != nil {
		rs := make([]RuleSpec, len(f.SendRules))
		for i, r := range f.SendRules {
			r.Name, r.Dataset, r.EventName, r.ActionSource, r.TestEventCode =
				t(r.Name), t(r.Dataset), t(r.EventName), t(r.ActionSource), t(r.TestEventCode)
			r.Mode, r.Combinator = rule.Mode(t(string(r.Mode))), rule.Combinator(t(string(r.Combinator)))
			r.Destinations = cleanNames(r.Destinations)
			if r.Mode == "" {
				r.Mode = rule.AutomaticCompleted
			}
			if r.Combinator == "" {
				r.Combinator = rule.And
			}
			r.Conditions, r.Groups = cleanConditions(r.Conditions), cleanGroups(r.Groups)
			r.Value, r.Currency = cleanValue(r.Value), cleanCurrency(r.Currency)
			rs[i] = r
		}
		f.SendRules = rs
	}
	f.Stages = cleanStages(f.Stages)
	f.StageMappings = cleanMappings(f.StageMappings)
	f.Sequences = cleanSequences(f.Sequences)
	f.SiteKeys = cleanSiteKeys(f.SiteKeys)
	f.CRMConnections = cleanCRM(f.CRMConnections)
	return f
}

// suggestedEnvs are the environment variable names export and the
// validator propose for the token and the app secret of a destination of
// kind k named name, in its platform's words: META_TOKEN_<NAME> and
// META_APP_SECRET_<NAME>, TIKTOK_TOKEN_<NAME>, PINTEREST_TOKEN_<NAME>, and
// Google's GOOGLE_REFRESH_TOKEN_<NAME> and GOOGLE_CLIENT_SECRET_<NAME>.
func suggestedEnvs(k models.Kind, name string) (token, appSecret string) {
	n := upperSnake(name)
	switch k {
	case models.KindGoogle:
		return "GOOGLE_REFRESH_TOKEN_" + n, "GOOGLE_CLIENT_SECRET_" + n
	case models.KindTikTok, models.KindPinterest:
		p := strings.ToUpper(string(k))
		return p + "_TOKEN_" + n, p + "_APP_SECRET_" + n
	}
	return "META_TOKEN_" + n, "META_APP_SECRET_" + n
}

// upperSnake turns "Main EU (web)" into "MAIN_EU_WEB"; letters outside
// ASCII are dropped, since shells want plain names.
func upperSnake(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	if b.Len() == 0 {
		return "DATASET"
	}
	return b.String()
}
