// Package stagecsv reads a CSV file of CRM stage changes for the Stages
// page's upload: it checks the file (text, size, header), guesses which
// column holds which field of a stage change from the column names and
// their common aliases, reads the dates CRMs export, and turns each row
// into the stage API's body (capture.StageRequest), which the caller then
// validates exactly as POST /api/v1/stages does. It is pure: no I/O, no
// clock. docs/stage-upload.md describes the file a person uploads.
package stagecsv
