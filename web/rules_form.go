package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// customFieldsSince is how far back the rule form looks for the custom
// form fields a condition may name.
const customFieldsSince = 30 * 24 * time.Hour

// ruleEnv is what checking and showing a rule form of an account needs.
type ruleEnv struct {
	account  models.Account
	datasets []models.Dataset
	// rules are the account's send rules, in their order: the cost budget
	// and the warnings of a shared event read them.
	rules  []models.SendRule
	schema rule.Schema
}

// ruleEnv loads the account's datasets, its rules, and the custom fields
// its leads carried lately, with those the saved rule (0 for none) already
// names, so a saved rule stays savable when its fields grow old.
// ErrNotFound: the account has no such rule.
func (h *Handler) ruleEnv(ctx context.Context, a models.Account, ruleID int64) (ruleEnv, error) {
	// Problems speak to the person at the form (rule.Schema.Words).
	env := ruleEnv{account: a, schema: rule.Schema{Words: true}}
	var err error
	if env.datasets, err = h.store.Datasets(ctx, a.ID); err != nil {
		return env, err
	}
	if env.rules, err = h.store.SendRules(ctx, a.ID); err != nil {
		return env, err
	}
	if env.schema.Custom, err = h.store.CustomFieldNames(ctx, a.ID, h.now().Add(-customFieldsSince)); err != nil {
		return env, err
	}
	if ruleID != 0 {
		i := slices.IndexFunc(env.rules, func(r models.SendRule) bool { return r.ID == ruleID })
		if i < 0 {
			return env, store.ErrNotFound
		}
		saved := env.rules[i]
		spec, _ := rule.SpecOf(saved)
		for _, c := range spec.All() {
			if name, ok := strings.CutPrefix(c.Field, rule.CustomPrefix); ok {
				env.schema.Custom = append(env.schema.Custom, name)
			}
		}
		for _, f := range []string{saved.ValueField, saved.CurrencyField} {
			if name, ok := strings.CutPrefix(f, rule.CustomPrefix); ok {
				env.schema.Custom = append(env.schema.Custom, name)
			}
		}
	}
	return env, nil
}

// choices are the options of the rule form's selects.
func (env ruleEnv) choices() views.RuleChoices {
	ch := views.RuleChoices{Events: rule.StandardEvents, AccountCurrency: env.account.Currency}
	if ch.AccountCurrency == "" {
		ch.AccountCurrency = "none set"
	}
	for _, d := range env.datasets {
		ch.Datasets = append(ch.Datasets, views.Option{Value: strconv.FormatInt(d.ID, 10), Label: destinationLabel(d)})
	}
	for _, m := range rule.Modes {
		w := modes[m]
		ch.Modes = append(ch.Modes, views.RuleMode{Value: string(m), Label: w.label, Help: w.help})
	}
	ch.ActionSources = []views.Option{{Value: "", Label: "From the lead's source"}}
	for _, s := range capi.ActionSources {
		ch.ActionSources = append(ch.ActionSources, views.Option{Value: s, Label: s})
	}
	groups := []views.OptionGroup{{Label: "Lead"}, {Label: "Form fields"}, {Label: "Junk signals"}}
	for _, f := range env.schema.Fields() {
		g := &groups[0]
		switch {
		case strings.HasPrefix(f.Name, rule.CustomPrefix):
			g = &groups[1]
		case strings.HasPrefix(f.Name, rule.JunkReasonPrefix):
			g = &groups[2]
		}
		g.Options = append(g.Options, views.Option{Value: f.Name, Label: f.Label})
		ch.ValueFields = append(ch.ValueFields, f.Name)
	}
	for _, g := range groups {
		if len(g.Options) > 0 {
			ch.Fields = append(ch.Fields, g)
		}
	}
	for _, t := range rule.MatchTypes {
		ch.MatchTypes = append(ch.MatchTypes, views.Option{Value: string(t), Label: matchTypeLabels[t]})
	}
	return ch
}

