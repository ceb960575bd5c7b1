package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// runStages runs leadsignal stages upload.
func runStages(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || args[0] != "upload" {
		return fmt.Errorf("stages: say upload, e.g. leadsignal stages upload --account acme -f deals.csv\n%s", usage)
	}
	return stagesUpload(ctx, args[1:], e)
}

// maxListed bounds the refused and flagged rows the command prints.
const maxListed = 20

// stagesUpload uploads a CSV file of stage changes as the Stages page and
// POST /api/v1/stage-uploads do (internal/stageupload), prints its
// preview and, with --apply, applies it and prints what it recorded.
func stagesUpload(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("stages upload", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	slug := fs.String("account", "", "the account's slug")
	file := fs.String("f", "", "the CSV file; - reads stdin")
	apply := fs.Bool("apply", false, "apply the upload after its preview and wait until it is recorded")
	dates := fs.String("dates", "", "read dates with slashes or dashes month_first (12/01/2026 is December 1) or day_first; the file's dates and the account's country guess it otherwise")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || *file == "" || fs.NArg() > 0 {
		return errors.New("stages upload: give the account and the file, e.g. leadsignal stages upload --account acme -f deals.csv [--apply]")
	}
	raw, err := readUploadFile(*file, e)
	if err != nil {
		return err
	}
	_, s, err := open(ctx, e, newLogger(e.stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	acc, err := s.AccountBySlug(ctx, *slug)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("stages upload: no account has slug %q", *slug)
	}
	if err != nil {
		return err
	}
	// The events queued here are sent by the dispatcher of leadsignal
	// serve, which finds them in the database.
	runner := stageupload.New(stageupload.Options{Store: s, Decider: decide.New(s, &decide.Matchers{}, func() {}), Log: newLogger(e.stderr)})
	name := filepath.Base(*file)
	if *file == "-" {
		name = "stdin.csv"
	}
	u, err := runner.Submit(ctx, acc, stageupload.Submission{Name: name, Raw: raw, Dates: *dates})
	if fe, ok := errors.AsType[*stagecsv.FileError](err); ok {
		return fmt.Errorf("stages upload: %s", fe.Message)
	}
	if re, ok := errors.AsType[*stageupload.RequestError](err); ok {
		return fmt.Errorf("stages upload: %s", re.Message)
	}
	if err != nil {
		return err
	}
	u, err = finishUpload(ctx, e, runner, u)
	if err != nil || !*apply {
		return err
	}
	if u.Applied == 0 {
		sum, err := stageupload.DecodeSummary(u.EventCounts)
		if err != nil {
			return err
		}
		return fmt.Errorf("stages upload: %s", stageupload.NothingToRecord(u.Refused, u.Replayed, sum.Skipped))
	}
	if u, err = runner.Apply(ctx, u, u.Pass); err != nil {
		return fmt.Errorf("stages upload: apply: %w", err)
	}
	fmt.Fprintln(e.stdout)
	_, err = finishUpload(ctx, e, runner, u)
	return err
}

// readUploadFile reads the file a -f flag names, or stdin for "-", at
// most stagecsv.MaxBytes.
func readUploadFile(path string, e env) ([]byte, error) {
	var r io.Reader = e.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("stages upload: %w", err)
		}
		defer f.Close()
		r = f
	}
	raw, err := io.ReadAll(io.LimitReader(r, stagecsv.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("stages upload: read %s: %w", path, err)
	}
	if len(raw) > stagecsv.MaxBytes {
		return nil, fmt.Errorf("stages upload: %s is over %d MiB, an upload's limit: split it into smaller files", path, stagecsv.MaxBytes>>20)
	}
	return raw, nil
}

// finishUpload works u's pass until it ends and prints the upload.
func finishUpload(ctx context.Context, e env, runner *stageupload.Runner, u models.StageUpload) (models.StageUpload, error) {
	u, err := runner.Finish(ctx, u.AccountID, u.ID)
	if err != nil {
		return u, err
	}
	rep, err := runner.Report(ctx, u)
	if err != nil {
		return u, err
	}
	printUpload(e.stdout, u, rep)
	if u.Status == models.UploadFailed {
		return u, fmt.Errorf("stages upload: upload %d stopped: %s", u.ID, u.Error)
	}
	return u, nil
}

func printUpload(w io.Writer, u models.StageUpload, rep stageupload.Report) {
	applied := u.Status == models.UploadDone
	fmt.Fprintf(w, "upload %d (%s): %d rows, %s\n", u.ID, u.FileName, rep.Rows, u.Status)
	var cols []string
	for _, f := range slices.Sorted(maps.Keys(rep.Columns)) {
		cols = append(cols, f+"="+rep.Columns[f])
	}
	fmt.Fprintf(w, "columns: %s; dates %s\n", strings.Join(cols, ", "), strings.ReplaceAll(rep.Dates, "_", " "))
	if len(rep.UnmappedStages) > 0 {
		fmt.Fprintln(w, "stages this account does not know (recorded as they are, they send nothing; add them as aliases on the Stages page):")
		for _, l := range rep.UnmappedStages {
			line := fmt.Sprintf("  %q: %s", l.Label, rows(l.Rows))
			if l.Suggested != nil {
				line += ", probably " + *l.Suggested
			}
			fmt.Fprintln(w, line)
		}
	}
	record, events := "would record", "events it would queue"
	if applied {
		record, events = "recorded", "events queued"
	}
	fmt.Fprintf(w, "%s %d, recorded before %d, refused %d", record, rep.WouldRecord, rep.RecordedBefore, rep.RefusedRows)
	if rep.Skipped > 0 {
		fmt.Fprintf(w, ", skipped %d", rep.Skipped)
	}
	fmt.Fprintln(w)
	type count struct {
		name string
		n    int
	}
	var cs []count
	for n, k := range rep.Events {
		cs = append(cs, count{n, k})
	}
	slices.SortFunc(cs, func(a, b count) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	fmt.Fprintf(w, "%s: %s\n", events, strings.Join(parts, ", "))
	if rep.Flagged > 0 {
		fmt.Fprintf(w, "rows with an event that would not be sent: %d\n", rep.Flagged)
		for _, f := range rep.Flags[:min(len(rep.Flags), maxListed)] {
			fmt.Fprintf(w, "  row %d: %s: %s\n", f.Row, f.Event, f.Reason)
		}
	}
	if len(rep.Refused) > 0 {
		fmt.Fprintf(w, "refused rows (the first %d of %d):\n", min(len(rep.Refused), maxListed), rep.RefusedRows)
		for _, r := range rep.Refused[:min(len(rep.Refused), maxListed)] {
			col := ""
			if r.Column != "" {
				col = " (" + r.Column + ")"
			}
			fmt.Fprintf(w, "  row %d%s: %s\n", r.Row, col, r.Reason)
		}
	}
	if u.Status == models.UploadPreviewed && u.Applied == 0 {
		fmt.Fprintln(w, stageupload.NothingToRecord(u.Refused, u.Replayed, rep.Skipped))
	}
}

func rows(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
