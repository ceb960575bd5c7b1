package store_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Two datasets whose long names agree on the part a default rule's name
// keeps get default rules with different names, each a name every form
// and setup file takes.
func TestDefaultRuleNamesFit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		common := string([]rune(strings.Repeat("Ünïcode dataset ", 6))[:90])
		for i, suffix := range []string{" one", " two"} {
			d := models.Dataset{AccountID: a.ID, Name: common + suffix, PixelID: "12345678901234" + string(rune('5'+i)), Mode: models.ModeDryRun, LDU: models.LDUOff}
			if err := s.CreateDataset(ctx, &d); err != nil {
				t.Fatalf("dataset %d: %v", i, err)
			}
		}
		rules, err := s.SendRules(ctx, a.ID)
		if err != nil || len(rules) != 2 {
			t.Fatalf("rules = %v, %v; want two default rules", rules, err)
		}
		if rules[0].Name == rules[1].Name {
			t.Errorf("both default rules are named %q", rules[0].Name)
		}
		for _, r := range rules {
			if msg := name.Problem(r.Name); msg != "" || utf8.RuneCountInString(r.Name) > name.MaxLen {
				t.Errorf("default rule name %q: %s", r.Name, msg)
			}
		}
	})
}
