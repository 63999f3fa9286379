package tools

import (
	"os"
	"testing"

	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/sandbox/confine"
)

// TestMain makes the test binary the sandbox helper when a sandboxed Bash
// call runs it as one (gencode's main does the same for the real binary).
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(confine.Main(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}
