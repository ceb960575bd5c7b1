package views

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// WeeklyCounts is what WeeklyChart draws: counts per week, one line per
// series.
type WeeklyCounts struct {
	// ID is unique on the page: it prefixes the ids of the chart's parts.
	ID    string
	Title string
	// Weeks are the Mondays that start the weeks, oldest first.
	Weeks []time.Time
	// Series are drawn in order, at most four (more are not drawn).
	Series []ChartSeries
	// Empty is the sentence shown instead of the chart when every value is
	// zero or there are no weeks; a default one names the series.
	Empty string
}

// ChartSeries is one line of a WeeklyCounts chart.
type ChartSeries struct {
	// Name is the legend's and the table's: "Leads".
	Name string
	// One is a point's noun for a count of 1 ("lead"); the lower-case Name
	// otherwise ("48 leads"). Empty: the lower-case Name for every count.
	One string
	// Class picks the series' colour in app.css: "leads", "junk",
	// "qualified". Marker shape and dash pattern follow the series' order,
	// so series differ by more than colour.
	Class string
	// Values has one count per week.
	Values []int64
	// Links, when set, has one URL per week to the rows behind the point
	// ("" for none).
	Links []string
}

// FunnelChart is a funnel from leads to each mapped stage.
type FunnelChart struct {
	// ID is unique on the page.
	ID    string
	Title string
	// Steps start with the leads ("Leads") and follow the stages in order.
	Steps []FunnelStep
	// Empty is the sentence shown instead of the funnel when the first
	// step counts nothing.
	Empty string
}

// FunnelStep is one step of a FunnelChart. Its rates are worked out from
// the counts of the first and the previous step.
type FunnelStep struct {
	Name  string
	Count int64
	// Href lists the rows behind the count; "" for no link.
	Href string
	// Median is the median time from a lead to this stage, when HasMedian.
	Median    time.Duration
	HasMedian bool
}

// The chart's drawing area, in SVG user units. The SVG scales to the width
// of its box; app.css enlarges its text and markers on narrow screens so
// they stay readable when the whole drawing is scaled down.
const (
	chartWidth  = 800
	chartHeight = 320
	chartTop    = 16
	chartRight  = 16
	chartBottom = 44 // room for the week labels
	// maxChartSeries is the most series drawn: four marker shapes.
	maxChartSeries = 4
	// mostLabels is the most week labels shown on a wide screen, and
	// mostNarrowLabels on a phone.
	mostLabels       = 13
	mostNarrowLabels = 6
	// maxChartValue bounds the axis so its arithmetic cannot overflow.
	maxChartValue = int64(1e17)
)

// yTicks returns the y axis's ticks for counts up to top: from 0 in steps
// of 1, 2 or 5 times a power of ten, 2 to 6 ticks, the last at or above
// top. An axis for top 0 goes to 1.
func yTicks(top int64) []int64 {
	top = min(max(top, 1), maxChartValue)
	step := int64(1)
	for {
		for _, m := range []int64{1, 2, 5} {
			s := step * m
			n := top / s
			if top%s != 0 {
				n++
			}
			if n <= 5 {
				ticks := make([]int64, n+1)
				for i := range ticks {
					ticks[i] = int64(i) * s
				}
				return ticks
			}
		}
		step *= 10
	}
}

// axisNumber writes a tick's count short enough for the axis: "800",
// "2,500", "40k", "1.5M".
func axisNumber(n int64) string {
	switch {
	case n >= 1e9:
		return shortNumber(n, 1e9, "B")
	case n >= 1e6:
		return shortNumber(n, 1e6, "M")
	case n >= 1e4:
		return shortNumber(n, 1e3, "k")
	}
	return countUpTo(n, math.MaxInt64)
}

