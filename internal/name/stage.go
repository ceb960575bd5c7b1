package name

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/leadsignal/leadsignal/models"
)

// StageProblem says what is wrong with s as a CRM stage's name, or ""
// when it can be one: a name (Problem) that is not one of the junk
// markers, which are a person's verdict on the lead page.
func StageProblem(s string) string {
	switch {
	case s == "":
		return "required: the CRM stage, like qualified or won"
	case strings.EqualFold(s, models.StageJunk) || strings.EqualFold(s, models.StageNotJunk):
		return fmt.Sprintf("%s is a person's verdict, set on the lead page; it is not a CRM stage", s)
	}
	return Problem(s)
}

// StageKey is how stage labels compare: "Closed Won", "closedwon" and
// "Closed-won" are one label. It keeps a label's letters and digits,
// lower-cased, and drops case, spaces and punctuation.
func StageKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Stages finds an account's stage by a label: its name or one of its
// aliases, and the labels of the account's CRM connections' stage tables
// mapped to it, all compared by StageKey. The zero value knows no stage.
type Stages struct {
	list  []models.Stage
	byKey map[string]int
}

// NewStages indexes stages (in the account's order) with their aliases
// and the CRM stage labels mapped to them (crm_stages rows whose Stage is
// set). A stage's own name and aliases win over a CRM label; the first
// stage to claim a key keeps it.
func NewStages(stages []models.Stage, crmLabels []models.CRMStage) Stages {
	ix := Stages{list: stages, byKey: make(map[string]int, len(stages)*2)}
	claim := func(label string, i int) {
		if k := StageKey(label); k != "" {
			if _, taken := ix.byKey[k]; !taken {
				ix.byKey[k] = i
			}
		}
	}
	for i, s := range stages {
		claim(s.Name, i)
	}
	for i, s := range stages {
		for _, a := range s.Aliases {
			claim(a, i)
		}
	}
	for _, l := range crmLabels {
		if i := slices.IndexFunc(stages, func(s models.Stage) bool { return strings.EqualFold(s.Name, l.Stage) }); i >= 0 {
			claim(l.Label, i)
		}
	}
	return ix
}

// Index is the position in the account's order of the stage that label
// names, or -1 when it names none (an unmapped label).
func (ix Stages) Index(label string) int {
	if i, ok := ix.byKey[StageKey(label)]; ok {
		return i
	}
	return -1
}

// Resolve is the name of the stage that label names, and true; label
// itself and false when it names none.
func (ix Stages) Resolve(label string) (string, bool) {
	if i := ix.Index(label); i >= 0 {
		return ix.list[i].Name, true
	}
	return label, false
}

// List is the account's stages, in order.
func (ix Stages) List() []models.Stage { return ix.list }
