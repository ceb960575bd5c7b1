// Package stageupload runs the CSV uploads of stage changes
// (docs/stage-upload.md): it stores an uploaded file with its guessed
// columns, starts its passes (the preview's dry run, then the apply) and
// works them in the background, a chunk of rows at a time, through the
// recorder (decide.Decider.DryRun, RecordAll). internal/stagecsv reads the
// file; the store keeps the upload, its progress and its problems. The
// Stages page's handlers decode the form, call a Runner and map its
// errors; the bench drives the same Runner.
package stageupload
