package store_test

import (
	"errors"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func stageNames(t *testing.T, s *store.Store, accountID int64) string {
	t.Helper()
	ss, err := s.Stages(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range ss {
		n := x.Name
		if x.Booking {
			n += "*"
		}
		out = append(out, n)
	}
	return strings.Join(out, ",")
}

func stageNamed(t *testing.T, s *store.Store, accountID int64, name string) models.Stage {
	t.Helper()
	ss, err := s.Stages(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ss {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("no stage %q", name)
	return models.Stage{}
}

func testDataset(t *testing.T, s *store.Store, acc models.Account, name, pixel string) models.Dataset {
	t.Helper()
	d := models.Dataset{AccountID: acc.ID, Name: name, PixelID: pixel, Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func mappingsOf(t *testing.T, s *store.Store, accountID int64) []models.SendRule {
	t.Helper()
	rules, err := s.SendRules(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.SendRule
	for _, r := range rules {
		if r.Mode == "stage" {
			out = append(out, r)
		}
	}
	return out
}

// The template makes its three mappings and the stages the account lacks,
// once: a second time, or on another account's dataset, it makes nothing.
func TestStartStageTemplate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := testDataset(t, s, a, "Main", "111111111111111")
		other := testDataset(t, s, b, "Other", "222222222222222")
		won := stageNamed(t, s, a.ID, "won")
		if err := s.DeleteStage(ctx, a.ID, won.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartStageTemplate(ctx, a.ID, other.ID, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("template on beta's dataset: err = %v; want ErrNotFound", err)
		}
		made, err := s.StartStageTemplate(ctx, a.ID, d.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range mappingsOf(t, s, a.ID) {
			got = append(got, m.Name+"/"+m.Stage+"/"+m.EventName+"/"+m.ValueField)
		}
		want := "qualified to QualifiedLead/qualified/QualifiedLead/,booked to Schedule/booked/Schedule/,won to Purchase/won/Purchase/change"
		if len(made) != 3 || strings.Join(got, ",") != want {
			t.Errorf("template mappings = %q; want %q", got, want)
		}
		if got := stageNames(t, s, a.ID); got != "qualified,booked*,won" {
			t.Errorf("stages after the template = %s; want won added back at the end", got)
		}
		if _, err := s.StartStageTemplate(ctx, a.ID, d.ID, nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second template: err = %v; want ErrConflict", err)
		}
		if n := len(mappingsOf(t, s, a.ID)); n != 3 {
			t.Errorf("%d mappings after a second template; want 3", n)
		}
		if n := len(mappingsOf(t, s, b.ID)); n != 0 {
			t.Errorf("beta has %d mappings; want none", n)
		}
	})
}

// A name a send rule has already gets the dataset's name, then a number.
func TestMappingName(t *testing.T) {
	t.Parallel()
	m := models.SendRule{ID: 9, Stage: "won", EventName: "Purchase"}
	rules := []models.SendRule{{ID: 1, Name: "Won to purchase"}, {ID: 9, Name: "won to Purchase (Main)"}}
	if got := store.MappingName(m, "Main", rules); got != "won to Purchase (Main)" {
		t.Errorf("MappingName = %q; want the dataset's name added (its own name does not count)", got)
	}
	m.ID = 0
	if got := store.MappingName(m, "Main", rules); got != "won to Purchase (Main) 2" {
		t.Errorf("MappingName = %q; want a number added", got)
	}
	m.Stage = strings.Repeat("s", 120)
	if got := store.MappingName(m, "Main", nil); len([]rune(got)) != 100 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long MappingName = %q; want it cut to 100 characters", got)
	}
}

// Renaming a stage renames its mappings' stage, and the name of one named
// after it, each a new version; a name another stage has, in any case, is
// refused.
func TestRenameStage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := testDataset(t, s, a, "Main", "111111111111111")
		if _, err := s.StartStageTemplate(ctx, a.ID, d.ID, nil); err != nil {
			t.Fatal(err)
		}
		custom := models.SendRule{AccountID: a.ID, DatasetID: d.ID, Name: "Big deals", Mode: "stage", Stage: "WON", EventName: "BigDeal",
			Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(ctx, &custom, nil); err != nil {
			t.Fatal(err)
		}
		won := stageNamed(t, s, a.ID, "won")
		if _, err := s.RenameStage(ctx, a.ID, won.ID, "Booked", nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("rename to Booked: err = %v; want ErrConflict", err)
		}
		st, err := s.RenameStage(ctx, a.ID, won.ID, "Closed won", nil)
		if err != nil || st.Name != "Closed won" {
			t.Fatalf("rename = %+v, %v", st, err)
		}
		var got []string
		for _, m := range mappingsOf(t, s, a.ID) {
			got = append(got, m.Name+"/"+m.Stage)
		}
		want := "qualified to QualifiedLead/qualified,booked to Schedule/booked,Closed won to Purchase/Closed won,Big deals/Closed won"
		if strings.Join(got, ",") != want {
			t.Errorf("mappings after the rename = %q; want %q", got, want)
		}
		vs, err := s.SendRuleVersions(ctx, a.ID, custom.ID, 10)
		if err != nil || len(vs) != 2 {
			t.Errorf("versions of a renamed stage's mapping = %d, %v; want 2", len(vs), err)
		}
		if _, err := s.RenameStage(ctx, a.ID, won.ID, "closed WON", nil); err != nil {
			t.Errorf("a new case of its own name: %v", err)
		}
	})
}

// Moving, the booking stage (one at most) and deleting a stage no mapping
// uses, in one account only.
func TestStageListEdits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := testDataset(t, s, a, "Main", "111111111111111")
		won := stageNamed(t, s, a.ID, "won")
		if err := s.MoveStage(ctx, a.ID, won.ID, -1); err != nil {
			t.Fatal(err)
		}
		if err := s.MoveStage(ctx, a.ID, won.ID, -5); err != nil {
			t.Fatal(err)
		}
		if got := stageNames(t, s, a.ID); got != "qualified,won,booked*" {
			t.Errorf("after moving won up = %s", got)
		}
		if err := s.SetBookingStage(ctx, a.ID, won.ID, true); err != nil {
			t.Fatal(err)
		}
		if got := stageNames(t, s, a.ID); got != "qualified,won*,booked" {
			t.Errorf("after making won the booking stage = %s", got)
		}
		if err := s.SetBookingStage(ctx, a.ID, won.ID, false); err != nil {
			t.Fatal(err)
		}
		if got := stageNames(t, s, a.ID); got != "qualified,won,booked" {
			t.Errorf("after unmarking won = %s", got)
		}
		if err := s.MoveStage(ctx, b.ID, won.ID, 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("beta moves alpha's stage: err = %v; want ErrNotFound", err)
		}
		if err := s.SetBookingStage(ctx, b.ID, won.ID, true); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("beta marks alpha's stage: err = %v; want ErrNotFound", err)
		}
		if err := s.DeleteStage(ctx, b.ID, won.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("beta deletes alpha's stage: err = %v; want ErrNotFound", err)
		}
		m := models.SendRule{AccountID: a.ID, DatasetID: d.ID, Name: "won to Purchase", Mode: "stage", Stage: "Won", EventName: "Purchase",
			Value: new(250.0), Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(ctx, &m, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteStage(ctx, a.ID, won.ID); !errors.Is(err, store.ErrStageInUse) {
			t.Errorf("delete a mapped stage: err = %v; want ErrStageInUse", err)
		}
		if err := s.DeleteSendRule(ctx, a.ID, m.ID, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteStage(ctx, a.ID, won.ID); err != nil {
			t.Errorf("delete an unmapped stage: %v", err)
		}
		if got := stageNames(t, s, a.ID); got != "qualified,booked" {
			t.Errorf("after deleting won = %s", got)
		}
		if got := stageNames(t, s, b.ID); got != "qualified,booked*,won" {
			t.Errorf("beta's stages = %s; want the template's", got)
		}
	})
}

// A mapping moves among its stage's mappings only, past the rules and
// other stages' mappings between them.
func TestMoveSendRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := testDataset(t, s, a, "Main", "111111111111111")
		mk := func(stage, event string) models.SendRule {
			r := models.SendRule{AccountID: a.ID, DatasetID: d.ID, Name: stage + " to " + event, Mode: "stage", Stage: stage, EventName: event,
				Combinator: "and", Conditions: "[]", Enabled: true}
			if err := s.CreateSendRule(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			return r
		}
		w1 := mk("won", "Purchase")
		mk("booked", "Schedule")
		w2 := mk("Won", "BigDeal")
		if err := s.MoveSendRule(ctx, b.ID, w2.ID, -1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("beta moves alpha's mapping: err = %v; want ErrNotFound", err)
		}
		if err := s.MoveSendRule(ctx, a.ID, w2.ID, -1); err != nil {
			t.Fatal(err)
		}
		rules, _ := s.SendRules(ctx, a.ID)
		var names []string
		for _, r := range rules {
			names = append(names, r.Name)
		}
		want := "Completed leads to Main,Won to BigDeal,booked to Schedule,won to Purchase"
		if strings.Join(names, ",") != want {
			t.Errorf("order = %q; want %q", names, want)
		}
		if err := s.MoveSendRule(ctx, a.ID, w2.ID, -1); err != nil {
			t.Fatal(err)
		}
		rules, _ = s.SendRules(ctx, a.ID)
		if rules[1].ID != w2.ID || rules[3].ID != w1.ID {
			t.Errorf("moving the first of its stage up changed the order: %+v", rules)
		}
	})
}

// Changes are counted per stage through the account's leads, the junk
// markers aside.
func TestStageChangeCounts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC()
		la := storedLead(t, s, a, now.Add(-time.Hour), "ann@example.com")
		lb := storedLead(t, s, b, now.Add(-time.Hour), "bob@example.com")
		add := func(l models.Lead, stage string, i int) {
			c := models.StageChange{AccountID: l.AccountID, LeadID: l.ID, Stage: stage, OccurredAt: now.Add(time.Duration(i) * time.Second), CreatedAt: now}
			if _, err := decidetest.Mark(ctx, s, c); err != nil {
				t.Fatal(err)
			}
		}
		for i, st := range []string{"Proposal", "Proposal", "won", "junk", "not_junk", "Proposal"} {
			add(la, st, i)
		}
		add(lb, "Lost", 0)
		got, err := s.StageChangeCounts(ctx, a.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != (store.StageCount{Stage: "Proposal", Changes: 3}) || got[1] != (store.StageCount{Stage: "won", Changes: 1}) {
			t.Errorf("counts = %+v; want Proposal 3, won 1", got)
		}
	})
}
