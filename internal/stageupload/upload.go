package stageupload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/service"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Options configure a Runner.
type Options struct {
	Store *store.Store
	// Decider records (or, in a preview, decides) the rows' changes.
	Decider *decide.Decider
	Log     *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Chunk is how many rows a pass decides and stores at a time; 1000
	// when zero.
	Chunk int
}

// Runner stores uploads, starts their passes and works them in the
// background, one goroutine per upload. Serve runs it (Run) beside the
// dispatcher; a Runner without Run (tests) still works the passes Start
// is given, and never stops them.
type Runner struct {
	o Options
	// resume starts the uploads no server works on, at once and every
	// minute.
	resume *service.Loop
	// ctx is the passes' context, which Run's end cancels.
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	// running are the uploads with a goroutine here; again, those whose
	// goroutine runs once more when it ends (a new pass was started
	// meanwhile, which the old one's claim cannot take).
	running, again map[int64]bool
	stopped        bool
	wg             sync.WaitGroup
}

// New returns an idle Runner.
func New(o Options) *Runner {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Chunk <= 0 {
		o.Chunk = 1000
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{o: o, ctx: ctx, cancel: cancel, running: map[int64]bool{}, again: map[int64]bool{}}
	r.resume = service.New(service.Options{Name: "resume stage uploads", Every: resumeEvery, Log: o.Log}, r.resumeUploads)
	return r
}

// ErrPassChanged refuses to apply a preview that is no longer the
// upload's current pass: its columns changed since (another tab).
var ErrPassChanged = errors.New("stageupload: the upload changed since this preview")

// Create reads an uploaded file, guesses its columns and stores it as an
// account's upload by user userID (nil for none); its preview is started
// when the guess leaves nothing to pick, for Start to run. A file that
// cannot be used is refused with a *stagecsv.FileError, whose message is
// for the person who uploaded it.
func (r *Runner) Create(ctx context.Context, acc models.Account, userID *int64, name string, raw []byte) (models.StageUpload, error) {
	return r.create(ctx, acc, Submission{UserID: userID, Name: name, Raw: raw}, false)
}

// create stores s as Create does. A strict submission (the API's, which
// no person watches) is refused with a *RequestError rather than left
// waiting for its columns.
func (r *Runner) create(ctx context.Context, acc models.Account, s Submission, strict bool) (models.StageUpload, error) {
	userID, name, raw := s.UserID, s.Name, s.Raw
	f, err := stagecsv.Read(raw)
	if err != nil {
		return models.StageUpload{}, err
	}
	m := stagecsv.Guess(f, acc.DefaultCountry)
	if err := r.check(ctx, acc, s, f, &m, strict); err != nil {
		return models.StageUpload{}, err
	}
	mapping, err := encodeMapping(m, Labels{Aliases: s.Aliases})
	if err != nil {
		return models.StageUpload{}, err
	}
	header, err := json.Marshal(Columns(f))
	if err != nil {
		return models.StageUpload{}, err
	}
	now := r.o.Now().UTC()
	u := models.StageUpload{AccountID: acc.ID, UserID: userID, FileName: name, Header: string(header), Mapping: mapping,
		Status: models.UploadMapping, TotalRows: len(f.Rows), EventCounts: "{}", CreatedAt: now, UpdatedAt: now}
	if len(m.Problems(f.Header)) == 0 {
		u.Status, u.Pass = models.UploadPreviewing, 1
	}
	if err := r.o.Store.CreateStageUpload(ctx, &u, string(raw)); err != nil {
		return models.StageUpload{}, err
	}
	return u, nil
}

// Map saves the columns a person picked for upload u and starts its
// preview again with them, for Start to run; when the columns leave
// problems (a required field unpicked), it returns them and the upload
// waits for a person. It is refused with store.ErrConflict once the
// upload is applied or being applied.
func (r *Runner) Map(ctx context.Context, u models.StageUpload, m stagecsv.Mapping) (models.StageUpload, []string, error) {
	_, cols, err := Decode(u)
	if err != nil {
		return u, nil, err
	}
	header := make([]string, len(cols))
	for i, col := range cols {
		header[i] = col.Name
	}
	problems := m.Problems(header)
	labels, err := DecodeLabels(u)
	if err != nil {
		return u, nil, err
	}
	mapping, err := encodeMapping(m, labels)
	if err != nil {
		return u, nil, err
	}
	status := models.UploadPreviewing
	if len(problems) > 0 {
		status = models.UploadMapping
	}
	from := []models.StageUploadStatus{models.UploadMapping, models.UploadPreviewing, models.UploadPreviewed, models.UploadFailed}
	u, err = r.o.Store.StartStageUpload(ctx, u.AccountID, u.ID, mapping, status, from, r.o.Now())
	return u, problems, err
}

// ErrNothingToRecord refuses to apply a preview that would record no
// row: every row is refused, recorded before or skipped.
var ErrNothingToRecord = errors.New("stageupload: nothing to record")

// Apply starts the apply of upload u as its preview, pass, showed it, for
// Start to run. ErrPassChanged when pass is no longer the upload's;
// ErrNothingToRecord when the preview would record nothing;
// store.ErrConflict when it is not previewed (applied already, say).
func (r *Runner) Apply(ctx context.Context, u models.StageUpload, pass int) (models.StageUpload, error) {
	if pass != u.Pass {
		return u, ErrPassChanged
	}
	if u.Status == models.UploadPreviewed && u.Applied == 0 {
		return u, ErrNothingToRecord
	}
	return r.o.Store.StartStageUpload(ctx, u.AccountID, u.ID, u.Mapping, models.UploadApplying,
		[]models.StageUploadStatus{models.UploadPreviewed}, r.o.Now())
}

// Column is a column of an uploaded file as kept with the upload: its
// name and a sample value.
type Column struct {
	Name   string `json:"name"`
	Sample string `json:"sample"`
}

// Columns are f's columns, each with its first value in the first rows,
// cut short, to help a person tell them apart. Names are cut short too:
// the mapping step lists every name in each field's select.
func Columns(f stagecsv.File) []Column {
	cols := make([]Column, len(f.Header))
	for i, n := range f.Header {
		cols[i].Name = name.Cut(n, 100)
		for _, row := range f.Rows[:min(len(f.Rows), 20)] {
			if v := stagecsv.Cell(row, i); v != "" {
				cols[i].Sample = name.Cut(v, 30)
				break
			}
		}
	}
	return cols
}

// Decode reads the mapping and the columns an upload keeps.
func Decode(u models.StageUpload) (stagecsv.Mapping, []Column, error) {
	var m stagecsv.Mapping
	if err := json.Unmarshal([]byte(u.Mapping), &m); err != nil {
		return m, nil, fmt.Errorf("upload %d: mapping: %w", u.ID, err)
	}
	var cols []Column
	if err := json.Unmarshal([]byte(u.Header), &cols); err != nil {
		return m, nil, fmt.Errorf("upload %d: header: %w", u.ID, err)
	}
	return m, cols, nil
}
