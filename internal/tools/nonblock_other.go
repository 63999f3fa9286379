//go:build !unix

package tools

// openNoBlock: there are no FIFOs to open by name here.
const openNoBlock = 0
