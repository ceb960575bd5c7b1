package rule

import (
	"fmt"

	"github.com/leadsignal/leadsignal/models"
)

// A rule's cost is what matching one lead costs it, in units of one step
// per byte of a field read: a regular expression costs its program's size
// (Go's regexp is linear in the input, times that size), any other
// condition 1. A condition reads at most MaxFieldRead bytes, so a lead
// costs an account at most MaxAccountCost × MaxFieldRead steps, whatever
// its rules: about a third of a second of one core for the costliest
// account, spent in that account's own capture writer only.
const MaxAccountCost = 5000

// Cost is what matching one lead costs m (see MaxAccountCost).
func (m *Matcher) Cost() int {
	n := 0
	for _, c := range m.conds {
		n += max(1, c.cost)
	}
	return n
}

// AccountCost is what matching one lead costs an account's enabled send
// rules together. A rule that does not compile costs nothing: it matches
// nothing.
func AccountCost(rules []models.SendRule) int {
	n := 0
	for _, r := range rules {
		if !r.Enabled {
			continue
		}
		if m, problems := CompileRule(r, Schema{Open: true}); len(problems) == 0 {
			n += m.Cost()
		}
	}
	return n
}

// CostProblem says what is wrong with total as the cost of an account's
// enabled send rules together (AccountCost), or "" when it is within
// MaxAccountCost.
func CostProblem(total int) string {
	if total <= MaxAccountCost {
		return ""
	}
	return fmt.Sprintf("the account's enabled rules together would cost %d units per lead, over the limit of %d: "+
		"simplify or remove regular expressions (each costs its size), or disable rules you no longer use", total, MaxAccountCost)
}
