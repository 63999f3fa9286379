package openaitest

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedTestdata returns the path of the project's shared test data directory
// (shared/testdata, which holds openai/streams, openai/errors, sessions and
// tokens). The GENCODE_TESTDATA environment variable names it explicitly;
// otherwise it is searched as <dir>/shared/testdata for the working directory
// and each of its parents, which finds both a shared/ beside the repository
// and one inside it. The test fails when it cannot be found: tests that need
// the recorded data must not pass vacuously.
func SharedTestdata(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("GENCODE_TESTDATA"); dir != "" {
		if isDir(dir) {
			return dir
		}
		t.Fatalf("GENCODE_TESTDATA=%s is not a directory", dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("shared testdata: %v", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if cand := filepath.Join(dir, "shared", "testdata"); isDir(cand) {
			return cand
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	t.Fatalf("shared testdata: no shared/testdata in %s or any parent; set GENCODE_TESTDATA", wd)
	return ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