// shortNumber writes n in units of unit, with one decimal when it has one.
func shortNumber(n, unit int64, suffix string) string {
	s := strconv.FormatFloat(float64(n)/float64(unit), 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + suffix
}

// chartPlot is a weekly chart's geometry: where the axis, the week labels
// and each point go.
type chartPlot struct {
	Left, Right, Top, Bottom float64
	Ticks                    []chartTick
	Labels                   []chartLabel
	Lines                    []chartLine
}

type chartTick struct {
	Y     float64
	Label string
}

type chartLabel struct {
	X    float64
	Text string
	// Wide: shown on wide screens only (thinned on a phone).
	Wide bool
}

type chartLine struct {
	Series ChartSeries
	Index  int
	Points []chartPoint
}

type chartPoint struct {
	X, Y  float64
	Value int64
	Title string
	Link  string
}

// plot works out the chart's geometry. Points sit in the middle of their
// week's band; the y axis runs from 0 to its top tick.
func (c WeeklyCounts) plot() chartPlot {
	series := c.series()
	var top int64
	for _, s := range series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	ticks := yTicks(top)
	top = ticks[len(ticks)-1]
	widest := 0
	for _, t := range ticks {
		widest = max(widest, len(axisNumber(t)))
	}
	// Wide enough for the longest tick label at the enlarged phone size.
	p := chartPlot{Left: float64(16 + 15*widest), Right: chartWidth - chartRight, Top: chartTop, Bottom: chartHeight - chartBottom}
	y := func(v int64) float64 {
		v = min(max(v, 0), maxChartValue)
		return p.Bottom - float64(v)/float64(top)*(p.Bottom-p.Top)
	}
	for _, t := range ticks {
		p.Ticks = append(p.Ticks, chartTick{Y: y(t), Label: axisNumber(t)})
	}
	n := len(c.Weeks)
	if n == 0 {
		return p
	}
	band := (p.Right - p.Left) / float64(n)
	x := func(i int) float64 { return p.Left + (float64(i)+0.5)*band }
	every, narrow := labelEvery(n, mostLabels), labelEvery(n, mostNarrowLabels)
	for i, w := range c.Weeks {
		// Counted from the newest week, so the newest is always labelled.
		back := n - 1 - i
		if back%every != 0 {
			continue
		}
		p.Labels = append(p.Labels, chartLabel{X: x(i), Text: weekLabel(w), Wide: back%narrow != 0})
	}
	for si, s := range series {
		l := chartLine{Series: s, Index: si}
		for i, w := range c.Weeks {
			v := at(s.Values, i)
			l.Points = append(l.Points, chartPoint{
				X: x(i), Y: y(v), Value: v, Link: at(s.Links, i),
				Title: "Week of " + weekLabel(w) + ": " + s.noun(v),
			})
		}
		p.Lines = append(p.Lines, l)
	}
	return p
}

// labelEvery is how many weeks apart labels go so that at most most of
// n weeks are labelled.
func labelEvery(n, most int) int {
	if n <= most {
		return 1
	}
	return (n + most - 1) / most
}

// series returns the series drawn: at most maxChartSeries.
func (c WeeklyCounts) series() []ChartSeries {
	return c.Series[:min(len(c.Series), maxChartSeries)]
}

// empty: nothing to draw, no weeks or only zeros.
func (c WeeklyCounts) empty() bool {
	for _, s := range c.series() {
		for _, v := range s.Values[:min(len(s.Values), len(c.Weeks))] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}

// emptyText is the sentence drawn instead of an empty chart.
func (c WeeklyCounts) emptyText() string {
	if c.Empty != "" {
		return c.Empty
	}
	var names []string
	for _, s := range c.series() {
		names = append(names, strings.ToLower(s.Name))
	}
	var what string
	switch len(names) {
	case 0:
		return "Nothing to chart yet."
	case 1:
		what = names[0]
	default:
		what = strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	if len(c.Weeks) == 0 {
		return "No " + what + " to chart yet."
	}
	return "No " + what + " in these " + plural(int64(len(c.Weeks)), "week", "weeks") + "."
}

// description says what the chart shows, for its SVG <desc>.
func (c WeeklyCounts) description() string {
	var names []string
	for _, s := range c.series() {
		names = append(names, strings.ToLower(s.Name))
	}
	d := "Weekly " + strings.Join(names, ", ")
	if n := len(c.Weeks); n > 0 {
		d += " from the week of " + weekDay(c.Weeks[0]) + " to the week of " + weekDay(c.Weeks[n-1])
	}
	return d + "; the table below has the numbers."
}

// total sums a series over the chart's weeks.
func (c WeeklyCounts) total(s ChartSeries) int64 {
	var t int64
	for i := range c.Weeks {
		t += at(s.Values, i)
	}
	return t
}

// noun writes a count with the series' noun: "48 leads", "1 lead".
func (s ChartSeries) noun(n int64) string {
	many := strings.ToLower(s.Name)
	one := s.One
	if one == "" {
		one = many
	}
	return pluralUpTo(n, math.MaxInt64, one, many)
}

// seriesClass is a series' classes: its colour key and its order, which
// sets its dash pattern and marker.
func seriesClass(s ChartSeries, i int) string {
	c := "series-" + strconv.Itoa(i)
	if s.Class != "" {
		c += " series-" + s.Class
	}
	return c
}

// markerPath is the marker of the i-th series, centred on 0,0: a circle,
// a square, a triangle, a diamond.
func markerPath(i int) string {
	switch i % maxChartSeries {
	case 1:
		return "M-4,-4H4V4H-4Z"
	case 2:
		return "M0,-5L5,4H-5Z"
	case 3:
		return "M0,-5.5L5.5,0L0,5.5L-5.5,0Z"
	}
	return "M-4.5,0A4.5,4.5 0 1,0 4.5,0A4.5,4.5 0 1,0 -4.5,0Z"
}

// linePath is the polyline through a line's points.
func linePath(l chartLine) string {
	var b strings.Builder
	for i, p := range l.Points {
		if i == 0 {
			b.WriteByte('M')
		} else {
			b.WriteByte('L')
		}
		b.WriteString(coord(p.X) + "," + coord(p.Y))
	}
	return b.String()
}

// translate is an SVG transform that moves to x,y.
func translate(x, y float64) string { return "translate(" + coord(x) + " " + coord(y) + ")" }

// coord writes an SVG coordinate with one decimal at most.
func coord(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// weekLabel is a week's axis label: "Nov 2".
func weekLabel(t time.Time) string { return t.Format("Jan 2") }

// weekDay is a week's Monday with its year, for the table: "Nov 2, 2025".
func weekDay(t time.Time) string { return t.Format("Jan 2, 2006") }

// at is s[i], or the zero value past its end.
func at[T any](s []T, i int) T {
	var zero T
	if i < len(s) {
		return s[i]
	}
	return zero
}

// empty: the first step counts nothing, so no rate means anything.
func (f FunnelChart) empty() bool { return len(f.Steps) == 0 || f.Steps[0].Count <= 0 }

// emptyText is the sentence drawn instead of an empty funnel.
func (f FunnelChart) emptyText() string {
	if f.Empty != "" {
		return f.Empty
	}
	return "No leads yet: the funnel starts with the first lead."
}

// firstNoun is the first step's name in a sentence: "leads".
func (f FunnelChart) firstNoun() string { return strings.ToLower(f.Steps[0].Name) }

// barWidth is the share of the first step's count, 0 to 100, for a
// step's bar. A step counting more than the first fills the bar.
func (f FunnelChart) barWidth(i int) string {
	first := f.Steps[0].Count
	if first <= 0 {
		return "0"
	}
	w := min(float64(max(f.Steps[i].Count, 0))/float64(first)*100, 100)
	return coord(w)
}

// rate writes n as a share of of: "42.0 %", or "—" when of is 0.
func rate(n, of int64) string {
	if of <= 0 {
		return "—"
	}
	return strconv.FormatFloat(float64(n)/float64(of)*100, 'f', 1, 64) + " %"
}

// medianTime writes a median time from lead to stage: "< 1 min", "45 min",
// "5 h", "2.5 h", "3.2 days", "14 days"; "—" when it is not known.
func medianTime(d time.Duration, known bool) string {
	if !known || d < 0 {
		return "—"
	}
	switch {
	case d < time.Minute:
		return "< 1 min"
	case d < time.Hour:
		return strconv.Itoa(int(d.Round(time.Minute)/time.Minute)) + " min"
	case d < 48*time.Hour:
		return decimal(d.Hours()) + " h"
	}
	return decimal(d.Hours()/24) + " days"
}

// decimal writes f with one decimal under 10 and none from 10 on, without
// a trailing ".0": "2.5", "5", "14".
func decimal(f float64) string {
	if f >= 9.95 {
		return strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}

// StartAt drops the chart's first weeks that end before first (the
// account's creation) and count nothing, so a new account's chart starts
// at its first week, not with weeks it did not exist in. Weeks with counts
// stay: leads imported with their own older dates are drawn. The last
// week always stays.
func (c *WeeklyCounts) StartAt(first time.Time) {
	drop := 0
	for drop < len(c.Weeks)-1 && !c.Weeks[drop+1].After(first) && c.zeroWeek(drop) {
		drop++
	}
	if drop == 0 {
		return
	}
	c.Weeks = c.Weeks[drop:]
	for i := range c.Series {
		s := &c.Series[i]
		s.Values = s.Values[min(drop, len(s.Values)):]
		if s.Links != nil {
			s.Links = s.Links[min(drop, len(s.Links)):]
		}
	}
}

// zeroWeek says whether every series counts nothing in week i.
func (c *WeeklyCounts) zeroWeek(i int) bool {
	for _, s := range c.Series {
		if i < len(s.Values) && s.Values[i] != 0 {
			return false
		}
	}
	return true
}

// LastWeeks names a chart's span of n weeks: "this week", "last 2 weeks".
func LastWeeks(n int) string {
	if n <= 1 {
		return "this week"
	}
	return "last " + strconv.Itoa(n) + " weeks"
}
