package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Export reads an account's setup as a File that Apply turns back into the
// same settings, on this account or another. Secrets appear only as the
// names of the environment variables they were applied from; a secret
// saved in the web UI, whose variable is unknown, gets a suggested name
// and a note saying so. Junk settings appear as stored, and not at all when
// they are the defaults. Send rules appear in their order, with their
// destinations by name (dataset for one Meta dataset, else destinations),
// and always as a list (empty when the account has none), so that
// applying the export elsewhere leaves exactly these rules;
// the stages in their order with their aliases and booking stage; the
// stage mappings likewise, apart from the send rules, numbered in
// their order; the sequences, with their datasets by name; and the CRM
// connections, with their mapped stage ids and their hook URLs, absolute
// with publicURL (LEADSIGNAL_PUBLIC_URL) when it is set, else paths.
func Export(ctx context.Context, s *store.Store, slug, publicURL string) (File, []Note, error) {
	acc, err := s.AccountBySlug(ctx, slug)
	if errors.Is(err, store.ErrNotFound) {
		return File{}, nil, fmt.Errorf("setup: export: no account has slug %q: %w", slug, err)
	}
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	ds, err := s.Datasets(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	cs, err := s.CRMConnections(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	f := File{
		Account: AccountSpec{
			Slug: acc.Slug, Name: acc.Name, Timezone: acc.Timezone, DefaultCountry: acc.DefaultCountry,
			Currency: acc.Currency, CRMName: acc.CRMName, WebsiteURL: acc.WebsiteURL,
		},
		Datasets: make([]DatasetSpec, 0, len(ds)),
	}
	// Suggested names must not collide with each other or with a name
	// already in use, or two secrets would share one variable.
	used := map[string]bool{}
	for _, d := range ds {
		used[d.TokenEnv], used[d.AppSecretEnv] = true, true
	}
	for _, c := range cs {
		used[c.SecretEnv], used[c.APITokenEnv] = true, true
	}
	suggest := func(name string) string {
		s := name
		for n := 2; used[s]; n++ {
			s = name + "_" + strconv.Itoa(n)
		}
		used[s] = true
		return s
	}
	var notes []Note
	for _, d := range ds {
		// Meta's datasets go in datasets, which every version of the file reads; the
		// other kinds in destinations, with their kind.
		path := fmt.Sprintf("datasets[%d]", len(f.Datasets))
		spec := DatasetSpec{
			Name: d.Name, PixelID: d.PixelID, TestEventCode: d.TestEventCode, APIVersion: d.APIVersion,
			Mode: d.Mode, LDU: d.LDU,
		}
		if d.Of() != models.KindMeta {
			path = fmt.Sprintf("destinations[%d]", len(f.Destinations))
			spec.Kind, spec.EventSource, spec.LoginAccount, spec.ClientID, spec.Consent = d.Of(), d.EventSource, d.LoginAccount, d.ClientID, d.Consent
			if d.EventNames != "" {
				// Written by EventNamesJSON; one that cannot be read is none.
				_ = json.Unmarshal([]byte(d.EventNames), &spec.EventNames)
			}
		}
		if d.TokenSealed != "" {
			spec.AccessTokenEnv = d.TokenEnv
			if spec.AccessTokenEnv == "" {
				tokenEnv, _ := suggestedEnvs(d.Of(), d.Name)
				spec.AccessTokenEnv = suggest(tokenEnv)
				notes = append(notes, Note{Path: path + ".access_token_env", Message: fmt.Sprintf(
					"the token (…%s) was saved in the web UI; %s is a suggested name: set it to the token wherever this file is applied", d.TokenLast4, spec.AccessTokenEnv)})
			}
		}
		if d.AppSecretSealed != "" {
			spec.AppSecretEnv = d.AppSecretEnv
			if spec.AppSecretEnv == "" {
				_, secretEnv := suggestedEnvs(d.Of(), d.Name)
				spec.AppSecretEnv = suggest(secretEnv)
				notes = append(notes, Note{Path: path + ".app_secret_env", Message: fmt.Sprintf(
					"the app secret was saved in the web UI; %s is a suggested name: set it to the app secret wherever this file is applied", spec.AppSecretEnv)})
			}
		}
		if spec.Kind == "" {
			f.Datasets = append(f.Datasets, spec)
		} else {
			f.Destinations = append(f.Destinations, spec)
		}
	}
	settings, ok := storedJunk(acc.JunkSettings)
	if !ok {
		return File{}, nil, fmt.Errorf("setup: export: account %s has unreadable junk settings", acc.Slug)
	}
	if len(settings) > 0 {
		f.Junk = settings
	}
	rs, err := s.SendRules(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	names := map[int64]string{}
	byID := map[int64]models.Dataset{}
	for _, d := range ds {
		names[d.ID], byID[d.ID] = d.Name, d
	}
	f.SendRules = make([]RuleSpec, 0, len(rs))
	for _, r := range rs {
		if isMapping(r) {
			continue // in stage_mappings
		}
		spec, problems := rule.SpecOf(r)
		if len(problems) > 0 {
			return File{}, nil, fmt.Errorf("setup: export: send rule %q: %s", r.Name, problems[0])
		}
		f.SendRules = append(f.SendRules, ruleSpecOf(r, spec, byID))
	}
	ss, err := s.Stages(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	f.Stages = exportStages(ss)
	if f.StageMappings, err = exportMappings(rs, byID); err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	qs, err := s.Sequences(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	f.Sequences = exportSequences(qs, names)
	crmSpecs, crmNotes, err := exportCRM(ctx, s, cs, publicURL, suggest)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	f.CRMConnections = crmSpecs
	sks, err := s.SiteKeys(ctx, acc.ID)
	if err != nil {
		return File{}, nil, fmt.Errorf("setup: export: %w", err)
	}
	f.SiteKeys = exportSiteKeys(sks)
	return f, append(notes, crmNotes...), nil
}

// ruleSpecOf is a stored rule as the file writes it, with its
// destinations (destinationsOf; byID: the account's).
func ruleSpecOf(r models.SendRule, spec rule.Spec, byID map[int64]models.Dataset) RuleSpec {
	dataset, dests := destinationsOf(r, byID)
	out := RuleSpec{
		Name: r.Name, Dataset: dataset, Destinations: dests, Mode: spec.Mode, EventName: r.EventName, ActionSource: r.ActionSource,
		Combinator: spec.Combinator, Conditions: spec.Conditions, Groups: spec.Groups, TestEventCode: r.TestEventCode, Enabled: r.Enabled,
	}
	if out.Mode == "" {
		out.Mode = rule.AutomaticCompleted
	}
	if out.Combinator == "" {
		out.Combinator = rule.And
	}
	if out.Conditions == nil {
		out.Conditions = []rule.Condition{}
	}
	out.Value, out.Currency = valueSpecOf(r), currencySpecOf(r)
	return out
}