// ruleChoices are the rule form's choices: its condition rows are fetched
// again as their field or match type changes (ruleConditionRow).
func (env ruleEnv) ruleChoices() views.RuleChoices {
	ch := env.choices()
	ch.RowURL, ch.RowOnMatchType = views.AccountURL(env.account.ID, "/rules/condition-row"), true
	return ch
}

// matchTypeLabels are the match types as the form's select shows them for
// a text field (rule.MatchType.Label).
var matchTypeLabels = func() map[rule.MatchType]string {
	m := make(map[rule.MatchType]string, len(rule.MatchTypes))
	for _, t := range rule.MatchTypes {
		m[t] = t.Label(rule.Text)
	}
	return m
}()

// ruleInput is the rule form as posted, or as a saved rule fills it.
type ruleInput struct {
	ID   int64 // the saved rule the form edits; 0 for a new one
	Name string
	// DatasetIDs are the destinations ticked, in the form's order.
	DatasetIDs    []string
	Mode          string
	EventName     string
	ActionSource  string
	ValueMode     string // none, fixed or field
	Value         string
	ValueField    string
	CurrencyMode  string // account, fixed or field
	Currency      string
	CurrencyField string
	TestEventCode string
	Enabled       bool
	Combinator    string
	Conditions    []rule.Condition
	Groups        []groupInput
}

// readRuleInput reads the posted rule form. Condition rows are the
// repeated cond_field, cond_match_type, cond_pattern and cond_group
// values, in order; groups the repeated group_key and group_combinator.
// A row whose cond_group is the key of a group is that group's, any
// other the rule's own.
func readRuleInput(c echo.Context) ruleInput {
	form, _ := c.FormParams()
	in := ruleInput{
		Name:          strings.TrimSpace(form.Get("name")),
		DatasetIDs:    form["dataset_id"],
		Mode:          form.Get("mode"),
		EventName:     form.Get("event_name"),
		ActionSource:  form.Get("action_source"),
		ValueMode:     form.Get("value_mode"),
		Value:         strings.TrimSpace(form.Get("value")),
		ValueField:    strings.TrimSpace(form.Get("value_field")),
		CurrencyMode:  form.Get("currency_mode"),
		Currency:      strings.ToUpper(strings.TrimSpace(form.Get("currency"))),
		CurrencyField: strings.TrimSpace(form.Get("currency_field")),
		TestEventCode: strings.TrimSpace(form.Get("test_event_code")),
		Enabled:       form.Get("enabled") != "",
		Combinator:    form.Get("combinator"),
	}
	in.ID, _ = strconv.ParseInt(form.Get("rule_id"), 10, 64)
	at := func(vs []string, i int) string {
		if i < len(vs) {
			return vs[i]
		}
		return ""
	}
	keys, combinators := form["group_key"], form["group_combinator"]
	group := map[string]int{}
	// One more than a rule may have, so that Compile says so.
	for i := range min(len(keys), rule.MaxGroups+1) {
		if _, dup := group[keys[i]]; dup || keys[i] == "" {
			continue
		}
		group[keys[i]] = len(in.Groups)
		in.Groups = append(in.Groups, groupInput{Combinator: at(combinators, i)})
	}
	fields, types, patterns, groups := form["cond_field"], form["cond_match_type"], form["cond_pattern"], form["cond_group"]
	rows := min(max(len(fields), len(types), len(patterns)), rule.MaxConditions+1)
	for i := range rows {
		c := rule.Condition{Field: at(fields, i), MatchType: rule.MatchType(at(types, i)), Pattern: at(patterns, i)}
		if g, ok := group[at(groups, i)]; ok {
			in.Groups[g].Conditions = append(in.Groups[g].Conditions, c)
			continue
		}
		in.Conditions = append(in.Conditions, c)
	}
	return in
}

