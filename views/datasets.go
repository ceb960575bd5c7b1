package views

import (
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// EventCounts are a dataset's events per status as the send log counts
// them, each count stopping past CountCap. Every event has one status, so
// the counts add up to the events the send log holds for the dataset.
type EventCounts map[models.EventStatus]int64

// Total is the sum of the counts; AtLeast when a count stopped at its cap.
func (n EventCounts) Total() (total int64, atLeast bool) {
	for _, c := range n {
		total += c
		atLeast = atLeast || c > CountCap
	}
	return total, atLeast
}

func (n EventCounts) total() string {
	t, atLeast := n.Total()
	if atLeast {
		return countUpTo(t, math.MaxInt64) + "+"
	}
	return countUpTo(t, math.MaxInt64)
}

// statusHeading is a state as a column of counts names it: its word
// (EventStatusWord), its meaning on hover.
func statusHeading(s models.EventStatus) string { return EventStatusWord(s) }

// datasetStatuses are the statuses the Datasets list has a column for:
// waiting, sent and failed always, the others when a dataset has such
// events (or, for dry run, is in dry run). A status left out counts no
// event, so the columns still add up to the total.
func datasetStatuses(items []DatasetItem) []models.EventStatus {
	var out []models.EventStatus
	for _, s := range models.EventStatuses {
		show := s == models.EventQueued || s == models.EventSent || s == models.EventFailed
		for _, it := range items {
			show = show || it.Counts[s] > 0 || (s == models.EventDryRun && it.Dataset.Mode == models.ModeDryRun)
		}
		if show {
			out = append(out, s)
		}
	}
	return out
}

// shownStatuses are the statuses of a dataset's summary: those it has
// events of.
func (n EventCounts) shownStatuses() []models.EventStatus {
	var out []models.EventStatus
	for _, s := range models.EventStatuses {
		if n[s] > 0 {
			out = append(out, s)
		}
	}
	return out
}

// sendLogURL is the send log filtered to a dataset's events, of one
// status unless status is "".
func sendLogURL(p Page, datasetID int64, status models.EventStatus) string {
	q := url.Values{"dataset": {strconv.FormatInt(datasetID, 10)}}
	if status != "" {
		q.Set("status", string(status))
	}
	return p.accountURL("/events?" + q.Encode())
}

func eventsNoun(n EventCounts) string {
	if t, atLeast := n.Total(); t == 1 && !atLeast {
		return "event"
	}
	return "events"
}

// statusPhrase says what a count of one state counts, after the number:
// "3 waiting", "12 dry run".
func statusPhrase(s models.EventStatus) string { return strings.ToLower(EventStatusWord(s)) }
