//go:build !race

package view

const raceOn = false
