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
	"sync"
)

var (
	once     sync.Once
	built    string
	buildErr error

	mcpOnce  sync.Once
	mcpBuilt string
	mcpErr   error
)

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
	once.Do(func() { built, buildErr = build() })
	return built, buildErr
}

// MCPTestServer returns the path of the MCP test server
// (internal/mcp/mcptest/cmd/mcptestserver) of the checkout, built on the
// first call of a test process, beside the gencode binary.
func MCPTestServer() (string, error) {
	mcpOnce.Do(func() {
		mcpBuilt, mcpErr = buildPkg("mcptestserver", "github.com/gencode/gencode/internal/mcp/mcptest/cmd/mcptestserver")
	})
	return mcpBuilt, mcpErr
}

func build() (string, error) {
	return buildPkg("gencode", "github.com/gencode/gencode/cmd/gencode")
}

// buildPkg builds pkg as name into the checkout's directory under the
// user's cache, under its lock.
func buildPkg(name, pkg string) (string, error) {
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
	cmd := exec.Command("go", "build", "-ldflags=-w", "-o", path, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as `make build` does
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