// ruleInputOf fills the form from a saved rule.
func ruleInputOf(r models.SendRule) ruleInput {
	spec, _ := rule.SpecOf(r)
	in := ruleInput{ID: r.ID, Name: r.Name, DatasetIDs: idTexts(r.Destinations()), Mode: r.Mode, EventName: r.EventName,
		ActionSource: r.ActionSource, ValueMode: "none", ValueField: r.ValueField, CurrencyMode: "account", Currency: r.Currency,
		CurrencyField: r.CurrencyField, TestEventCode: r.TestEventCode, Enabled: r.Enabled, Combinator: r.Combinator,
		Conditions: spec.Conditions}
	for _, g := range spec.Groups {
		in.Groups = append(in.Groups, groupInput{Combinator: string(g.Combinator), Conditions: g.Conditions})
	}
	switch {
	case r.Value != nil:
		in.ValueMode, in.Value = "fixed", strconv.FormatFloat(*r.Value, 'f', -1, 64)
	case r.ValueField != "":
		in.ValueMode = "field"
	}
	switch {
	case r.Currency != "":
		in.CurrencyMode = "fixed"
	case r.CurrencyField != "":
		in.CurrencyMode = "field"
	}
	return in
}

// newRuleInput is the form of a new rule: conditions on the account's
// first dataset, with one condition to fill in, and no event name chosen
// yet (a default would be one more rule sending Lead).
func newRuleInput(env ruleEnv) ruleInput {
	in := ruleInput{Mode: string(rule.AutomaticMatch), ValueMode: "none", CurrencyMode: "account",
		Enabled: true, Combinator: string(rule.And), Conditions: []rule.Condition{{MatchType: rule.Equals}}}
	if len(env.datasets) > 0 {
		in.DatasetIDs = []string{strconv.FormatInt(env.datasets[0].ID, 10)}
	}
	return in
}

