// Package stagecsv reads a CSV file of CRM stage changes for the Stages
// page's upload: it checks the file (text, size, columns, header), guesses
// which column holds which field of a stage change from the column names
// the CRMs' deal exports use (HubSpot, Pipedrive, Salesforce, Zoho,
// GoHighLevel, Close, ActiveCampaign) and their common aliases, and turns
// each row into the stage API's body (capture.StageRequest), which the
// caller then validates exactly as POST /api/v1/stages does. On the way it
// reads a contact's email out of "Name (email)", a status of Won or Lost,
// each row's date by its meaning, the dates and amounts CRMs export, and it
// words a row's problems by the file's own columns, with times in the
// account's zone. It is pure: no I/O, no clock. docs/stage-upload.md
// describes the file a person uploads.
package stagecsv
