package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// costly is what the costly account's send rules cost: each regex rule's
// pattern and cost, and the account's total against rule.MaxAccountCost.
type costly struct {
	patterns []string
	costs    []int
	total    int
	max      int
}

// costlyRules gives acc the costliest send rules its budget allows: while
// the budget has room, an automatic_match rule on its first dataset with one
// regex condition on the message, as costly as the room left and at most
// rule.MaxRegexSize. Each rule passes the checks the rule form makes
// (rule.CheckRule), and the account's enabled rules together pass the
// budget's (rule.CostProblem): the rules an editor could save.
func costlyRules(ctx context.Context, st *store.Store, acc models.Account) (costly, error) {
	datasets, err := st.Datasets(ctx, acc.ID)
	if err != nil {
		return costly{}, err
	}
	if len(datasets) == 0 {
		return costly{}, errors.New("the costly account has no dataset")
	}
	c := costly{max: rule.MaxAccountCost}
	for room := rule.MaxAccountCost; ; {
		pattern, cost := costliestPattern(min(room, rule.MaxRegexSize))
		if cost == 0 {
			break
		}
		cond, err := json.Marshal([]rule.Condition{{Field: "message", MatchType: rule.Regex, Pattern: pattern}})
		if err != nil {
			return c, err
		}
		n := len(c.patterns) + 1
		r := models.SendRule{AccountID: acc.ID, DatasetID: datasets[0].ID, Name: fmt.Sprintf("Costly %d", n),
			Mode: string(rule.AutomaticMatch), EventName: fmt.Sprintf("CostlyRule%d", n), Combinator: string(rule.And),
			Conditions: string(cond), Enabled: true}
		if _, problems := rule.CheckRule(r, rule.Schema{Open: true}); len(problems) > 0 {
			return c, fmt.Errorf("costly rule %q: %s", pattern, problems[0])
		}
		if err := st.CreateSendRule(ctx, &r, nil); err != nil {
			return c, err
		}
		c.patterns, c.costs = append(c.patterns, pattern), append(c.costs, cost)
		room -= cost
	}
	rules, err := st.SendRules(ctx, acc.ID)
	if err != nil {
		return c, err
	}
	c.total = rule.AccountCost(rules)
	if msg := rule.CostProblem(c.total); msg != "" {
		return c, errors.New("the costly rules could not be saved: " + msg)
	}
	return c, nil
}

// costliestPattern is the costliest pattern (?:.*a){n}x that costs at most
// limit, as the rule package counts (rule.Matcher.Cost), and its cost; 0
// when none fits. Over a text of "a" without "x" it never matches, and
// keeps every state of its program alive at every byte it reads.
func costliestPattern(limit int) (string, int) {
	best, bestCost := "", 0
	for n := 1; ; n++ {
		p := fmt.Sprintf("(?:.*a){%d}x", n)
		m, problems := rule.Compile(rule.Spec{Mode: rule.AutomaticMatch, EventName: "Lead",
			Conditions: []rule.Condition{{Field: "message", MatchType: rule.Regex, Pattern: p}}}, rule.Schema{Open: true})
		if len(problems) > 0 || m.Cost() > limit {
			return best, bestCost
		}
		best, bestCost = p, m.Cost()
	}
}

// describe says what the costly rules are: "5 × (?:.*a){332}x (999
// each)", or each pattern and its cost when they differ.
func describe(c costly) string {
	same := len(c.patterns) > 0
	for _, p := range c.patterns {
		same = same && p == c.patterns[0]
	}
	if same {
		return fmt.Sprintf("%d × %s (%d each)", len(c.patterns), c.patterns[0], c.costs[0])
	}
	var parts []string
	for i, p := range c.patterns {
		parts = append(parts, fmt.Sprintf("%s (%d)", p, c.costs[i]))
	}
	return strings.Join(parts, ", ")
}
