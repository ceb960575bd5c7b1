package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// sequencesFile is acmeFile with two sequences, one naming its dataset in
// another case.
func sequencesFile() File {
	f := acmeFile()
	f.Sequences = []SequenceSpec{
		{Dataset: "Main", InitialEvent: "Lead", FinalEvent: "Purchase"},
		{Dataset: " demo ", InitialEvent: "Contact", FinalEvent: "QualifiedLead"},
	}
	return f
}

// sequencesOf lists an account's sequences as "dataset id: initial →
// final".
func sequencesOf(t *testing.T, s *store.Store, slug string) []string {
	t.Helper()
	a, err := s.AccountBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := s.Sequences(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range qs {
		out = append(out, fmt.Sprintf("%d: %s → %s", q.DatasetID, q.InitialEvent, q.FinalEvent))
	}
	return out
}

func TestDecodeSequences(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(`{"account": {"slug": "acme"},
		"sequences": [{"dataset": "Main", "initial_event": "Lead", "final_event": "Purchase"}]}`))
	if len(problems) > 0 {
		t.Fatalf("Decode problems = %q", problems)
	}
	if want := []SequenceSpec{{Dataset: "Main", InitialEvent: "Lead", FinalEvent: "Purchase"}}; !reflect.DeepEqual(f.Sequences, want) {
		t.Errorf("Decode sequences = %+v; want %+v", f.Sequences, want)
	}
	if f, _ := Decode(strings.NewReader(`{"account": {"slug": "acme"}}`)); f.Sequences != nil {
		t.Errorf("absent sequences decode as %+v; want nil (left as they are)", f.Sequences)
	}
	if f, _ := Decode(strings.NewReader(`{"account": {"slug": "acme"}, "sequences": []}`)); f.Sequences == nil || len(f.Sequences) != 0 {
		t.Errorf("an empty list decodes as %#v; want an empty list (delete them all)", f.Sequences)
	}
}