// idTexts are ids as a form posts them.
func idTexts(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

// sendRule is the rule the form describes, for the account, without its
// checks (checkRule). Value and currency inputs that the chosen modes do
// not use are dropped.
func (in ruleInput) sendRule(accountID int64) models.SendRule {
	r := models.SendRule{ID: in.ID, AccountID: accountID, Name: in.Name, Mode: in.Mode, EventName: in.EventName,
		ActionSource: in.ActionSource, TestEventCode: in.TestEventCode, Enabled: in.Enabled, Combinator: in.Combinator}
	if r.Combinator == "" {
		r.Combinator = string(rule.And)
	}
	r.SetDestinations(in.destinations())
	r.Conditions = in.spec().StoredConditions()
	switch in.ValueMode {
	case "fixed":
		if v, ok := rule.Amount(in.Value); ok {
			r.Value = &v
		}
	case "field":
		r.ValueField = in.ValueField
	}
	if in.ValueMode == "fixed" || in.ValueMode == "field" {
		switch in.CurrencyMode {
		case "fixed":
			r.Currency = in.Currency
		case "field":
			r.CurrencyField = in.CurrencyField
		}
	}
	return r
}

// destinations are the ids of the destinations ticked, each once, in
// order; one that is no id is 0, which no destination has.
func (in ruleInput) destinations() []int64 {
	var ids []int64
	for _, t := range in.DatasetIDs {
		id, _ := strconv.ParseInt(t, 10, 64)
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// ruleForm shows the form as typed, with each problem at its input.
func ruleForm(in ruleInput, env ruleEnv, problems []rule.Problem) views.RuleForm {
	f := views.RuleForm{
		ID:   in.ID,
		Name: views.Field{Name: "name", Label: "Name", Required: true, Value: in.Name, Hint: "Unique in the account, like Qualified leads from Facebook."},
		Dataset: views.Field{Name: "dataset_id", Label: "Destinations",
			Hint: "Where the events go, one event to each: Meta datasets, TikTok, Pinterest or Google Ads destinations, each naming the events its own way."},
		Destinations: in.DatasetIDs,
		Mode:         views.Field{Name: "mode", Label: "Send mode", Value: in.Mode},
		EventName: views.Field{Name: "event_name", Label: "Event name", Value: in.EventName, List: "rule-events",
			Hint: "One of Meta's standard events, or a custom name such as QualifiedLead: letters, digits, _, - and spaces."},
		ActionSource: views.Field{Name: "action_source", Label: "Action source", Value: in.ActionSource,
			Hint: "Where Meta is told the conversion happened."},
		ValueMode: views.Field{Name: "value_mode", Label: "Value", Value: in.ValueMode},
		Value:     views.Field{Name: "value", Label: "Fixed value", Value: in.Value, Hint: "A number, like 250."},
		ValueField: views.Field{Name: "value_field", Label: "Value from the field", Value: in.ValueField, List: "rule-value-fields",
			Hint: "A lead field, like fields.deal_value; leads without a number send no value."},
		CurrencyMode: views.Field{Name: "currency_mode", Label: "Currency", Value: in.CurrencyMode},
		Currency:     views.Field{Name: "currency", Label: "Fixed currency", Value: in.Currency, Hint: "ISO 4217, like USD."},
		CurrencyField: views.Field{Name: "currency_field", Label: "Currency from the field", Value: in.CurrencyField, List: "rule-value-fields",
			Hint: "A lead field holding a code like EUR; other values send the account's currency."},
		TestEventCode: views.Field{Name: "test_event_code", Label: "Test event code for this rule only", Value: in.TestEventCode,
			Hint: "Sends this rule's events to Events Manager's Test Events tab only, whatever the dataset's mode. Leave empty to send for real."},
		Combinator:   views.Field{Name: "combinator", Label: "Combine conditions", Value: in.Combinator},
		Enabled:      in.Enabled,
		Choices:      env.choices(),
		Warnings:     sharedEvents(in.sendRule(env.account.ID), env.rules),
		JunkWarnings: rule.JunkInOr(in.spec()),
	}
	for i, c := range in.Conditions {
		f.Conditions = append(f.Conditions, views.RuleCondition{Key: strconv.Itoa(i), Field: c.Field,
			MatchType: string(c.MatchType), Pattern: c.Pattern})
	}
	// Groups are keyed by their place, whatever keys the page gave them.
	for g, gi := range in.Groups {
		key := "g" + strconv.Itoa(g)
		vg := views.RuleGroup{Key: key, Combinator: gi.Combinator}
		for i, c := range gi.Conditions {
			vg.Conditions = append(vg.Conditions, views.RuleCondition{Key: key + "c" + strconv.Itoa(i), Group: key, Field: c.Field,
				MatchType: string(c.MatchType), Pattern: c.Pattern})
		}
		f.Groups = append(f.Groups, vg)
	}
	fields := map[string]*views.Field{"name": &f.Name, "dataset_id": &f.Dataset, "mode": &f.Mode, "event_name": &f.EventName,
		"action_source": &f.ActionSource, "value_mode": &f.ValueMode, "value": &f.Value, "value_field": &f.ValueField,
		"currency_mode": &f.CurrencyMode, "currency": &f.Currency, "currency_field": &f.CurrencyField,
		"test_event_code": &f.TestEventCode, "combinator": &f.Combinator}
	for _, p := range problems {
		msg := sentence(p.Message)
		if fd, ok := fields[p.Path]; ok {
			if fd.Error == "" {
				fd.Error = msg
			}
			continue
		}
		if c := formRow(&f, p.Path); c != nil {
			m := conditionPath.FindStringSubmatch(p.Path)
			target := map[string]*string{"field": &c.FieldError, "match_type": &c.MatchError, "pattern": &c.PatternError}[m[3]]
			if *target == "" {
				*target = msg
			}
			continue
		}
		if m := groupPath.FindStringSubmatch(p.Path); m != nil {
			if g, _ := strconv.Atoi(m[1]); g < len(f.Groups) {
				target := &f.Groups[g].Error
				if m[2] == "combinator" {
					target = &f.Groups[g].CombinatorError
				}
				*target = msg
				continue
			}
		}
		switch p.Path {
		case "conditions":
			f.ConditionsError = msg
			continue
		case "groups":
			f.GroupsError = msg
			continue
		}
		f.Error = strings.TrimSpace(f.Error + " " + msg)
	}
	return f
}

// sendRuleForm is ruleForm for a send rule: each condition row offers
// what its field takes, and is fetched again as its field or match type
// changes (the stage mapping form fits its rows its own way).
func sendRuleForm(in ruleInput, env ruleEnv, problems []rule.Problem) views.RuleForm {
	f := ruleForm(in, env, problems)
	f.Choices = env.ruleChoices()
	eachRow(&f, func(c *views.RuleCondition) {
		field, known := env.schema.Field(c.Field)
		fitCondition(c, field, known)
	})
	return f
}

// sentence makes a problem's words a sentence: capital first, full stop.
func sentence(s string) string {
	s = capitalize(strings.TrimSpace(s))
	if s != "" && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

func (h *Handler) showNewRule(c echo.Context) error {
	env, err := h.ruleEnv(c.Request().Context(), currentAccount(c).Account, 0)
	if err != nil {
		return err
	}
	f := sendRuleForm(newRuleInput(env), env, nil)
	if len(env.datasets) == 0 {
		f.Error = "Connect a destination first: a rule sends its events to the account's destinations."
	}
	return h.renderRule(c, http.StatusOK, f, nil)
}

func (h *Handler) showRule(c echo.Context) error {
	r, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	env, err := h.ruleEnv(c.Request().Context(), currentAccount(c).Account, r.ID)
	if err != nil {
		return err
	}
	return h.renderRule(c, http.StatusOK, sendRuleForm(ruleInputOf(r), env, nil), &r)
}

// renderRule shows the rule page: the form, and for a saved rule its
// history.
func (h *Handler) renderRule(c echo.Context, status int, f views.RuleForm, saved *models.SendRule) error {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	v := views.RuleView{Form: f}
	title := "New rule"
	if saved != nil {
		title, v.Name, v.EventName = saved.Name, saved.Name, saved.EventName
		v.CanApply = saved.Enabled && rule.Mode(saved.Mode).OnCapture()
		versions, err := h.store.SendRuleVersions(ctx, a.ID, saved.ID, ruleVersionsShown)
		if err != nil {
			return err
		}
		datasets, err := h.store.Datasets(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, ver := range versions {
			v.Versions = append(v.Versions, h.ruleVersion(a, ver, datasets))
		}
	}
	p := h.page(c, title)
	p.Nav = "rules"
	return render(c, status, views.RulePage(p, v))
}

func (h *Handler) createRule(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	env, err := h.ruleEnv(ctx, a.Account, 0)
	if err != nil {
		return err
	}
	in := readRuleInput(c)
	in.ID = 0
	r, problems := checkRule(in, env)
	if len(problems) == 0 {
		err = h.store.CreateSendRule(ctx, &r, &currentUser(c).ID)
		if problems = saveProblems(err); problems == nil && err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return h.renderRule(c, http.StatusUnprocessableEntity, sendRuleForm(in, env, problems), nil)
	}
	h.log.Info("send rule created", "account_id", a.ID, "rule_id", r.ID, "mode", r.Mode)
	msg := "Rule " + r.Name + " created."
	if r.Enabled && rule.Mode(r.Mode).OnCapture() {
		msg += " It checks the leads captured from now on; apply it to those of the last 7 days below."
	}
	setFlash(c, "ok", msg)
	return redirect(c, views.AccountURL(a.ID, "/rules/"+strconv.FormatInt(r.ID, 10)))
}

// saveProblems turns the store's refusals of a rule into the form's
// problems; nil for other errors (and none).
func saveProblems(err error) []rule.Problem {
	switch {
	case errors.Is(err, store.ErrConflict):
		return []rule.Problem{{Path: "name", Message: "Another rule of this account has this name."}}
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrDestinations):
		return []rule.Problem{{Path: "dataset_id", Message: destinationsProblem}}
	}
	return nil
}

func (h *Handler) updateRule(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	saved, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	env, err := h.ruleEnv(ctx, a.Account, saved.ID)
	if err != nil {
		return err
	}
	in := readRuleInput(c)
	in.ID = saved.ID
	r, problems := checkRule(in, env)
	if len(problems) == 0 {
		err = h.store.SaveSendRule(ctx, &r, &currentUser(c).ID)
		if problems = saveProblems(err); problems == nil && err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return h.renderRule(c, http.StatusUnprocessableEntity, sendRuleForm(in, env, problems), &saved)
	}
	setFlash(c, "ok", "Rule "+r.Name+" saved.")
	return redirect(c, views.AccountURL(a.ID, "/rules/"+strconv.FormatInt(r.ID, 10)))
}
