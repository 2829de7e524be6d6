package hub

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Heartbeat results counted in gpuledger_hub_heartbeats_total.
const (
	resultOK           = "ok"
	resultDuplicate    = "duplicate"
	resultUnauthorized = "unauthorized"
	resultRateLimited  = "rate_limited"
	resultBadRequest   = "bad_request"
	resultTooLarge     = "too_large"
	resultError        = "error"
	// resultConflict: a rental's token from another instance than the
	// one the rental is bound to (a copy of it).
	resultConflict = "conflict"
)

type metrics struct {
	heartbeats *prometheus.CounterVec
	latency    prometheus.Histogram
	orders     *prometheus.CounterVec
	results    *prometheus.CounterVec
	enrol      *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, seen func() float64) (*metrics, error) {
	m := &metrics{
		heartbeats: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuledger_hub_heartbeats_total",
			Help: "Heartbeats received, by result.",
		}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gpuledger_hub_heartbeat_duration_seconds",
			Help:    "Time to handle a heartbeat request.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		orders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuledger_hub_orders_total",
			Help: "Orders by final state (done, refused, failed, expired) and issued.",
		}, []string{"outcome"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuledger_hub_order_results_total",
			Help: "Order results reported by agents, by outcome.",
		}, []string{"outcome"}),
		enrol: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpuledger_hub_enrol_heartbeats_total",
			Help: "Heartbeats sent with an enrolment token, by result (announced, waiting, ignored, held, bound, returned, or a refusal).",
		}, []string{"result"}),
	}
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gpuledger_hub_agents_seen",
		Help: "Agents that reported in the last 10 minutes.",
	}, seen)
	for _, c := range []prometheus.Collector{m.heartbeats, m.latency, m.orders, m.results, m.enrol, gauge} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("hub: register metrics: %w", err)
		}
	}
	for _, r := range []string{resultOK, resultDuplicate, resultUnauthorized, resultRateLimited, resultBadRequest, resultTooLarge, resultError, resultConflict} {
		m.heartbeats.WithLabelValues(r)
	}
	for _, r := range []string{enrolAnnounced, enrolWaiting, enrolIgnored, enrolHeld, enrolBound, enrolReturned, enrolReleased,
		resultUnauthorized, resultRateLimited, resultBadRequest, resultTooLarge, resultError} {
		m.enrol.WithLabelValues(r)
	}
	return m, nil
}

func (m *metrics) observe(result string, start time.Time) {
	m.heartbeats.WithLabelValues(result).Inc()
	m.latency.Observe(time.Since(start).Seconds())
}

// observeEnrol counts an enrolment heartbeat (its latency joins the
// heartbeats').
func (m *metrics) observeEnrol(result string, start time.Time) {
	m.enrol.WithLabelValues(result).Inc()
	m.latency.Observe(time.Since(start).Seconds())
}

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