// Every problem of the sequences is listed with its JSON path; a dataset
// neither the file nor the account has is Apply's to find (below).
func TestValidateSequences(t *testing.T) {
	t.Parallel()
	f := acmeFile()
	f.Sequences = []SequenceSpec{
		{Dataset: "Nope", InitialEvent: "Lead", FinalEvent: "Purchase"},
		{Dataset: "Main", InitialEvent: "Lead", FinalEvent: "Lead"},
		{Dataset: "Main", InitialEvent: "lead", FinalEvent: "Won!"},
		{Dataset: "", InitialEvent: "", FinalEvent: "Purchase"},
		{Dataset: "Demo", InitialEvent: "Lead", FinalEvent: "Purchase"},
		{Dataset: "demo", InitialEvent: "Lead", FinalEvent: "Purchase"},
	}
	var got []string
	for _, p := range f.Validate(env(acmeEnv())) {
		got = append(got, p.String())
	}
	want := []string{
		`sequences[1].final_event: must differ from initial_event: a sequence goes from one event to a later, different one`,
		`sequences[2].initial_event: write Lead for Meta's standard event: event names are case-sensitive, and "lead" would be a separate custom event`,
		`sequences[2].final_event: '!' is not allowed in an event name: use letters, digits, _, - and spaces`,
		`sequences[3].dataset: required: the name of one of the datasets`,
		`sequences[3].initial_event: choose an event, like Lead, or write a custom event name`,
		`sequences[5]: is also sequences[4]: give each sequence once`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	f.Sequences = make([]SequenceSpec, store.MaxSequences+1)
	for i := range f.Sequences {
		f.Sequences[i] = SequenceSpec{Dataset: "Main", InitialEvent: "Lead", FinalEvent: fmt.Sprintf("Step%d", i)}
	}
	if ps := f.Validate(env(acmeEnv())); len(ps) != 1 || ps[0].Path != "sequences" || !strings.Contains(ps[0].Message, "at most 20 sequences, not 21") {
		t.Errorf("21 sequences: %q; want one problem at sequences", ps)
	}
}

// Apply creates the file's sequences, then changes nothing; a list
// present replaces the account's, keeping the ones it has; a file without
// sequences leaves them; an invalid one changes nothing.
func TestApplySequences(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		r := mustApply(t, s, box, acmeEnv(), sequencesFile())
		want := []string{
			`sequences[0]: created "Lead → Purchase" on Main`,
			`sequences[1]: created "Contact → QualifiedLead" on Demo`,
		}
		if got := changesUnder(r.Changes, "sequences"); !slices.Equal(got, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if r.Summary.SequencesAdded != 2 || r.Summary.SequencesDeleted != 0 {
			t.Errorf("summary = %+v; want 2 sequences added", r.Summary)
		}
		st := load(t, s, "acme")
		main, demo := datasetNamed(t, st.Datasets, "Main"), datasetNamed(t, st.Datasets, "Demo")
		first := sequencesOf(t, s, "acme")
		if want := []string{fmt.Sprintf("%d: Lead → Purchase", main.ID), fmt.Sprintf("%d: Contact → QualifiedLead", demo.ID)}; !slices.Equal(first, want) {
			t.Fatalf("sequences = %q; want %q", first, want)
		}
		if r := mustApply(t, s, box, acmeEnv(), sequencesFile()); len(r.Changes) != 0 {
			t.Errorf("second Apply changes = %q; want none", r.Changes)
		}

		f := sequencesFile()
		f.Sequences = []SequenceSpec{f.Sequences[1], {Dataset: "Main", InitialEvent: "Lead", FinalEvent: "Schedule"}}
		r = mustApply(t, s, box, acmeEnv(), f)
		want = []string{
			`sequences: deleted "Lead → Purchase" on Main`,
			`sequences[1]: created "Lead → Schedule" on Main`,
		}
		if got := changesUnder(r.Changes, "sequences"); !slices.Equal(got, want) {
			t.Errorf("replace changes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		a, _ := s.AccountBySlug(t.Context(), "acme")
		qs, _ := s.Sequences(t.Context(), a.ID)
		if len(qs) != 2 || qs[0].InitialEvent != "Contact" {
			t.Errorf("after replace: %+v; want Contact → QualifiedLead kept first", qs)
		}

		f.Sequences = nil
		if r := mustApply(t, s, box, acmeEnv(), f); len(changesUnder(r.Changes, "sequences")) != 0 {
			t.Errorf("a file without sequences changed them: %q", r.Changes)
		}
		bad := sequencesFile()
		bad.Sequences = append(bad.Sequences, SequenceSpec{Dataset: "Nope", InitialEvent: "Lead", FinalEvent: "Purchase"})
		_, err := Apply(t.Context(), s, box, env(acmeEnv()), bad, Options{})
		if inv := new(*Invalid); !errors.As(err, inv) || len((*inv).Problems) != 1 ||
			(*inv).Problems[0].String() != `sequences[2].dataset: no dataset is named "Nope" in the file or the account; there are "Main", "Demo"` {
			t.Errorf("unknown dataset err = %v; want its problem at sequences[2].dataset", err)
		}
		if got := sequencesOf(t, s, "acme"); len(got) != 2 {
			t.Errorf("after an invalid file: %q; want the two unchanged", got)
		}

		f.Sequences = []SequenceSpec{}
		if r := mustApply(t, s, box, acmeEnv(), f); r.Summary.SequencesDeleted != 2 || len(sequencesOf(t, s, "acme")) != 0 {
			t.Errorf("an empty list: summary %+v; want both deleted", r.Summary)
		}
	})
}

// Export writes the sequences with their datasets by name, and applying
// the export to another account makes the same sequences there.
func TestExportSequencesRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		box := newBox(t)
		mustApply(t, s, box, acmeEnv(), sequencesFile())
		f, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		want := []SequenceSpec{{Dataset: "Main", InitialEvent: "Lead", FinalEvent: "Purchase"}, {Dataset: "Demo", InitialEvent: "Contact", FinalEvent: "QualifiedLead"}}
		if !reflect.DeepEqual(f.Sequences, want) {
			t.Errorf("export sequences = %+v; want %+v", f.Sequences, want)
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"sequences":[{"dataset":"Main","initial_event":"Lead","final_event":"Purchase"}`) {
			t.Errorf("export JSON %s lacks the sequences", b)
		}
		clone, problems := Decode(strings.NewReader(strings.ReplaceAll(string(b), `"acme"`, `"bright"`)))
		if len(problems) > 0 {
			t.Fatalf("decode the export: %q", problems)
		}
		mustApply(t, s, box, acmeEnv(), clone)
		st := load(t, s, "bright")
		main, demo := datasetNamed(t, st.Datasets, "Main"), datasetNamed(t, st.Datasets, "Demo")
		if got, want := sequencesOf(t, s, "bright"), []string{fmt.Sprintf("%d: Lead → Purchase", main.ID), fmt.Sprintf("%d: Contact → QualifiedLead", demo.ID)}; !slices.Equal(got, want) {
			t.Errorf("clone's sequences = %q; want %q", got, want)
		}

		// An account without sequences exports an empty list.
		if _, err := s.CreateAccount(t.Context(), models.Account{Slug: "empty", Name: "Empty", Timezone: "UTC", Currency: "USD"}, 0); err != nil {
			t.Fatal(err)
		}
		if f, _, err := Export(t.Context(), s, "empty", ""); err != nil || f.Sequences == nil || len(f.Sequences) != 0 {
			t.Errorf("empty account's export sequences = %#v, %v; want []", f.Sequences, err)
		}
	})
}
