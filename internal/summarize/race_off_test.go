//go:build !race

package summarize

const raceOn = false
