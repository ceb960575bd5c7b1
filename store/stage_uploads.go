package store

import (
	"context"
	"errors"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// The CSV uploads of stage changes (docs/stage-upload.md): an upload, its
// file, its progress and the problems of its rows. A pass (the preview's
// dry run or the apply) is worked by one server at a time, the holder of
// the upload's lease: its writes are fenced by the lease's token, which a
// new pass, or another server taking over an expired lease, replaces.

// MaxUploadProblems is how many problem rows a pass keeps; Refused counts
// them all.
const MaxUploadProblems = 1000

// CreateStageUpload stores an upload and its file's content.
func (s *Store) CreateStageUpload(ctx context.Context, u *models.StageUpload, content string) error {
	return wrap("create stage upload", s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Create(u).Error; err != nil {
			return err
		}
		return tx.q(ctx).Exec(`INSERT INTO stage_upload_files (upload_id, content) VALUES (?, ?)`, u.ID, content).Error
	}))
}

// StageUpload finds one of an account's uploads.
func (s *Store) StageUpload(ctx context.Context, accountID, id int64) (models.StageUpload, error) {
	var u models.StageUpload
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&u).Error
	return u, wrap("stage upload", err)
}

// StageUploads lists an account's latest uploads, newest first.
func (s *Store) StageUploads(ctx context.Context, accountID int64, limit int) ([]models.StageUpload, error) {
	var us []models.StageUpload
	err := s.q(ctx).Where("account_id = ?", accountID).Order("id DESC").Limit(limit).Find(&us).Error
	return us, wrap("stage uploads", err)
}

// StageUploadContent is the content of an upload's file.
func (s *Store) StageUploadContent(ctx context.Context, id int64) (string, error) {
	var content []string
	err := s.q(ctx).Raw(`SELECT content FROM stage_upload_files WHERE upload_id = ?`, id).Scan(&content).Error
	if err == nil && len(content) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return "", wrap("stage upload content", err)
	}
	return content[0], nil
}

// StartStageUpload starts a new pass of an account's upload, with mapping
// (JSON) and status: mapping waits for a person, previewing and applying
// run once a server claims them. The counts and problems of the pass
// before are forgotten and its worker stops at its next write. It is
// refused with ErrConflict unless the upload's status is one of from (a
// second click on Apply starts nothing).
func (s *Store) StartStageUpload(ctx context.Context, accountID, id int64, mapping string, status models.StageUploadStatus,
	from []models.StageUploadStatus, now time.Time) (models.StageUpload, error) {
	var u models.StageUpload
	err := s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&models.StageUpload{}).Where("account_id = ? AND id = ? AND status IN ?", accountID, id, from).
			Updates(map[string]any{
				"mapping": mapping, "status": status, "pass": gormExpr("pass + 1"), "done_rows": 0, "applied": 0, "replayed": 0,
				"refused": 0, "events": 0, "event_counts": "{}", "error": "", "lease_until": nil, "lease_token": nil, "updated_at": now.UTC(),
				"finished_at": nil,
			})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			if _, err := tx.StageUpload(ctx, accountID, id); err != nil {
				return err
			}
			return ErrConflict
		}
		if err := tx.q(ctx).Exec(`DELETE FROM stage_upload_problems WHERE upload_id = ?`, id).Error; err != nil {
			return err
		}
		var err error
		u, err = tx.StageUpload(ctx, accountID, id)
		return err
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return u, err
	}
	return u, wrap("start stage upload", err)
}

// ClaimStageUpload takes the lease of a running upload until now+lease,
// for the caller to work its pass; the upload's LeaseToken fences the
// caller's writes (UploadProgress.Lease). ErrNotFound when it does not run
// or another server holds it.
func (s *Store) ClaimStageUpload(ctx context.Context, id int64, now time.Time, lease time.Duration) (models.StageUpload, error) {
	l := newLease(now, lease)
	res := s.q(ctx).Model(&models.StageUpload{}).
		Where("id = ? AND status IN ? AND "+leaseFreeSQL("", "?"), id, runningUploads, now.UTC()).
		Updates(map[string]any{"lease_until": l.Until, "lease_token": l.Token, "updated_at": now.UTC()})
	if res.Error != nil {
		return models.StageUpload{}, wrap("claim stage upload", res.Error)
	}
	if res.RowsAffected == 0 {
		return models.StageUpload{}, wrap("claim stage upload", ErrNotFound)
	}
	var u models.StageUpload
	err := s.q(ctx).Take(&u, id).Error
	u.LeaseToken, u.LeaseUntil = &l.Token, &l.Until
	return u, wrap("claim stage upload", err)
}

