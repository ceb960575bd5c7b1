package setup

import (
	"fmt"
	"slices"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// bigFile is an account with n datasets and 4n send rules: at n =
// store.MaxDatasets, the most datasets an account may have and the most
// send rules a file may hold.
func bigFile(n int) File {
	f := File{Account: AccountSpec{Slug: "big", Name: "Big", Timezone: "UTC", Currency: "USD"}, SendRules: []RuleSpec{}}
	for i := range n {
		f.Datasets = append(f.Datasets, DatasetSpec{Name: fmt.Sprintf("Dataset %02d", i), PixelID: fmt.Sprintf("1000%04d", i), Mode: models.ModeDryRun})
	}
	for i := range 4 * n {
		f.SendRules = append(f.SendRules, RuleSpec{Name: fmt.Sprintf("Rule %03d", i), Dataset: f.Datasets[i%n].Name,
			Mode: rule.AutomaticMatch, EventName: fmt.Sprintf("Event%03d", i), Combinator: rule.And, Enabled: true,
			Conditions: []rule.Condition{{Field: "fields.budget", MatchType: rule.GT, Pattern: "5000"}}})
	}
	return f
}

// BenchmarkPlan previews files of a quarter, half and all of the most
// datasets and rules an account may have: on a new account, and on one
// that has them all in the opposite order. The time per preview grows
// with the size of the file, not with its square.
func BenchmarkPlan(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.New}, {"postgres", storetest.NewPostgres}} {
		for _, n := range []int{store.MaxDatasets / 4, store.MaxDatasets / 2, store.MaxDatasets} {
			b.Run(fmt.Sprintf("%s/%d datasets %d rules", db.name, n, 4*n), func(b *testing.B) {
				s, box, f := db.open(b), newBox(b), bigFile(n)
				plan := func(b *testing.B) {
					for b.Loop() {
						if _, err := Plan(b.Context(), s, box, nil, f, Options{}); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.Run("new account", plan)
				if _, err := Apply(b.Context(), s, box, nil, f, Options{}); err != nil {
					b.Fatal(err)
				}
				slices.Reverse(f.SendRules)
				b.Run("every rule moved", plan)
			})
		}
	}
}
