// Command linkcache is make test's -toolexec. It runs every Go tool as
// asked, except that it keeps the test binaries the linker writes: a test
// binary whose link inputs did not change since the last make test is
// copied back instead of linked again.
//
//	go build -o bin/linkcache ./scripts/linkcache
//	go test -toolexec "$PWD/bin/linkcache" ./...
//	go run ./scripts/linkcache -clean   # removes the kept binaries
//
// go test caches every compiled package but links each test binary again
// on every run (go run and go tool executables are cached since Go 1.24,
// test binaries are not): with -race that is ~0.5 CPU-s a package, 25 of
// make test's CPU-s, spent again for the packages an edit did not touch.
// The key is the build id go gives the linker, whose first part is the
// link's action id: a hash of everything the link reads (the compiled
// packages' content ids, the flags, the toolchain). Go's builds are
// reproducible, so a binary linked from the same action id is the same
// file; go then stamps its content id into it as after any link.
//
// One binary is kept per package (TOOLEXEC_IMPORTPATH), the last one
// linked, under $GENCODE_LINKCACHE or the user's cache directory
// (gencode-linkcache): about 650 MB for this module's race-built tests.
// make clean removes it (-clean).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: linkcache TOOL [ARG...] (as go build -toolexec) | linkcache -clean")
		os.Exit(2)
	}
	if os.Args[1] == "-clean" {
		dir, err := cacheDir()
		if err == nil {
			err = os.RemoveAll(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "linkcache:", err)
			os.Exit(1)
		}
		return
	}
	tool, args := os.Args[1], os.Args[2:]
	if strings.TrimSuffix(filepath.Base(tool), ".exe") == "link" {
		if dir, err := cacheDir(); err == nil {
			if l, ok := parseLink(args); ok {
				os.Exit(cachedLink(dir, os.Getenv("TOOLEXEC_IMPORTPATH"), tool, args, l))
			}
		}
	}
	os.Exit(run(tool, args))
}

// link is what linkcache reads of a link command line.
type link struct {
	out     string // -o
	buildID string // -buildid
}

// parseLink finds the output and build id of a link; ok is false for a
// command line without both (then the link runs as asked, uncached).
func parseLink(args []string) (link, bool) {
	var l link
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" && i+1 < len(args):
			i++
			l.out = args[i]
		case strings.HasPrefix(a, "-o="):
			l.out = strings.TrimPrefix(a, "-o=")
		case a == "-buildid" && i+1 < len(args):
			i++
			l.buildID = args[i]
		case strings.HasPrefix(a, "-buildid="):
			l.buildID = strings.TrimPrefix(a, "-buildid=")
		}
	}
	return l, l.out != "" && l.buildID != ""
}

// cachedLink copies the binary kept for this build id to the link's output,
// or links it and keeps it. A failure to keep it is not the link's: the
// link's status is returned whatever happens to the cache.
func cachedLink(dir, importPath, tool string, args []string, l link) int {
	if importPath == "" {
		importPath = filepath.Base(l.out)
	}
	sum := sha256.Sum256([]byte(l.buildID))
	pkgDir := filepath.Join(dir, strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(importPath))
	kept := filepath.Join(pkgDir, hex.EncodeToString(sum[:16]))
	if err := copyFile(kept, l.out); err == nil {
		return 0
	}
	if code := run(tool, args); code != 0 {
		return code
	}
	keep(pkgDir, kept, l.out)
	return 0
}

// keep stores out as kept, the package's only binary: the one linked
// before is removed. Written to a temporary file and renamed, so that a
// make test running at the same time reads a whole binary or none.
func keep(pkgDir, kept, out string) {
	if err := os.MkdirAll(pkgDir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(pkgDir, ".tmp-*")
	if err != nil {
		return
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp.Name())
		}
	}()
	src, err := os.Open(out)
	if err != nil {
		_ = tmp.Close()
		return
	}
	_, err = io.Copy(tmp, src)
	_ = src.Close()
	if err = errors.Join(err, tmp.Close()); err != nil {
		return
	}
	if err := os.Rename(tmp.Name(), kept); err != nil {
		return
	}
	ok = true
	entries, _ := os.ReadDir(pkgDir)
	for _, e := range entries {
		if p := filepath.Join(pkgDir, e.Name()); p != kept && !strings.HasPrefix(e.Name(), ".tmp-") {
			_ = os.Remove(p)
		}
	}
}

// copyFile copies src to a new executable dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o777)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err = errors.Join(err, out.Close()); err != nil {
		_ = os.Remove(dst)
	}
	return err
}

// cacheDir is where the binaries are kept.
func cacheDir() (string, error) {
	if d := os.Getenv("GENCODE_LINKCACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gencode-linkcache"), nil
}

// run runs the tool and returns its exit status.
func run(tool string, args []string) int {
	cmd := exec.Command(tool, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "linkcache: %s: %v\n", filepath.Base(tool), err)
		return 1
	}
}
