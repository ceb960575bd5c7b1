package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
)

// printSummary prints the figures of the run, for people and then as
// key=value lines for .ci/bench-dispatch. batchLen and size are the
// baseline's ready-made batch's events and bytes.
func printSummary(cfg config, dr *drainResult, base baselineResult, probes []probeResult, build time.Duration,
	batchLen, size int, rssBeforeKB int64, counts map[models.EventStatus]int, sendRows int, received, refused int64) {
	rate := float64(dr.events) / dr.wall.Seconds()
	ratio := 0.0
	if base.rate > 0 {
		ratio = rate / base.rate
	}
	verdict := "FAIL"
	if ratio >= cfg.budget && dr.failedSends == 0 && dr.events == cfg.events {
		verdict = "PASS"
	}
	var total, send, other []time.Duration
	var sumTotal, sumSend time.Duration
	for _, b := range dr.batches {
		total = append(total, b.total)
		send = append(send, b.send)
		other = append(other, b.total-b.send)
		sumTotal += b.total
		sumSend += b.send
	}
	for _, s := range [][]time.Duration{total, send, other} {
		slices.Sort(s)
	}
	nb := max(len(dr.batches), 1)
	// Events built at send time spend the build's time besides the
	// database's; prepared ones do not.
	built := build
	if cfg.prepared {
		built = 0
	}
	dbEst := func(d time.Duration) float64 { return max(benchkit.Millis(d)-benchkit.Millis(built), 0) }

	fmt.Printf("dispatch: to %s, %d events in %s (%.0f events/s), %d requests, DB ms/batch p50 %.1f / p99 %.1f, send ms/batch p50 %.1f / p99 %.1f, peak RSS %.0f MB; baseline fake %.0f events/s; ratio %.3f; budget %.1f %s\n",
		platform.Name(cfg.kind), dr.events, dr.wall.Round(time.Millisecond), rate, dr.requests, dbEst(benchkit.Percentile(other, .5)), dbEst(benchkit.Percentile(other, .99)),
		benchkit.Millis(benchkit.Percentile(send, .5)), benchkit.Millis(benchkit.Percentile(send, .99)), float64(dr.peakRSSKB)/1024, base.rate, ratio, cfg.budget, verdict)
	fmt.Printf("dispatch: per batch (%d batches, mean %.0f events): total p50 %.1f / p99 %.1f / max %.1f ms; not sending (DB + build) p50 %.1f / p99 %.1f ms, mean %.1f ms = %.0f%% of the time; building a batch from its leads %.1f ms (measured apart; %s)\n",
		len(dr.batches), float64(dr.events)/float64(nb), benchkit.Millis(benchkit.Percentile(total, .5)), benchkit.Millis(benchkit.Percentile(total, .99)), benchkit.Millis(benchkit.Percentile(total, 1)),
		benchkit.Millis(benchkit.Percentile(other, .5)), benchkit.Millis(benchkit.Percentile(other, .99)), benchkit.Millis(sumTotal-sumSend)/float64(nb), 100*float64(sumTotal-sumSend)/float64(max(sumTotal, 1)), benchkit.Millis(build),
		map[bool]string{true: "the drain sends prepared payloads and builds none", false: "subtracted for \"DB\""}[cfg.prepared])
	during := "none"
	if len(base.slices) > 0 {
		during = fmt.Sprintf("%d runs of %s, %.0f to %.0f", len(base.slices), cfg.sliceLen, slices.Min(base.slices), slices.Max(base.slices))
	}
	fmt.Printf("dispatch: batch body %d KB (%d events, %d B/event); fake=%s; baseline %.0f events/s before the drain, %.0f after, during it (the drain paused) %s; %d requests in %.0fs, %d client(s)\n",
		size>>10, batchLen, size/max(batchLen, 1), cfg.fake, base.before, base.after, during, base.requests, base.seconds, cfg.dispatchers)
	pgText := "unknown"
	if dr.pgCPU >= 0 {
		pgText = fmt.Sprintf("%.2fs = %.1f us/event", dr.pgCPU, 1e6*dr.pgCPU/float64(max(dr.events, 1)))
	}
	fmt.Printf("dispatch: CPU during the drain: Go process (dispatcher + fake) %.2fs = %.1f us/event; Postgres %s; %d GCs, %.0f MB allocated (%.1f KB/event)\n",
		dr.goCPU.Seconds(), 1e6*dr.goCPU.Seconds()/float64(max(dr.events, 1)), pgText, dr.gcCycles,
		float64(dr.totalAlloc)/(1<<20), float64(dr.totalAlloc)/1024/float64(max(dr.events, 1)))
	fmt.Printf("dispatch: peak RSS of the drain %.0f MB (whole run before it %.0f MB, fake server in-process); events by status %v; %d send_requests rows; fake received %d, refused %d\n",
		float64(dr.peakRSSKB)/1024, float64(rssBeforeKB)/1024, counts, sendRows, received, refused)
	if len(probes) > 0 {
		var b strings.Builder
		for i, name := range probes[0].names {
			var ts []time.Duration
			for _, p := range probes {
				if i < len(p.times) {
					ts = append(ts, p.times[i])
				}
			}
			slices.Sort(ts)
			fmt.Fprintf(&b, " %s %.1f", name, benchkit.Millis(ts[len(ts)/2]))
		}
		fmt.Printf("dispatch: store calls of one batch on the full backlog (median of %d, ms; the last four without commit):%s\n", len(probes), b.String())
	}
	if dr.failedSends > 0 {
		fmt.Printf("dispatch: %d requests failed; first: %s\n", dr.failedSends, dr.firstErr)
	}
	fmt.Printf("kind=%s\n", cfg.kind)
	fmt.Printf("events=%d\n", dr.events)
	fmt.Printf("seconds=%.3f\n", dr.wall.Seconds())
	fmt.Printf("events_per_sec=%.1f\n", rate)
	fmt.Printf("requests=%d\n", dr.requests)
	fmt.Printf("batches=%d\n", len(dr.batches))
	fmt.Printf("db_ms_p50=%.2f\n", dbEst(benchkit.Percentile(other, .5)))
	fmt.Printf("db_ms_p99=%.2f\n", dbEst(benchkit.Percentile(other, .99)))
	fmt.Printf("nonsend_ms_p50=%.2f\n", benchkit.Millis(benchkit.Percentile(other, .5)))
	fmt.Printf("nonsend_ms_p99=%.2f\n", benchkit.Millis(benchkit.Percentile(other, .99)))
	fmt.Printf("send_ms_p50=%.2f\n", benchkit.Millis(benchkit.Percentile(send, .5)))
	fmt.Printf("send_ms_p99=%.2f\n", benchkit.Millis(benchkit.Percentile(send, .99)))
	fmt.Printf("build_ms=%.2f\n", benchkit.Millis(build))
	fmt.Printf("peak_rss_mb=%.1f\n", float64(dr.peakRSSKB)/1024)
	fmt.Printf("go_cpu_us_per_event=%.2f\n", 1e6*dr.goCPU.Seconds()/float64(max(dr.events, 1)))
	if dr.pgCPU >= 0 {
		fmt.Printf("pg_cpu_us_per_event=%.2f\n", 1e6*dr.pgCPU/float64(max(dr.events, 1)))
	}
	fmt.Printf("baseline_events_per_sec=%.1f\n", base.rate)
	fmt.Printf("baseline_before=%.1f\n", base.before)
	fmt.Printf("baseline_after=%.1f\n", base.after)
	if len(base.slices) > 0 {
		fmt.Printf("baseline_during_min=%.1f\n", slices.Min(base.slices))
		fmt.Printf("baseline_during_max=%.1f\n", slices.Max(base.slices))
	}
	fmt.Printf("ratio=%.4f\n", ratio)
	fmt.Printf("budget=%.2f\n", cfg.budget)
	fmt.Printf("verdict=%s\n", verdict)
}