var runningUploads = []models.StageUploadStatus{models.UploadPreviewing, models.UploadApplying}

// StageUploadsToResume lists the running uploads no server holds: left
// by a server that stopped, or not claimed yet.
func (s *Store) StageUploadsToResume(ctx context.Context, now time.Time) ([]int64, error) {
	var ids []int64
	err := s.q(ctx).Model(&models.StageUpload{}).Where("status IN ? AND "+leaseFreeSQL("", "?"), runningUploads, now.UTC()).
		Order("id").Pluck("id", &ids).Error
	return ids, wrap("stage uploads to resume", err)
}

// UploadProgress is what a chunk of an upload's pass did: the upload's
// counts after it, and the problems of its rows.
type UploadProgress struct {
	ID int64
	// Lease is the token of the worker's lease (the claimed upload's
	// LeaseToken), which fences the write.
	Lease int64
	// DoneRows, Applied, Replayed, Refused, Events and EventCounts are
	// the pass's totals so far.
	DoneRows    int
	Applied     int
	Replayed    int
	Refused     int
	Events      int
	EventCounts string
	Problems    []models.StageUploadProblem
	// Finished ends the pass with status Status (previewed, done or
	// failed, with Error).
	Finished bool
	Status   models.StageUploadStatus
	Error    string
	// LeaseUntil renews the worker's lease.
	LeaseUntil time.Time
}

// SaveUploadProgress writes a chunk's progress, and its problems up to
// MaxUploadProblems a pass, fenced by the worker's lease: ErrLeaseLost,
// and nothing written, when another server took the upload over or a new
// pass replaced the worker's (the worker then stops).
func (s *Store) SaveUploadProgress(ctx context.Context, p UploadProgress, now time.Time) error {
	return s.Tx(ctx, func(tx *Store) error {
		upd := map[string]any{"done_rows": p.DoneRows, "applied": p.Applied, "replayed": p.Replayed, "refused": p.Refused,
			"events": p.Events, "event_counts": p.EventCounts, "lease_until": p.LeaseUntil.UTC(), "updated_at": now.UTC()}
		if p.Finished {
			upd["status"], upd["error"], upd["finished_at"], upd["lease_until"], upd["lease_token"] = p.Status, p.Error, now.UTC(), nil, nil
		}
		res := tx.q(ctx).Model(&models.StageUpload{}).Where("id = ? AND lease_token = ?", p.ID, p.Lease).Updates(upd)
		if res.Error != nil {
			return wrap("save upload progress", res.Error)
		}
		if res.RowsAffected == 0 {
			return wrap("save upload progress", ErrLeaseLost)
		}
		if len(p.Problems) == 0 {
			return nil
		}
		var kept int64
		if err := tx.q(ctx).Model(&models.StageUploadProblem{}).Where("upload_id = ?", p.ID).Count(&kept).Error; err != nil {
			return wrap("save upload progress", err)
		}
		room := MaxUploadProblems - int(kept)
		if room <= 0 {
			return nil
		}
		ps := p.Problems[:min(room, len(p.Problems))]
		for i := range ps {
			ps[i].ID, ps[i].UploadID = 0, p.ID
		}
		return wrap("save upload problems", tx.q(ctx).CreateInBatches(ps, 200).Error)
	})
}

// StageUploadProblems lists the problems an account's upload keeps, by
// row.
func (s *Store) StageUploadProblems(ctx context.Context, accountID, id int64, limit int) ([]models.StageUploadProblem, error) {
	if _, err := s.StageUpload(ctx, accountID, id); err != nil {
		return nil, err
	}
	var ps []models.StageUploadProblem
	err := s.q(ctx).Where("upload_id = ?", id).Order("row_number, id").Limit(limit).Find(&ps).Error
	return ps, wrap("stage upload problems", err)
}
