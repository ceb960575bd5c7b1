// Package overview turns an account's counts (store.Counts) into what its
// Overview and the agency overview show: headline figures per span, the
// leads that reached each stage (at it or at a later one), the median time
// from lead to stage, junk reasons, match-key coverage per event name, and
// Meta's readiness checks for conversion leads optimisation. It is pure:
// the store reads, web renders.
package overview
