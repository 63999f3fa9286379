// Package gencodetest builds the gencode binary for the tests that run it
// as a user does (the cli end-to-end tests, bench-session's tests), and
// the MCP test server they run it against: once per checkout, shared by
// every test binary of a `go test ./...` run.
package gencodetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

var (
	once     sync.Once
	built    string
	buildErr error

	raceOnce     sync.Once
	raceBuilt    string
	raceBuildErr error

	mcpOnce  sync.Once
	mcpBuilt string
	mcpErr   error

	panicOnce     sync.Once
	panicBuilt    string
	panicBuildErr error
)

// RaceBinary is Binary built with -race, for the end-to-end tests of what
// runs concurrently inside one gencode (two writers on a session, a kill
// mid-turn or mid-compaction): a data race there makes the binary say
// "WARNING: DATA RACE" on stderr and exit with status 66. It is built with
// make test's flags (modernc.org's SQLite without checkptr nor race
// instrumentation), so it reuses the packages make test compiled.
func RaceBinary() (string, error) {
	raceOnce.Do(func() { raceBuilt, raceBuildErr = build(true) })
	return raceBuilt, raceBuildErr
}

// Binary returns the path of the gencode binary of the checkout that
// holds the working directory, building it on the first call of a test
// process. It is built as `make build` builds it (no cgo), without -race
// (the tests run it hundreds of times)
// and without DWARF (only a debugger reads it), into a directory under
// the user's cache that outlives the run, one per checkout: go build
// relinks only when something changed, and a lock keeps the test binaries
// of one run (which go test starts side by side) from building it twice
// at once.
func Binary() (string, error) {
	once.Do(func() { built, buildErr = build(false) })
	return built, buildErr
}

// PanicBinary is Binary built with -tags gencode_testpanic: it panics in
// the goroutine GENCODE_TEST_PANIC names (turn, summary, indexer, window),
// for the test that a recovered panic leaves the terminal sane.
func PanicBinary() (string, error) {
	panicOnce.Do(func() {
		panicBuilt, panicBuildErr = buildPkg("gencode-testpanic", "github.com/gencode/gencode/cmd/gencode", false, "-tags=gencode_testpanic")
	})
	return panicBuilt, panicBuildErr
}

// MCPTestServer returns the path of the MCP test server
// (internal/mcp/mcptest/cmd/mcptestserver) of the checkout, built on the
// first call of a test process, beside the gencode binary.
func MCPTestServer() (string, error) {
	mcpOnce.Do(func() {
		mcpBuilt, mcpErr = buildPkg("mcptestserver", "github.com/gencode/gencode/internal/mcp/mcptest/cmd/mcptestserver", false)
	})
	return mcpBuilt, mcpErr
}

func build(race bool) (string, error) {
	name := "gencode"
	if race {
		name += "-race"
	}
	return buildPkg(name, "github.com/gencode/gencode/cmd/gencode", race)
}

// buildPkg builds pkg as name into the checkout's directory under the
// user's cache, under its lock. Without race it is built as `make build`
// builds it (no cgo); with race as make test builds its packages: -race
// needs cgo, and modernc.org's SQLite goes without checkptr nor race
// instrumentation (and make test's GOAMD64). flags are go build's, added.
func buildPkg(name, pkg string, race bool, flags ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "gencode-test", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	path := filepath.Join(dir, name)
	args := append([]string{"build", "-ldflags=-w"}, flags...)
	cgo := "CGO_ENABLED=0" // as `make build` does
	if race {
		cgo = "CGO_ENABLED=1"
		args = append(args, "-race", "-gcflags=modernc.org/...=-d=checkptr=0",
			"-gcflags=modernc.org/sqlite/lib=-d=checkptr=0 -race=false",
			"-gcflags=modernc.org/libc/...=-d=checkptr=0 -race=false")
	}
	env := os.Environ()
	if !race {
		// make build's level: make test may build its own packages, and so
		// the race-built binary, for the CPU's (GOAMD64, see the Makefile).
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOAMD64=") })
	}
	cmd := exec.Command("go", append(args, "-o", path, pkg)...)
	cmd.Dir = root
	cmd.Env = append(env, cgo)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return path, nil
}

// moduleRoot is the directory of the go.mod at or above the working
// directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for root := wd; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
		if filepath.Dir(root) == root {
			return "", fmt.Errorf("no go.mod in %s or above", wd)
		}
	}
}
