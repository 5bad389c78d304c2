// Package threadcpu reads the CPU time of the calling thread, for the
// parsers' ratio benchmarks: they time turns of several parsers on one
// locked OS thread, so that time other processes take counts for none.
package threadcpu
