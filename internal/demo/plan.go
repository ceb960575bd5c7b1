package demo

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/models"
)

// Days is how far back the demo's leads go.
const Days = 28

// Timezone is the demo account's: its business hours and weekdays are
// Chicago's.
const Timezone = "America/Chicago"

// seed is the fixed seed of the demo's four weeks.
var seed = [2]uint64{2026, 20}

// Planned is one lead of the demo's four weeks: the request its form
// posts and the stage changes its deal goes through, in order.
type Planned struct {
	Request capture.Request
	At      time.Time
	Changes []Change
	// Repeat: the same person wrote in a few days before. The repeat is
	// captured after the other leads, so it is the one the duplicate
	// signal flags, whatever order the others are written in.
	Repeat bool
}

// Change is a planned stage change; Value is a won deal's, in USD.
type Change struct {
	Stage string
	At    time.Time
	Value *float64
}

// Plan is the demo's four weeks of leads up to now, oldest first: 26 to
// 38 on a weekday, 12 to 20 on a weekend day, in Northwind's waking hours,
// today's only up to now. About one in nine is junk (bots, vendor
// pitches, job applications, fake phones, throwaway mailboxes, forms sent
// too fast), one in twenty partial, and a few people write in twice. Of
// the genuine complete leads about 30% are qualified a few hours to three
// days later, half of those booked, and half of those won with a deal
// value; a change that would fall after now has not happened yet. The
// same now gives the same plan.
func Plan(now time.Time) []Planned {
	loc := location()
	g := newGen(rand.New(rand.NewPCG(seed[0], seed[1])))
	r := g.rng
	local := now.In(loc)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	var plan, repeats []Planned
	for ago := Days - 1; ago >= 0; ago-- {
		day := today.AddDate(0, 0, -ago)
		n := 26 + r.IntN(13)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			n = 12 + r.IntN(9)
		}
		times := make([]time.Time, n)
		for i := range times {
			// Two uniform draws: most leads come around the middle of the
			// day, few at 7 in the morning or 10 at night.
			minute := 7*60 + int((r.Float64()+r.Float64())/2*15*60)
			times[i] = day.Add(time.Duration(minute)*time.Minute + time.Duration(r.IntN(60))*time.Second)
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for _, at := range times {
			s := g.submission(at)
			if at.After(now) {
				continue // later today: the random draws are spent all the same
			}
			p := Planned{Request: s.req, At: at.UTC()}
			if s.kind == genuine {
				p.Changes = g.deal(s.service, at, now)
				if r.Float64() < 0.03 {
					again := at.Add(time.Duration(1+r.IntN(4*24)) * time.Hour)
					if !again.After(now) {
						repeats = append(repeats, Planned{Request: g.followUp(s.req, again), At: again.UTC(), Repeat: true})
					}
				}
			}
			plan = append(plan, p)
		}
	}
	slices.SortStableFunc(repeats, func(a, b Planned) int { return a.At.Compare(b.At) })
	return append(plan, repeats...)
}

// deal is the stage changes of a genuine lead captured at at, up to now.
// Every draw is made whatever the deal reaches, so that the leads after it
// are the same for any now.
func (g *gen) deal(s service, at, now time.Time) []Change {
	r := g.rng
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(r.Int64N(int64(hi-lo))) }
	qualified, booked, won := r.Float64() < 0.3, r.Float64() < 0.5, r.Float64() < 0.5
	tq := at.Add(between(time.Hour, 72*time.Hour))
	tb := tq.Add(between(4*time.Hour, 96*time.Hour))
	tw := tb.Add(between(24*time.Hour, 8*24*time.Hour))
	value := g.dealValue(s)
	var cs []Change
	for _, c := range []struct {
		stage string
		at    time.Time
		ok    bool
	}{{models.StageQualified, tq, qualified}, {models.StageBooked, tb, booked}, {models.StageWon, tw, won}} {
		if !c.ok || c.at.After(now) {
			break
		}
		ch := Change{Stage: c.stage, At: c.at.UTC()}
		if c.stage == models.StageWon {
			ch.Value = ptr(value)
		}
		cs = append(cs, ch)
	}
	return cs
}

// location is Timezone, loaded (internal/country embeds the zone data).
func location() *time.Location {
	loc, err := time.LoadLocation(Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}
