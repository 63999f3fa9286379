// Command amd64level tells make test whether this CPU runs x86-64-v3 code.
// It does nothing: built with GOAMD64=v3 on a CPU without the v3
// instructions (AVX2, BMI1/2, FMA, ...) the Go runtime refuses to start it
// and it exits with status 1; otherwise it prints v3.
//
//	GOAMD64=v3 go run ./scripts/amd64level   # v3, or a failure
//
// make test builds its race test binaries for v3 where the CPU has it: the
// race runtime's v3 object calls no libgcc routine (its v1 object needs
// __popcountdi2), so the linker skips searching libgcc for every test
// binary, a quarter of each link; the code runs a little faster too. The
// binary users get (make build) stays at Go's default level.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: GOAMD64=v3 amd64level")
		os.Exit(2)
	}
	fmt.Println("v3")
}
