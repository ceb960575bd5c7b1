// Package stageupload runs the CSV uploads of stage changes
// (docs/stage-upload.md): it stores an uploaded file with its guessed
// columns, starts its passes (the preview's dry run, then the apply) and
// works them in the background, a chunk of rows at a time, through the
// recorder (decide.Decider.DryRun, RecordAll). internal/stagecsv reads the
// file; the store keeps the upload, its progress and its problems. A
// pass's Summary (events per name, the labels that name none of the
// account's stages, rows skipped and flagged) is kept with the upload, and
// so are the labels a person decided about (Labels: skipped, or read as a
// stage for this upload). The Stages page's handlers decode the form, call
// a Runner and map its errors; the stage uploads API and `leadsignal
// stages upload` use the same Runner (Submit, Finish, Report, Apply); the
// bench drives it too.
package stageupload
