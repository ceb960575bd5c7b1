package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/overview"
)

// overviewCSV writes one of the Overview's tables as CSV, with the same
// numbers and filters as the page.
func (h *Handler) overviewCSV(c echo.Context, d overviewData, table string) error {
	var rows [][]string
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	switch table {
	case "headline":
		cols, hl, reached := headline(d)
		rows = append(rows, append([]string{"count"}, cols...))
		for i := range reached {
			reached[i].Label = "reached " + reached[i].Label + " (by when they reached it)"
		}
		for _, r := range append(hl, reached...) {
			row := []string{r.Label}
			for _, c := range r.Counts {
				row = append(row, n(c.N))
			}
			rows = append(rows, row)
		}
	case "weeks":
		ch := weeklyChart(d)
		head := []string{"week_start"}
		for _, s := range ch.Series {
			head = append(head, s.Name)
		}
		rows = append(rows, head)
		for i, w := range ch.Weeks {
			row := []string{w.Format("2006-01-02")}
			for _, s := range ch.Series {
				row = append(row, n(s.Values[i]))
			}
			rows = append(rows, row)
		}
	case "funnel":
		rows = append(rows, []string{"step", "leads", "median_hours_to_stage"})
		for _, s := range funnel(d).Steps {
			med := ""
			if s.HasMedian {
				med = strconv.FormatFloat(s.Median.Hours(), 'f', 1, 64)
			}
			rows = append(rows, []string{s.Name, n(s.Count), med})
		}
	case "junk":
		rows = append(rows, []string{"signal", "leads"})
		for _, r := range overview.JunkReasons(d.inRange, 0) {
			rows = append(rows, []string{r.Reason, n(r.N)})
		}
	case "coverage":
		head := []string{"event_name", "events"}
		for _, k := range overview.Keys {
			head = append(head, k.Name)
		}
		rows = append(rows, head)
		for _, cv := range overview.Coverages(d.inRange, 0) {
			row := []string{cv.EventName, n(cv.Events)}
			for _, k := range cv.Carry {
				row = append(row, n(k))
			}
			rows = append(rows, row)
		}
	case "reconcile":
		rows = append(rows, []string{"stage", "event_name", "leads_reached", "events_made", "sent", "waiting", "failed", "held_back", "dry_run",
			"not_sent", "expired", "destination"})
		for _, r := range reconcile(d) {
			rows = append(rows, []string{r.Stage, r.Event, n(r.Reached.N), n(r.Made.N), n(r.Sent.N), n(r.Waiting.N),
				n(r.Failed.N), n(r.HeldBack.N), n(r.DryRun.N), n(r.NotSent.N), n(r.Expired.N), r.Destination})
		}
	case "sequences":
		rows = append(rows, []string{"dataset_id", "initial_event", "final_event", "week_start", "complete", "at_least"})
		for _, sc := range d.sequences {
			for _, w := range sc.Weeks {
				rows = append(rows, []string{n(sc.Sequence.DatasetID), sc.Sequence.InitialEvent, sc.Sequence.FinalEvent,
					w.Start.Format("2006-01-02"), n(w.Complete), strconv.FormatBool(w.AtLeast)})
			}
		}
	default:
		return echo.NewHTTPError(http.StatusNotFound, "No such table")
	}
	w := startCSV(c, fmt.Sprintf("overview-%s-%s-%s.csv", currentAccount(c).Slug, table, d.filter.from.Format("2006-01-02")))
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Close(nil)
}
