package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Every is how often a running demo captures a new lead and moves deals.
const Every = 5 * time.Second

// Run keeps the demo living until ctx ends: every interval a Tick, logged.
// A tick that fails is logged and the next one tried; Run returns nil when
// ctx ends.
func (d *Demo) Run(ctx context.Context, every time.Duration, log *slog.Logger) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		t, err := d.Tick(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("demo: tick", slog.Any("error", err))
		case err == nil:
			log.Info("demo: new lead", slog.Int64("lead_id", t.Lead.ID), slog.Bool("junk", t.Lead.Junk),
				slog.Bool("partial", t.Lead.Partial), slog.Int("stage_changes", len(t.Moved)))
		}
	}
}

// Ticked is what a Tick did.
type Ticked struct {
	// Lead is the lead it captured.
	Lead models.Lead
	// Moved are the stage changes it recorded.
	Moved []models.StageChange
}

// nextStage is the stage a deal moves to from its current one.
var nextStage = map[string]string{
	"":                    models.StageQualified,
	models.StageQualified: models.StageBooked,
	models.StageBooked:    models.StageWon,
}

// Tick captures one new lead at now, as a form posts it, and moves one or
// two of the last week's clean, complete leads one stage forward (a won
// deal with its value), as a CRM posts the changes. Deals already in the
// pipeline are picked first half of the time, so bookings and sales keep
// coming.
func (d *Demo) Tick(ctx context.Context, now time.Time) (Ticked, error) {
	var t Ticked
	s := d.gen.submission(now)
	res, err := d.captureOne(ctx, s.req, now)
	if err != nil {
		return t, err
	}
	t.Lead = res.Lead
	if err := d.useKey(ctx, now); err != nil {
		return t, err
	}

	leads, err := d.store.Leads(ctx, d.Account.ID, store.LeadFilter{From: now.Add(-7 * 24 * time.Hour), Junk: "clean", Partial: "no"}, nil, 300)
	if err != nil {
		return t, err
	}
	var fresh, pipeline []models.Lead
	for _, l := range leads {
		if _, ok := nextStage[l.Stage]; !ok || l.ID == t.Lead.ID {
			continue
		}
		if l.Stage == "" {
			fresh = append(fresh, l)
		} else {
			pipeline = append(pipeline, l)
		}
	}
	r := d.gen.rng
	moves := 1
	if r.Float64() < 0.3 {
		moves = 2
	}
	for range moves {
		from := &fresh
		if len(pipeline) > 0 && (len(fresh) == 0 || r.IntN(2) == 0) {
			from = &pipeline
		}
		if len(*from) == 0 {
			break
		}
		i := r.IntN(len(*from))
		l := (*from)[i]
		*from = append((*from)[:i], (*from)[i+1:]...)
		c, err := d.move(ctx, l, now)
		if err != nil {
			return t, err
		}
		t.Moved = append(t.Moved, c)
	}
	return t, nil
}

// move records lead l's next stage at now, through the stage API's path.
func (d *Demo) move(ctx context.Context, l models.Lead, now time.Time) (models.StageChange, error) {
	c := Change{Stage: nextStage[l.Stage], At: now}
	if c.Stage == models.StageWon {
		c.Value = ptr(d.gen.dealValue(serviceOf(l)))
	}
	res, err := d.decider.Record(ctx, d.Account.ID, stageChange(d.Account, l.ID, c))
	if err == nil && res.Refused != nil {
		err = res.Refused
	}
	if err != nil {
		return models.StageChange{}, fmt.Errorf("demo: stage %s of lead %d: %w", c.Stage, l.ID, err)
	}
	return res.Change, nil
}

// serviceOf is the service lead l asked about (its "service" field), the
// first when it names none.
func serviceOf(l models.Lead) service {
	var fields map[string]string
	_ = json.Unmarshal([]byte(l.Fields), &fields)
	for _, s := range services {
		if s.name == fields["service"] {
			return s
		}
	}
	return services[0]
}
