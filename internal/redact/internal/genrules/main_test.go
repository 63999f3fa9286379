package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedRulesAreCurrent: the committed gitleaks_rules.go is what
// the generator makes of the vendored gitleaks.toml, so an edit of either
// without `go generate ./internal/redact` fails here.
func TestGeneratedRulesAreCurrent(t *testing.T) {
	t.Parallel()
	want, err := generateFromDir(".")
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join("..", "..", "gitleaks_rules.go"))
	require.NoError(t, err)
	if !bytes.Equal(got, want) {
		t.Fatal("internal/redact/gitleaks_rules.go is stale: run go generate ./internal/redact")
	}
	require.Contains(t, string(got), "Copyright (c) 2019 Zachary Rice", "the licence notice is kept")
}

// TestGenerateRefusesAnEditedCopy: the vendored file must be the release
// SOURCE names.
func TestGenerateRefusesAnEditedCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"gitleaks.toml", "LICENSE.gitleaks", "SOURCE"} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		if name == "gitleaks.toml" {
			b = append(b, "\n# edited\n"...)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	_, err := generateFromDir(dir)
	require.ErrorContains(t, err, "update SOURCE")
}

// TestGenerateSkipsWhatCannotApply: rules that RE2 cannot compile or that
// match file names only are listed with the reason, not generated; path
// restrictions and AND allowlists on paths are dropped.
func TestGenerateSkipsWhatCannotApply(t *testing.T) {
	t.Parallel()
	cfg := `
[allowlist]
regexes = ['''^x+$''']
[[rules]]
id = "lookahead"
regex = '''secret(?=[0-9])'''
keywords = ["secret"]
[[rules]]
id = "backref"
regex = '''(a)\1'''
keywords = ["a"]
[[rules]]
id = "file-only"
path = '''\.p12$'''
[[rules]]
id = "kept"
regex = '''\bkept_[a-z0-9]{8}\b'''
path = '''\.yaml$'''
entropy = 2.5
keywords = ["KEPT_"]
[[rules.allowlists]]
condition = "AND"
paths = ['''test''']
regexes = ['''kept_00''']
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''example''']
stopwords = ["dummy"]
`
	out, err := generate([]byte(cfg), []byte("MIT License\nCopyright (c) someone"), "v0.0.1")
	require.NoError(t, err)
	src := string(out)
	for _, want := range []string{
		`"backref: does not compile in Go:`,
		`"file-only: matches file names only`,
		`"lookahead: uses lookaround ((?=), which RE2 lacks"`,
		`id:    "kept"`,
		`gitleaksAllow{target: "line", regexes: []string{` + "`example`" + `}, stopwords: []string{"dummy"}}`,
		"// Copyright (c) someone",
	} {
		require.Contains(t, src, want)
	}
	require.Regexp(t, `keywords: +\[\]string\{"kept_"\}`, src, "keywords in lower case")
	require.Regexp(t, `startKeywords: +\[\]string\{"kept_"\}`, src, "kept_ starts its token after \\b")
	require.Regexp(t, `entropy: +2\.5`, src)
	require.NotContains(t, src, "kept_00", "an AND allowlist that needs a path cannot hold")
	require.Equal(t, 1, strings.Count(src, "id: "), "only one rule generated")
}
