//go:build race

package view

// raceOn is set when tests run under the race detector, which makes the
// long simulations several times slower.
const raceOn = true
