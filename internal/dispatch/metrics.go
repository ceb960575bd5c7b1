package dispatch

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Metrics are the dispatcher's Prometheus metrics.
type Metrics struct {
	settledTotal *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	batchSize    *prometheus.HistogramVec
}

// NewMetrics registers the dispatcher's metrics, and a queue-depth gauge
// read from the database at each scrape, on reg.
func NewMetrics(reg prometheus.Registerer, s *store.Store) *Metrics {
	m := &Metrics{
		settledTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leadsignal_events_settled_total",
			Help: "Events the dispatcher settled, by destination kind (meta, tiktok, pinterest, google) and outcome (sent, failed, expired, dry_run, queued for retry).",
		}, []string{"platform", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leadsignal_capi_request_seconds",
			Help:    "Duration of requests to each destination kind's platform (Meta's Conversions API and the others).",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10),
		}, []string{"platform"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leadsignal_capi_batch_events",
			Help:    "Events per request to each destination kind's platform.",
			Buckets: []float64{1, 10, 50, 100, 250, 500, 1000, 2000},
		}, []string{"platform"}),
	}
	reg.MustRegister(m.settledTotal, m.latency, m.batchSize, &depthCollector{store: s, now: time.Now,
		desc: prometheus.NewDesc("leadsignal_events_queue", "Events still to send, by status: queued or sending.", []string{"status"}, nil),
		held: prometheus.NewDesc("leadsignal_datasets_held", "Datasets held because Meta or the network fails their requests.", nil, nil),
		oldest: prometheus.NewDesc("leadsignal_oldest_waiting_event_seconds",
			"Age of the oldest event waiting to be sent (its event_time); 0 when none waits. Meta refuses events older than 7 days.", nil, nil)})
	return m
}

func (m *Metrics) settled(k models.Kind, outs []store.Outcome) {
	if m == nil {
		return
	}
	for _, o := range outs {
		m.settledTotal.WithLabelValues(string(k), string(o.Status)).Inc()
	}
}

func (m *Metrics) request(k models.Kind, d time.Duration, events int) {
	if m == nil {
		return
	}
	m.latency.WithLabelValues(string(k)).Observe(d.Seconds())
	m.batchSize.WithLabelValues(string(k)).Observe(float64(events))
}

// depthCollector reads the queue's depth and the datasets' holds from the
// database when Prometheus scrapes: they are shared by every replica.
type depthCollector struct {
	store              *store.Store
	now                func() time.Time
	desc, held, oldest *prometheus.Desc
}

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.held
	ch <- c.oldest
}

func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	depth, err := c.store.QueueDepth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
	}
	for st, n := range depth {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), string(st))
	}
	held, oldest, err := c.store.HoldStats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.held, err)
		ch <- prometheus.NewInvalidMetric(c.oldest, err)
		return
	}
	age := 0.0
	if oldest != nil {
		age = max(c.now().Sub(*oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(held))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}
