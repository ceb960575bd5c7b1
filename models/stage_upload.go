package models

import "time"

// StageUpload is a CSV file of stage changes uploaded on the Stages page
// (docs/stage-upload.md): checked by a dry run first (the preview), then
// applied through the stage API's path, each pass in the background a
// chunk of rows at a time, its progress kept here.
type StageUpload struct {
	ID        int64
	AccountID int64
	// UserID is who uploaded it; nil once that user is removed.
	UserID   *int64
	FileName string
	// Header is the JSON of the file's columns: [{"name", "sample"}].
	Header string
	// Mapping is the JSON of the column mapping (stagecsv.Mapping).
	Mapping string
	Status  StageUploadStatus
	// Pass counts the passes (previews and the apply); a worker writes
	// only while its pass is the current one.
	Pass int
	// TotalRows are the file's rows; DoneRows those the current pass has
	// done, the rows before it the rows it resumes after.
	TotalRows int
	DoneRows  int
	// Applied, Replayed and Refused count the current pass's rows: new
	// changes recorded (or that would be), changes recorded before (nothing
	// queued), rows that stay out with a problem.
	Applied  int
	Replayed int
	Refused  int
	// Events counts the events the pass queued (or would queue);
	// EventCounts is the JSON of the pass's summary (stageupload.Summary:
	// the count per event name, the unmapped labels, rows skipped and
	// flagged); an upload kept before it holds the counts per name alone.
	Events      int
	EventCounts string
	// Error is why the upload failed (status failed).
	Error string
	// LeaseToken and LeaseUntil are the lease of the server working on
	// the upload's pass (store.ClaimStageUpload).
	LeaseToken *int64
	LeaseUntil *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// StageUploadStatus is where an upload stands.
type StageUploadStatus string

// Upload statuses, in order: mapping waits for a person to pick the
// columns; previewing and applying run in the background.
const (
	UploadMapping    StageUploadStatus = "mapping"
	UploadPreviewing StageUploadStatus = "previewing"
	UploadPreviewed  StageUploadStatus = "previewed"
	UploadApplying   StageUploadStatus = "applying"
	UploadDone       StageUploadStatus = "done"
	UploadFailed     StageUploadStatus = "failed"
)

// Running reports whether a pass of the upload runs in the background.
func (u StageUpload) Running() bool {
	return u.Status == UploadPreviewing || u.Status == UploadApplying
}

// StageUploadProblem is a row of an upload that stays out, and why.
type StageUploadProblem struct {
	ID       int64
	UploadID int64
	// RowNumber is the row's line in the file, the header being 1.
	RowNumber int
	Field     string
	Message   string
}
