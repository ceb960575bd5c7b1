// Package service gives leadsignal's background work one shape: a Loop
// runs a round of work at once, then again whenever it is woken (Wake,
// which coalesces) or its interval has passed, until its context ends or
// it is stopped; a round that has finished the work for good ends it. The
// dispatcher, the CRM worker, the stage upload runner, the counts merge,
// the statistics of new tables, the backfill and the session sweeper are
// each one Loop (docs/architecture.md, "Background work").
package service
