package web

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// A stage mapping's form is the rule form's inputs (read by
// readRuleInput, shown by ruleForm) without a name or a mode, with a
// stage, repeatable, and a value and a currency that may also come "from
// the change" (value_mode and currency_mode "change").

// mappingInput is the mapping form as posted, or as a saved mapping
// fills it.
type mappingInput struct {
	ruleInput
	Stage      string
	Repeatable bool
}

// fromChange is the value_mode and currency_mode of a value or currency
// taken from the stage change.
const fromChange = "change"

// mappingInputOf fills the form from a saved mapping.
func mappingInputOf(r models.SendRule) mappingInput {
	in := mappingInput{ruleInput: ruleInputOf(r), Stage: r.Stage, Repeatable: r.Repeatable}
	if r.ValueField == models.StageValueFromChange {
		in.ValueMode, in.ValueField = fromChange, ""
	}
	if r.CurrencyField == models.StageValueFromChange {
		in.CurrencyMode, in.CurrencyField = fromChange, ""
	}
	return in
}

// newMappingInput is the form of a new mapping of stage: on the account's
// first dataset, no value, no condition, enabled.
func newMappingInput(env ruleEnv, stage string) mappingInput {
	in := mappingInput{ruleInput: ruleInput{Mode: string(rule.Stage), ValueMode: "none", CurrencyMode: "account", Enabled: true,
		Combinator: string(rule.And)}, Stage: stage}
	if len(env.datasets) > 0 {
		in.DatasetIDs = []string{strconv.FormatInt(env.datasets[0].ID, 10)}
	}
	return in
}

// mapping is the send rule the form describes, without its checks
// (checkMapping) and its name (store.NameMapping).
func (in mappingInput) mapping(accountID int64) models.SendRule {
	ri := in.ruleInput
	ri.Mode = string(rule.Stage)
	if ri.ValueMode == fromChange {
		ri.ValueMode = "none"
	}
	r := ri.sendRule(accountID)
	r.Stage, r.Repeatable = in.Stage, in.Repeatable
	if in.ValueMode == fromChange {
		r.ValueField = models.StageValueFromChange
	}
	if in.ValueMode != "none" {
		switch in.CurrencyMode {
		case "fixed":
			r.Currency = in.Currency
		case "field":
			r.CurrencyField = in.CurrencyField
		case fromChange:
			r.CurrencyField = models.StageValueFromChange
		}
	}
	return r
}

// checkMapping builds the mapping the form describes for one of stages,
// and checks it as rule.CheckRule checks any send rule (a Purchase needs
// a value among the rest), with what only the form can get wrong, and the
// account's cost budget with the mapping in it. Each problem has the path
// of the input at fault; the stage's is "stage". A mapping takes the
// list's spelling of its stage, and a unique name (store.NameMapping).
func checkMapping(in mappingInput, env ruleEnv, stages []models.Stage, before *models.SendRule) (models.SendRule, []rule.Problem) {
	var problems []rule.Problem
	add := func(path, msg string) { problems = append(problems, rule.Problem{Path: path, Message: msg}) }
	for _, t := range append(in.texts(), typed{"stage", in.Stage}) {
		if !utf8.ValidString(t.text) {
			add(t.path, "This is not valid UTF-8 text: type it again.")
		}
	}
	stage := ""
	for _, st := range stages {
		if strings.EqualFold(st.Name, in.Stage) {
			stage = st.Name
		}
	}
	if stage == "" {
		add("stage", "Choose one of the account's stages.")
	}
	in.Stage = stage
	r := in.mapping(env.account.ID)
	if before != nil {
		// The form does not show them (a setup file sets them, and a
		// booking rule converted by migration 0019 may have them): saving
		// the form keeps them, so a test event code never turns live.
		r.ActionSource, r.TestEventCode = before.ActionSource, before.TestEventCode
	}
	if msg := checkDestinations(env.datasets, r); msg != "" {
		add("dataset_id", msg)
	}
	r.Name = store.NameMapping(r, before, datasetName(env.datasets, r.DatasetID), env.rules)
	_, ruleProblems := rule.CheckRule(r, env.schema)
	for _, p := range ruleProblems {
		// Without a value the problem belongs to the choice of one.
		if p.Path == "value" && in.ValueMode == "none" {
			p.Path = "value_mode"
		}
		problems = append(problems, p)
	}
	if len(ruleProblems) == 0 {
		if msg := rule.CostProblem(rule.AccountCost(withRule(env.rules, r))); msg != "" {
			add("conditions", msg)
		}
	}
	checkValueModes(in.ruleInput, add, fromChange)
	return r, problems
}

func datasetName(ds []models.Dataset, id int64) string {
	for _, d := range ds {
		if d.ID == id {
			return d.Name
		}
	}
	return ""
}
