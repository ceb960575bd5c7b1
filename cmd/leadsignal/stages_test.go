package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// writeCSV writes content to a file of the test and returns its path.
func writeCSV(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "deals.csv")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// stages upload prints the preview, unknown labels first with the stage
// each probably means; --apply records it and prints what it recorded.
func TestStagesUpload(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ctx := t.Context()
		d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme")
		s := d.open(t)
		acc, err := s.AccountBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
		ext := "crm-1"
		lead := models.Lead{AccountID: acc.ID, ExternalID: &ext, Source: models.SourceWebsite, CreatedAt: at, ReceivedAt: at,
			Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
		if err := s.InsertLead(ctx, &lead); err != nil {
			t.Fatal(err)
		}
		day := at.Add(time.Hour).Format("2006-01-02 15:04")
		file := writeCSV(t, "External ID,Deal Stage,Close Date\n"+
			"crm-1,Qualified To Buy,"+day+"\n"+
			"crm-1,booked,"+day+"\n"+
			"crm-9,won,"+day+"\n")

		r := d.mustRun(t, "", "stages", "upload", "--account", "acme", "-f", file)
		for _, want := range []string{
			"(deals.csv): 3 rows, previewed",
			"columns: lead.external_id=External ID, stage=Deal Stage, won_at=Close Date; dates month first",
			`  "Qualified To Buy": 1 row, probably qualified`,
			"would record 2, recorded before 0, refused 1",
			"events it would queue: none",
			"  row 4 (External ID): External ID crm-9: no lead of this account has this external id",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("preview lacks %q:\n%s", want, r.stdout)
			}
		}
		if n, _ := s.StageChangeCounts(ctx, acc.ID, 10); len(n) != 0 {
			t.Errorf("the preview recorded %v", n)
		}

		r = d.mustRun(t, "", "stages", "upload", "--account", "acme", "-f", file, "--apply")
		if !strings.Contains(r.stdout, "3 rows, done") || !strings.Contains(r.stdout, "recorded 2, recorded before 0, refused 1") {
			t.Errorf("apply printed:\n%s", r.stdout)
		}
		counts, err := s.StageChangeCounts(ctx, acc.ID, 10)
		if err != nil || len(counts) != 2 {
			t.Errorf("stage changes after apply = %v, %v; want booked and the label Qualified To Buy", counts, err)
		}

		// The same file again: nothing to record, and --apply fails saying so.
		args := []string{"stages", "upload", "--account", "acme", "-f", file, "--apply"}
		r = d.run(t, "", args...)
		wantErr(t, r, args, "Nothing to record: 1 row refused and 2 recorded before.")
	})
}

// --dates says how dates with slashes read: 05/03/2026 is May 3 as the
// account's guess has it, 5 March day first, before the lead of April 1.
func TestStagesUploadDates(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	ctx := t.Context()
	d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme", "--country", "US")
	s := d.open(t)
	acc, err := s.AccountBySlug(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	ext := "crm-1"
	lead := models.Lead{AccountID: acc.ID, ExternalID: &ext, Source: models.SourceWebsite, CreatedAt: at, ReceivedAt: at,
		Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
	if err := s.InsertLead(ctx, &lead); err != nil {
		t.Fatal(err)
	}
	file := writeCSV(t, "External ID,Deal Stage,Close Date\ncrm-1,qualified,05/03/2026\n")
	for _, tt := range []struct {
		dates string
		want  []string
	}{
		{"", []string{"dates month first", "would record 1, recorded before 0, refused 0"}},
		{"day_first", []string{"dates day first", "would record 0, recorded before 0, refused 1",
			"Close Date 05/03/2026 (read as Mar 5, 2026, day first) is before the lead was captured"}},
	} {
		args := []string{"stages", "upload", "--account", "acme", "-f", file}
		if tt.dates != "" {
			args = append(args, "--dates", tt.dates)
		}
		r := d.mustRun(t, "", args...)
		for _, want := range tt.want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("--dates %q: preview lacks %q:\n%s", tt.dates, want, r.stdout)
			}
		}
	}
	args := []string{"stages", "upload", "--account", "acme", "-f", file, "--dates", "sideways"}
	wantErr(t, d.run(t, "", args...), args, `dates: "sideways" is no date order`)
}

func TestStagesUploadFails(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	d.mustRun(t, "", "account", "create", "--name", "Acme", "--slug", "acme")
	good := writeCSV(t, "Email,Stage,Date\na@b.co,won,2026-11-30\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"stages"}, "say upload"},
		{[]string{"stages", "download"}, "say upload"},
		{[]string{"stages", "upload", "-f", good}, "give the account and the file"},
		{[]string{"stages", "upload", "--account", "acme"}, "give the account and the file"},
		{[]string{"stages", "upload", "--account", "nope", "-f", good}, `no account has slug "nope"`},
		{[]string{"stages", "upload", "--account", "acme", "-f", filepath.Join(t.TempDir(), "missing.csv")}, "no such file"},
		{[]string{"stages", "upload", "--account", "acme", "-f", writeCSV(t, "")}, "empty"},
		{[]string{"stages", "upload", "--account", "acme", "-f", writeCSV(t, "Who,What,When\na@b.co,won,2026-11-30\n")}, "columns:"},
		{[]string{"stages", "upload", "--account", "acme", "-f", good, "--apply"}, "Nothing to record: 1 row refused."},
	} {
		r := d.run(t, "", tt.args...)
		wantErr(t, r, tt.args, tt.want)
	}
}
