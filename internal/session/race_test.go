//go:build race

package session

// raceEnabled scales down the slowest tests under the race detector, which
// makes SQLite (translated C) ~20x slower.
const raceEnabled = true
