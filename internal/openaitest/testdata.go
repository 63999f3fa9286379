package openaitest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FindSharedTestdata returns the path of the project's shared test data
// directory (shared/testdata, which holds openai/streams, openai/errors,
// sessions and tokens), or "" when there is none. The GENCODE_TESTDATA
// environment variable names it explicitly (an error when it is not a
// directory); otherwise it is searched as <dir>/shared/testdata for the
// working directory and each of its parents, which finds both a shared/
// beside the repository and one inside it.
func FindSharedTestdata() (string, error) {
	if dir := os.Getenv("GENCODE_TESTDATA"); dir != "" {
		if isDir(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("GENCODE_TESTDATA=%s is not a directory", dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("shared testdata: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if cand := filepath.Join(dir, "shared", "testdata"); isDir(cand) {
			return cand, nil
		}
		if filepath.Dir(dir) == dir {
			return "", nil
		}
	}
}

// SharedTestdata is FindSharedTestdata for a test that needs the data: it
// is skipped (not failed, not passed) when there is none, and fails when
// GENCODE_TESTDATA names something that is not a directory.
func SharedTestdata(t testing.TB) string {
	t.Helper()
	dir, err := FindSharedTestdata()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		wd, _ := os.Getwd()
		t.Skipf("no shared/testdata in %s or any parent (set GENCODE_TESTDATA to its path)", wd)
	}
	return dir
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
