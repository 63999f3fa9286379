//go:build !unix

package redact

// cpuTime is not measured here: benchmarks report wall time only.
func cpuTime() int64 { return 0 }
