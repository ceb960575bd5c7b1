// Package upkeep holds the database's chores that serve runs beside the
// server, each a service.Loop over the store: merging the counts' deltas
// (Counts), the first statistics of new tables (Stats), the backfills of
// migration steps (Backfill) and the sweep of ended sessions (Sessions).
// The store does one round of each; this package says how often.
package upkeep
