package views

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

func TestYTicks(t *testing.T) {
	tests := []struct {
		max  int64
		want []int64
	}{
		{0, []int64{0, 1}},
		{1, []int64{0, 1}},
		{7, []int64{0, 2, 4, 6, 8}},
		{48, []int64{0, 10, 20, 30, 40, 50}},
		{99, []int64{0, 20, 40, 60, 80, 100}},
		{100, []int64{0, 20, 40, 60, 80, 100}},
		{1234567, []int64{0, 500000, 1000000, 1500000}},
		{-5, []int64{0, 1}},
		{1 << 62, []int64{0, 2e16, 4e16, 6e16, 8e16, 1e17}},
	}
	for _, tt := range tests {
		if got := yTicks(tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("yTicks(%d) = %v; want %v", tt.max, got, tt.want)
		}
	}
}

func TestAxisNumber(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{800, "800"},
		{2500, "2,500"},
		{40000, "40k"},
		{500000, "500k"},
		{1500000, "1.5M"},
		{1000000, "1M"},
		{2e9, "2B"},
	}
	for _, tt := range tests {
		if got := axisNumber(tt.n); got != tt.want {
			t.Errorf("axisNumber(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestLabelEvery(t *testing.T) {
	tests := []struct{ n, most, want int }{
		{12, 13, 1},
		{12, 6, 2},
		{26, 13, 2},
		{52, 13, 4},
		{52, 6, 9},
		{0, 6, 1},
	}
	for _, tt := range tests {
		if got := labelEvery(tt.n, tt.most); got != tt.want {
			t.Errorf("labelEvery(%d, %d) = %d; want %d", tt.n, tt.most, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		n, of int64
		want  string
	}{
		{42, 100, "42.0 %"},
		{8, 13, "61.5 %"},
		{0, 100, "0.0 %"},
		{5, 0, "—"},
		{0, 0, "—"},
		{150, 100, "150.0 %"},
	}
	for _, tt := range tests {
		if got := rate(tt.n, tt.of); got != tt.want {
			t.Errorf("rate(%d, %d) = %q; want %q", tt.n, tt.of, got, tt.want)
		}
	}
}

func TestMedianTime(t *testing.T) {
	tests := []struct {
		d     time.Duration
		known bool
		want  string
	}{
		{0, false, "—"},
		{5 * time.Hour, false, "—"},
		{-time.Hour, true, "—"},
		{0, true, "< 1 min"},
		{45 * time.Minute, true, "45 min"},
		{5 * time.Hour, true, "5 h"},
		{150 * time.Minute, true, "2.5 h"},
		{23*time.Hour + 40*time.Minute, true, "24 h"},
		{77 * time.Hour, true, "3.2 days"},
		{48 * time.Hour, true, "2 days"},
		{14 * 24 * time.Hour, true, "14 days"},
	}
	for _, tt := range tests {
		if got := medianTime(tt.d, tt.known); got != tt.want {
			t.Errorf("medianTime(%v, %t) = %q; want %q", tt.d, tt.known, got, tt.want)
		}
	}
}

// renderChart renders c and parses it; a rendered <script> fails the test.
func renderChart(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Errorf("the chart has a <script>: %s", html)
	}
	doc, err := goquery.NewDocumentFromReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func chartWeeks(n int) []time.Time {
	var w []time.Time
	for i := range n {
		w = append(w, time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*i))
	}
	return w
}

func TestWeeklyChart(t *testing.T) {
	c := WeeklyCounts{ID: "weekly", Title: "Leads per week", Weeks: chartWeeks(12), Series: []ChartSeries{
		{Name: "Leads", One: "lead", Class: "leads", Values: []int64{48, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1234567},
			Links: []string{"/accounts/1/leads?week=2025-11-03"}},
		{Name: "Junk", Class: "junk", Values: []int64{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{Name: "Qualified", Class: "qualified", Values: []int64{7}},
	}}
	doc := renderChart(t, WeeklyChart(c))
	if got := doc.Find("figcaption").Text(); got != "Leads per week" {
		t.Errorf("title = %q; want %q", got, "Leads per week")
	}
	svg := doc.Find("svg.chart-plot")
	if svg.AttrOr("role", "") != "group" || svg.AttrOr("viewBox", "") == "" || svg.AttrOr("width", "") != "100%" {
		t.Errorf("svg role, viewBox, width = %q, %q, %q", svg.AttrOr("role", ""), svg.AttrOr("viewBox", ""), svg.AttrOr("width", ""))
	}
	for _, id := range strings.Fields(svg.AttrOr("aria-labelledby", "")) {
		if doc.Find("#"+id).Length() != 1 {
			t.Errorf("aria-labelledby names %q, which is not on the page", id)
		}
	}
	var legend []string
	doc.Find(`[data-testid="chart-legend"] li`).Each(func(_ int, s *goquery.Selection) {
		legend = append(legend, strings.Join(strings.Fields(s.Text()), " "))
	})
	if want := []string{"Leads 1,234,679", "Junk 2", "Qualified 7"}; !slices.Equal(legend, want) {
		t.Errorf("legend = %q; want %q", legend, want)
	}
	rows := doc.Find(`[data-testid="chart-table"] tbody tr`)
	if rows.Length() != 12 {
		t.Errorf("table has %d rows; want one per week, 12", rows.Length())
	}
	var last []string
	rows.Last().Find("th, td").Each(func(_ int, s *goquery.Selection) { last = append(last, s.Text()) })
	if want := []string{"Jan 19, 2026", "1,234,567", "0", "0"}; !slices.Equal(last, want) {
		t.Errorf("last row = %q; want %q", last, want)
	}
	if got := rows.First().Find("a").AttrOr("href", ""); got != "/accounts/1/leads?week=2025-11-03" {
		t.Errorf("first row's link = %q", got)
	}
	var titles []string
	doc.Find("g.chart-point title").Each(func(_ int, s *goquery.Selection) { titles = append(titles, s.Text()) })
	if len(titles) != 36 {
		t.Errorf("%d point titles; want 36", len(titles))
	}
	for _, want := range []string{"Week of Nov 3: 48 leads", "Week of Nov 10: 1 lead", "Week of Nov 3: 2 junk", "Week of Nov 3: 7 qualified", "Week of Jan 19: 1,234,567 leads"} {
		if !slices.Contains(titles, want) {
			t.Errorf("no point titled %q in %q", want, titles)
		}
	}
	if got := doc.Find("svg.chart-plot a").AttrOr("href", ""); got != "/accounts/1/leads?week=2025-11-03" {
		t.Errorf("the first point's link = %q", got)
	}
	if got := doc.Find("text.chart-y").Last().Text(); got != "1.5M" {
		t.Errorf("top tick = %q; want 1.5M", got)
	}
	if n, wide := doc.Find("text.chart-x").Length(), doc.Find("text.chart-x.chart-wide").Length(); n != 12 || wide != 6 {
		t.Errorf("%d week labels, %d of them on wide screens only; want 12 and 6", n, wide)
	}
	if doc.Find(`[data-testid="chart-empty"]`).Length() != 0 {
		t.Errorf("a chart with counts says it is empty")
	}
}

// A chart without weeks, series or counts says so instead of drawing.
func TestWeeklyChartEmpty(t *testing.T) {
	series := []ChartSeries{{Name: "Leads", Class: "leads", Values: make([]int64, 12)}, {Name: "Junk", Values: make([]int64, 12)}}
	tests := []struct {
		name string
		c    WeeklyCounts
		want string
	}{
		{"all zeros", WeeklyCounts{ID: "w", Weeks: chartWeeks(12), Series: series}, "No leads or junk in these 12 weeks."},
		{"no weeks", WeeklyCounts{ID: "w", Series: series}, "No leads or junk to chart yet."},
		{"no series", WeeklyCounts{ID: "w", Weeks: chartWeeks(12)}, "Nothing to chart yet."},
		{"short values", WeeklyCounts{ID: "w", Weeks: chartWeeks(12), Series: []ChartSeries{{Name: "Leads"}}}, "No leads in these 12 weeks."},
		{"its own sentence", WeeklyCounts{ID: "w", Weeks: chartWeeks(3), Series: series, Empty: "No leads yet."}, "No leads yet."},
		{"zero value", WeeklyCounts{}, "Nothing to chart yet."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := renderChart(t, WeeklyChart(tt.c))
			if got := doc.Find(`[data-testid="chart-empty"]`).Text(); got != tt.want {
				t.Errorf("empty sentence = %q; want %q", got, tt.want)
			}
			if doc.Find("svg, table").Length() != 0 {
				t.Errorf("an empty chart draws an svg or a table")
			}
		})
	}
}

// A series with fewer values or links than weeks draws zeros for the rest.
func TestWeeklyChartShortSeries(t *testing.T) {
	c := WeeklyCounts{ID: "w", Title: "T", Weeks: chartWeeks(4), Series: []ChartSeries{{Name: "Leads", Values: []int64{3}}}}
	doc := renderChart(t, WeeklyChart(c))
	if got := doc.Find("g.chart-point title").Last().Text(); got != "Week of Nov 24: 0 leads" {
		t.Errorf("last point = %q", got)
	}
}

func TestFunnel(t *testing.T) {
	f := FunnelChart{ID: "funnel", Title: "Funnel", Steps: []FunnelStep{
		{Name: "Leads", Count: 1000, Href: "/leads"},
		{Name: "Qualified", Count: 420, Href: "/leads?stage=qualified", Median: 77 * time.Hour, HasMedian: true},
		{Name: "Booked", Count: 0, Median: 5 * time.Hour, HasMedian: true},
		{Name: "Won", Count: 0},
	}}
	doc := renderChart(t, Funnel(f))
	if got := doc.Find("figcaption").Text(); got != "Funnel" {
		t.Errorf("title = %q", got)
	}
	steps := doc.Find(`[data-testid="funnel-step"]`)
	if steps.Length() != 4 {
		t.Fatalf("%d steps; want 4", steps.Length())
	}
	text := func(s *goquery.Selection, testid string) string {
		return strings.Join(strings.Fields(s.Find(`[data-testid="`+testid+`"]`).Text()), " ")
	}
	tests := []struct {
		step                               int
		count, ofFirst, ofPrevious, median string
	}{
		{0, "1,000", "", "", ""},
		{1, "420", "42.0 % of leads", "42.0 % of previous", "median 3.2 days"},
		{2, "0", "0.0 % of leads", "0.0 % of previous", "median 5 h"},
		{3, "0", "0.0 % of leads", "— of previous", "median —"},
	}
	for _, tt := range tests {
		s := steps.Eq(tt.step)
		got := []string{text(s, "funnel-count"), text(s, "funnel-of-first"), text(s, "funnel-of-previous"), text(s, "funnel-median")}
		if want := []string{tt.count, tt.ofFirst, tt.ofPrevious, tt.median}; !slices.Equal(got, want) {
			t.Errorf("step %d = %q; want %q", tt.step, got, want)
		}
	}
	if got := steps.Eq(1).Find("a").AttrOr("href", ""); got != "/leads?stage=qualified" {
		t.Errorf("step 1 links to %q", got)
	}
	if steps.Eq(2).Find("a").Length() != 0 {
		t.Errorf("a step without Href has a link")
	}
	if got := steps.Eq(1).Find("rect.funnel-fill").AttrOr("width", ""); got != "42" {
		t.Errorf("step 1's bar is %q wide; want 42", got)
	}
}

func TestFunnelEmpty(t *testing.T) {
	tests := []struct {
		name string
		f    FunnelChart
	}{
		{"no steps", FunnelChart{}},
		{"no leads", FunnelChart{Steps: []FunnelStep{{Name: "Leads"}, {Name: "Won"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := renderChart(t, Funnel(tt.f))
			if doc.Find(`[data-testid="chart-empty"]`).Text() == "" {
				t.Errorf("an empty funnel has no sentence")
			}
			if doc.Find(`[data-testid="funnel-step"]`).Length() != 0 {
				t.Errorf("an empty funnel draws steps")
			}
		})
	}
}

func TestWeeklyCountsStartAt(t *testing.T) {
	weeks := chartWeeks(4) // Mondays Nov 3, 10, 17, 24 2025
	tests := []struct {
		name   string
		first  time.Time
		values []int64
		want   []int64
	}{
		{"made in the last week", weeks[3].Add(50 * time.Hour), []int64{0, 0, 0, 7}, []int64{7}},
		{"made mid-chart", weeks[1].Add(time.Hour), []int64{0, 0, 2, 7}, []int64{0, 2, 7}},
		{"made on a Monday", weeks[2], []int64{0, 0, 2, 7}, []int64{2, 7}},
		{"older leads stay", weeks[3], []int64{0, 3, 0, 7}, []int64{3, 0, 7}},
		{"made before the chart", weeks[0].AddDate(0, -6, 0), []int64{0, 0, 0, 7}, []int64{0, 0, 0, 7}},
		{"nothing yet", weeks[3].Add(time.Hour), []int64{0, 0, 0, 0}, []int64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := []string{"/w0", "/w1", "/w2", "/w3"}
			c := WeeklyCounts{Weeks: weeks, Series: []ChartSeries{{Name: "Leads", Values: tt.values, Links: links}, {Name: "Junk", Values: make([]int64, 4)}}}
			c.StartAt(tt.first)
			drop := 4 - len(tt.want)
			if !slices.Equal(c.Series[0].Values, tt.want) || !slices.Equal(c.Weeks, weeks[drop:]) || !slices.Equal(c.Series[0].Links, links[drop:]) {
				t.Errorf("StartAt(%s): values %v, weeks %v, links %v; want %v from week %d", tt.first, c.Series[0].Values, c.Weeks, c.Series[0].Links, tt.want, drop)
			}
			if len(c.Series[1].Values) != len(tt.want) {
				t.Errorf("StartAt(%s): the second series has %d weeks; want %d", tt.first, len(c.Series[1].Values), len(tt.want))
			}
		})
	}
}

func TestLastWeeks(t *testing.T) {
	for n, want := range map[int]string{1: "this week", 2: "last 2 weeks", 12: "last 12 weeks"} {
		if got := LastWeeks(n); got != want {
			t.Errorf("LastWeeks(%d) = %q; want %q", n, got, want)
		}
	}
}
