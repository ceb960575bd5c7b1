package dispatch

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadsignal/leadsignal/store"
)

// Metrics are the dispatcher's Prometheus metrics.
type Metrics struct {
	settledTotal *prometheus.CounterVec
	latency      prometheus.Histogram
	batchSize    prometheus.Histogram
}

// NewMetrics registers the dispatcher's metrics, and a queue-depth gauge
// read from the database at each scrape, on reg.
func NewMetrics(reg prometheus.Registerer, s *store.Store) *Metrics {
	m := &Metrics{
		settledTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leadsignal_events_settled_total",
			Help: "Events the dispatcher settled, by outcome (sent, failed, expired, dry_run, queued for retry).",
		}, []string{"status"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leadsignal_capi_request_seconds",
			Help:    "Duration of requests to Meta's Conversions API.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10),
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leadsignal_capi_batch_events",
			Help:    "Events per request to Meta's Conversions API.",
			Buckets: []float64{1, 10, 50, 100, 250, 500, 1000},
		}),
	}
	reg.MustRegister(m.settledTotal, m.latency, m.batchSize, &depthCollector{store: s,
		desc: prometheus.NewDesc("leadsignal_events_queue", "Events still to send, by status: queued or sending.", []string{"status"}, nil)})
	return m
}

func (m *Metrics) settled(outs []store.Outcome) {
	if m == nil {
		return
	}
	for _, o := range outs {
		m.settledTotal.WithLabelValues(string(o.Status)).Inc()
	}
}

func (m *Metrics) request(d time.Duration, events int) {
	if m == nil {
		return
	}
	m.latency.Observe(d.Seconds())
	m.batchSize.Observe(float64(events))
}

// depthCollector counts the events still to send when Prometheus scrapes.
type depthCollector struct {
	store *store.Store
	desc  *prometheus.Desc
}

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	depth, err := c.store.QueueDepth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for st, n := range depth {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), string(st))
	}
}
