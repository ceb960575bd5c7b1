package crmsync

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// RegisterMetrics reports the CRM inbox at each scrape:
// leadsignal_crm_deliveries_waiting by what the deliveries wait for (new:
// not tried yet; lead, mapping, crm, attention). Read from the database, it is the
// same on every replica; a mapping or crm count that does not fall is a
// connection to look at.
func RegisterMetrics(reg prometheus.Registerer, s *store.Store) {
	reg.MustRegister(&waitingCollector{store: s,
		desc: prometheus.NewDesc("leadsignal_crm_deliveries_waiting",
			"CRM deliveries waiting, by what they wait for: new (not tried yet), lead, mapping, crm or attention.", []string{"waiting_for"}, nil)})
}

type waitingCollector struct {
	store *store.Store
	desc  *prometheus.Desc
}

func (c *waitingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *waitingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.store.CRMWaiting(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	// Each label is reported, zero too, so that an alert on one sees it
	// fall back to 0.
	for label, key := range map[string]string{"new": "", "lead": models.WaitingLead, "mapping": models.WaitingMapping, "crm": models.WaitingCRM,
		"attention": models.WaitingAttention} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n[key]), label)
	}
}
