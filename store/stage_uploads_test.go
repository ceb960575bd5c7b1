package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func TestStageUploads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		content := "email,stage,occurred_at\n" + strings.Repeat("a@b.co,won,2026-12-01\n", 3)
		u := models.StageUpload{AccountID: a.ID, FileName: "won.csv", Header: `[{"name":"email"}]`, Mapping: "{}",
			Status: models.UploadMapping, TotalRows: 3, EventCounts: "{}", CreatedAt: now, UpdatedAt: now}
		if err := s.CreateStageUpload(ctx, &u, content); err != nil {
			t.Fatal(err)
		}
		if got, err := s.StageUploadContent(ctx, u.ID); err != nil || got != content {
			t.Fatalf("StageUploadContent = %q, %v; want the file", got, err)
		}
		if _, err := s.StageUpload(ctx, b.ID, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another account's StageUpload: %v; want ErrNotFound", err)
		}
		if _, err := s.StartStageUpload(ctx, b.ID, u.ID, "{}", models.UploadPreviewing, []models.StageUploadStatus{models.UploadMapping}, now); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another account's StartStageUpload: %v; want ErrNotFound", err)
		}
		if _, err := s.StartStageUpload(ctx, a.ID, u.ID, "{}", models.UploadApplying, []models.StageUploadStatus{models.UploadPreviewed}, now); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("apply before the preview: %v; want ErrConflict", err)
		}
		if ids, err := s.StageUploadsToResume(ctx, now); err != nil || len(ids) != 0 {
			t.Fatalf("StageUploadsToResume while mapping = %v, %v; want none", ids, err)
		}

		u, err := s.StartStageUpload(ctx, a.ID, u.ID, `{"columns":{}}`, models.UploadPreviewing, []models.StageUploadStatus{models.UploadMapping}, now)
		if err != nil || u.Status != models.UploadPreviewing || u.Pass != 1 || u.Mapping != `{"columns":{}}` {
			t.Fatalf("StartStageUpload = %+v, %v; want previewing, pass 1", u, err)
		}
		if ids, err := s.StageUploadsToResume(ctx, now); err != nil || len(ids) != 1 || ids[0] != u.ID {
			t.Fatalf("StageUploadsToResume = %v, %v; want [%d]", ids, err, u.ID)
		}
		claimed, err := s.ClaimStageUpload(ctx, u.ID, now, time.Minute)
		if err != nil || claimed.LeaseToken == nil {
			t.Fatalf("ClaimStageUpload = %+v, %v; want the upload with its lease", claimed, err)
		}
		if _, err := s.ClaimStageUpload(ctx, u.ID, now.Add(30*time.Second), time.Minute); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a second claim within the lease: %v; want ErrNotFound", err)
		}
		if ids, _ := s.StageUploadsToResume(ctx, now.Add(30*time.Second)); len(ids) != 0 {
			t.Fatalf("StageUploadsToResume within the lease = %v; want none", ids)
		}

		// Problems past MaxUploadProblems are counted, not kept.
		var ps []models.StageUploadProblem
		for i := range store.MaxUploadProblems + 5 {
			ps = append(ps, models.StageUploadProblem{RowNumber: i + 2, Field: "occurred_at", Message: "bad date"})
		}
		p := store.UploadProgress{ID: u.ID, Lease: *claimed.LeaseToken, DoneRows: 2, Applied: 1, Refused: len(ps), Events: 2, EventCounts: `{"Purchase":2}`,
			Problems: ps[:10], LeaseUntil: now.Add(time.Minute)}
		if err := s.SaveUploadProgress(ctx, p, now); err != nil {
			t.Fatal(err)
		}
		p.Problems = ps[10:]
		p.DoneRows, p.Finished, p.Status = 3, true, models.UploadPreviewed
		if err := s.SaveUploadProgress(ctx, p, now); err != nil {
			t.Fatal(err)
		}
		got, err := s.StageUpload(ctx, a.ID, u.ID)
		if err != nil || got.Status != models.UploadPreviewed || got.DoneRows != 3 || got.Refused != len(ps) || got.EventCounts != `{"Purchase":2}` ||
			got.LeaseUntil != nil || got.LeaseToken != nil || got.FinishedAt == nil {
			t.Fatalf("after the pass: %+v, %v", got, err)
		}
		kept, err := s.StageUploadProblems(ctx, a.ID, u.ID, 5000)
		if err != nil || len(kept) != store.MaxUploadProblems || kept[0].RowNumber != 2 || kept[0].Message != "bad date" {
			t.Fatalf("StageUploadProblems = %d problems, %v; want the first %d", len(kept), err, store.MaxUploadProblems)
		}
		if _, err := s.StageUploadProblems(ctx, b.ID, u.ID, 10); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another account's StageUploadProblems: %v; want ErrNotFound", err)
		}
		if err := s.SaveUploadProgress(ctx, p, now); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("progress of a finished pass: %v; want ErrLeaseLost", err)
		}

		// Applying starts a new pass: the preview's counts and problems go;
		// a worker of the pass before writes nothing more.
		u, err = s.StartStageUpload(ctx, a.ID, u.ID, got.Mapping, models.UploadApplying, []models.StageUploadStatus{models.UploadPreviewed}, now)
		if err != nil || u.Pass != 2 || u.Refused != 0 || u.DoneRows != 0 || u.EventCounts != "{}" {
			t.Fatalf("StartStageUpload to apply = %+v, %v", u, err)
		}
		if kept, _ := s.StageUploadProblems(ctx, a.ID, u.ID, 10); len(kept) != 0 {
			t.Fatalf("problems after a new pass = %d; want none", len(kept))
		}
		if _, err := s.StartStageUpload(ctx, a.ID, u.ID, got.Mapping, models.UploadApplying, []models.StageUploadStatus{models.UploadPreviewed}, now); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second apply: %v; want ErrConflict", err)
		}
		p.Finished, p.Problems = false, nil
		if err := s.SaveUploadProgress(ctx, p, now); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("progress of the pass before: %v; want ErrLeaseLost", err)
		}
		// A lease that ran out (its server stopped) is taken over.
		if _, err := s.ClaimStageUpload(ctx, u.ID, now, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimStageUpload(ctx, u.ID, now.Add(2*time.Minute), time.Minute); err != nil {
			t.Fatalf("claim after the lease: %v", err)
		}

		list, err := s.StageUploads(ctx, a.ID, 10)
		if err != nil || len(list) != 1 || list[0].ID != u.ID {
			t.Fatalf("StageUploads = %+v, %v", list, err)
		}
		if list, _ := s.StageUploads(ctx, b.ID, 10); len(list) != 0 {
			t.Fatalf("another account's StageUploads = %+v; want none", list)
		}
	})
}
