package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeLinker is a "link" that writes its build id to -o and counts its runs
// in a file beside it; it fails with status 3 when the build id says so.
func fakeLinker(t *testing.T) (tool, runs string) {
	t.Helper()
	dir := t.TempDir()
	tool, runs = filepath.Join(dir, "link"), filepath.Join(dir, "runs")
	script := `#!/bin/sh
echo run >> '` + runs + `'
out= id=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -buildid=*) id=${1#-buildid=} ;;
  esac
  shift
done
[ "$id" = fail ] && exit 3
printf 'binary of %s' "$id" > "$out"
`
	require.NoError(t, os.WriteFile(tool, []byte(script), 0o755))
	return tool, runs
}

func countRuns(t *testing.T, runs string) int {
	b, err := os.ReadFile(runs)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "run")
}

// TestKeptBinaryIsCopiedBack: the same build id links once; another links
// again and replaces the kept binary (one per package); a failed link
// keeps nothing and its status is the tool's.
func TestKeptBinaryIsCopiedBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake linker is a shell script")
	}
	tool, runs := fakeLinker(t)
	cache, work := t.TempDir(), t.TempDir()
	linkAs := func(id string) (int, string) {
		out := filepath.Join(work, "p.test")
		_ = os.Remove(out)
		args := []string{"-o", out, "-importcfg", "cfg", "-buildid=" + id, "main.a"}
		l, ok := parseLink(args)
		require.True(t, ok)
		code := cachedLink(cache, "example.com/m/p.test", tool, args, l)
		b, _ := os.ReadFile(out)
		return code, string(b)
	}
	kept := func() []string {
		entries, err := os.ReadDir(filepath.Join(cache, "example.com_m_p.test"))
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	code, bin := linkAs("A/1/2/A")
	require.Equal(t, 0, code)
	require.Equal(t, "binary of A/1/2/A", bin)
	require.Equal(t, 1, countRuns(t, runs))

	code, bin = linkAs("A/1/2/A")
	require.Equal(t, 0, code)
	require.Equal(t, "binary of A/1/2/A", bin, "copied back")
	require.Equal(t, 1, countRuns(t, runs), "not linked again")

	first := kept()
	code, bin = linkAs("B/1/3/B")
	require.Equal(t, 0, code)
	require.Equal(t, "binary of B/1/3/B", bin)
	require.Equal(t, 2, countRuns(t, runs))
	require.Len(t, kept(), 1, "one binary kept per package")
	require.NotEqual(t, first, kept())

	code, _ = linkAs("fail")
	require.Equal(t, 3, code, "the linker's status")
	require.Len(t, kept(), 1, "a failed link keeps nothing")
}

// TestParseLink reads both spellings of the flags, and refuses a command
// line without an output or a build id (it is linked uncached).
func TestParseLink(t *testing.T) {
	l, ok := parseLink([]string{"-o=x.test", "-buildid", "id", "a.a"})
	require.True(t, ok)
	require.Equal(t, link{out: "x.test", buildID: "id"}, l)
	_, ok = parseLink([]string{"-o", "x.test", "a.a"})
	require.False(t, ok)
	_, ok = parseLink([]string{"-V=full"})
	require.False(t, ok)
}

// TestRealToolchain links a test binary with the real go toolchain through
// linkcache twice: the second comes from the cache, is the same file and
// passes; after an edit the binary is linked again and runs the new code.
func TestRealToolchain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "linkcache")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	mod := filepath.Join(dir, "m")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("m.go", "package m\n\nfunc Answer() int { return 41 }\n")
	write("m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestAnswer(t *testing.T) { t.Log(\"answer\", Answer()) }\n")

	cache := filepath.Join(dir, "cache")
	goTest := func() string {
		cmd := exec.Command(goBin, "test", "-v", "-count=1", "-toolexec", bin, ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GENCODE_LINKCACHE="+cache, "GOFLAGS=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s%s", stdout.String(), stderr.String())
		return stdout.String()
	}
	// A link writes the kept file anew (a new inode); a copy back does
	// not touch it.
	kept := func() ([]byte, os.FileInfo) {
		matches, err := filepath.Glob(filepath.Join(cache, "example.com_m.test", "*"))
		require.NoError(t, err)
		require.Len(t, matches, 1)
		b, err := os.ReadFile(matches[0])
		require.NoError(t, err)
		fi, err := os.Stat(matches[0])
		require.NoError(t, err)
		return b, fi
	}

	require.Contains(t, goTest(), "answer 41")
	first, firstInfo := kept()
	require.Contains(t, goTest(), "answer 41")
	again, againInfo := kept()
	require.True(t, os.SameFile(firstInfo, againInfo), "not linked again")
	require.Equal(t, first, again)

	write("m.go", "package m\n\nfunc Answer() int { return 42 }\n")
	require.Contains(t, goTest(), "answer 42", "an edit is linked again")
	edited, editedInfo := kept()
	require.False(t, os.SameFile(firstInfo, editedInfo))
	require.NotEqual(t, first, edited)
}
