package stageupload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Labels are what was decided about an upload's stage labels, kept with
// its columns in the upload's mapping (beside stagecsv.Mapping's keys):
// the labels whose rows are skipped, and the labels this upload alone
// reads as a stage (the API's stage_aliases). Labels compare as stages do
// (name.StageKey).
type Labels struct {
	// Skip are labels whose rows stay out: neither recorded nor refused,
	// counted as skipped.
	Skip []string `json:"skip_stages,omitempty"`
	// Aliases read a label as one of the account's stages, for this
	// upload only; the account's stage list is not changed.
	Aliases []StageAlias `json:"stage_aliases,omitempty"`
}

// StageAlias reads Label as the stage Stage.
type StageAlias struct {
	Label string `json:"label"`
	Stage string `json:"stage"`
}

// MaxStageAliases bounds the labels an upload reads as stages.
const MaxStageAliases = 100

// maxSkips bounds the labels an upload skips.
const maxSkips = 200

// DecodeLabels reads the labels decided for upload u.
func DecodeLabels(u models.StageUpload) (Labels, error) {
	var l Labels
	if err := json.Unmarshal([]byte(u.Mapping), &l); err != nil {
		return l, fmt.Errorf("upload %d: labels: %w", u.ID, err)
	}
	return l, nil
}

// encodeMapping is the JSON an upload keeps of its columns and labels:
// stagecsv.Mapping's object with Labels' keys added.
func encodeMapping(m stagecsv.Mapping, l Labels) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if len(l.Skip) == 0 && len(l.Aliases) == 0 {
		return string(b), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return "", err
	}
	if len(l.Skip) > 0 {
		obj["skip_stages"], _ = json.Marshal(l.Skip)
	}
	if len(l.Aliases) > 0 {
		obj["stage_aliases"], _ = json.Marshal(l.Aliases)
	}
	b, err = json.Marshal(obj)
	return string(b), err
}

// reader applies an upload's Labels to its rows' stages.
type reader struct {
	skip    map[string]bool
	aliases map[string]string
}

func newReader(l Labels) reader {
	r := reader{skip: map[string]bool{}, aliases: map[string]string{}}
	for _, s := range l.Skip {
		r.skip[name.StageKey(s)] = true
	}
	for _, a := range l.Aliases {
		r.aliases[name.StageKey(a.Label)] = a.Stage
	}
	return r
}

// skips reports whether a row whose stage cell holds label is skipped.
func (r reader) skips(label string) bool { return len(r.skip) > 0 && r.skip[name.StageKey(label)] }

// stage is the stage a row's label is read as: the upload's alias of it,
// else the label itself (for the recorder to find by name or alias).
func (r reader) stage(label string) string {
	if s, ok := r.aliases[name.StageKey(label)]; ok {
		return s
	}
	return label
}

// labelStatuses are the statuses in which an upload's labels may change:
// its preview is then counted again.
var labelStatuses = []models.StageUploadStatus{models.UploadPreviewing, models.UploadPreviewed, models.UploadFailed}

// AliasLabel saves label as an alias of the account's stage stageID
// (store.AddStageAlias: a *store.AliasError when it cannot be one) and
// starts upload u's preview again, for Start to run. store.ErrConflict
// when u is applied, being applied, or waiting for its columns.
func (r *Runner) AliasLabel(ctx context.Context, u models.StageUpload, label string, stageID int64) (models.StageUpload, error) {
	if !slices.Contains(labelStatuses, u.Status) {
		return u, store.ErrConflict
	}
	if _, err := r.o.Store.AddStageAlias(ctx, u.AccountID, stageID, label); err != nil {
		return u, err
	}
	return r.recount(ctx, u, u.Mapping)
}

// AddLabelStage adds label to the account's stages, last (store.AppendStage),
// and starts upload u's preview again. A *store.AliasError when label
// cannot be a stage's name or names a stage already; store.ErrConflict as
// for AliasLabel.
func (r *Runner) AddLabelStage(ctx context.Context, u models.StageUpload, label string) (models.StageUpload, error) {
	if !slices.Contains(labelStatuses, u.Status) {
		return u, store.ErrConflict
	}
	if msg := name.StageProblem(label); msg != "" {
		return u, &store.AliasError{Alias: label, Message: fmt.Sprintf("stage %q: %s", label, msg)}
	}
	if _, err := r.o.Store.AppendStage(ctx, u.AccountID, label); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return u, &store.AliasError{Alias: label, Message: fmt.Sprintf("%q already names one of the account's stages", label)}
		}
		return u, err
	}
	return r.recount(ctx, u, u.Mapping)
}

// SkipLabel makes upload u skip the rows whose stage is label (neither
// recorded nor refused) and starts its preview again. store.ErrConflict
// as for AliasLabel.
func (r *Runner) SkipLabel(ctx context.Context, u models.StageUpload, label string) (models.StageUpload, error) {
	if !slices.Contains(labelStatuses, u.Status) {
		return u, store.ErrConflict
	}
	m, _, err := Decode(u)
	if err != nil {
		return u, err
	}
	l, err := DecodeLabels(u)
	if err != nil {
		return u, err
	}
	if msg := name.StageProblem(label); msg != "" {
		return u, &store.AliasError{Alias: label, Message: fmt.Sprintf("label %q: %s", label, msg)}
	}
	k := name.StageKey(label)
	if k == "" {
		return u, &store.AliasError{Alias: label, Message: "this label has no letter or digit"}
	}
	if !slices.ContainsFunc(l.Skip, func(s string) bool { return name.StageKey(s) == k }) {
		if len(l.Skip) >= maxSkips {
			return u, &store.AliasError{Alias: label, Message: fmt.Sprintf("an upload skips at most %d labels", maxSkips)}
		}
		l.Skip = append(l.Skip, label)
	}
	mapping, err := encodeMapping(m, l)
	if err != nil {
		return u, err
	}
	return r.recount(ctx, u, mapping)
}

// recount starts upload u's preview again with mapping.
func (r *Runner) recount(ctx context.Context, u models.StageUpload, mapping string) (models.StageUpload, error) {
	return r.o.Store.StartStageUpload(ctx, u.AccountID, u.ID, mapping, models.UploadPreviewing, labelStatuses, r.o.Now())
}
