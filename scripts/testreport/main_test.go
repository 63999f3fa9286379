package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const stream = `{"Action":"start","Package":"m/p"}
{"Action":"run","Package":"m/p","Test":"TestA"}
{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"m/p","Test":"TestA","Output":"    a_test.go:9: no tmux here\n"}
{"Action":"output","Package":"m/p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"m/p","Test":"TestA"}
{"Action":"output","Package":"m/p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"m/p","Test":"TestB","Output":"--- PASS: TestB (0.00s)\n"}
{"Action":"pass","Package":"m/p","Test":"TestB"}
{"Action":"output","Package":"m/p","Output":"PASS\n"}
{"Action":"output","Package":"m/p","Output":"ok  \tm/p\t0.01s\n"}
{"Action":"pass","Package":"m/p"}
`

func TestSkipsAreListedWithTheirReason(t *testing.T) {
	var out strings.Builder
	code := run(strings.NewReader(stream), &out, "m/", nil, false)
	require.Equal(t, 0, code)
	require.Equal(t, "ok  \tm/p\t0.01s\n\nskipped tests (1):\n  p TestA: a_test.go:9: no tmux here\n", out.String())
}

func TestAnUnexpectedSkipFails(t *testing.T) {
	var out strings.Builder
	code := run(strings.NewReader(stream), &out, "m/", []allowed{{"p", regexp.MustCompile("^TestB$"), "x"}}, true)
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "UNEXPECTED p TestA")
	out.Reset()
	code = run(strings.NewReader(stream), &out, "m/", []allowed{{"p", regexp.MustCompile("^TestA$"), "no tmux"}}, true)
	require.Equal(t, 0, code, out.String())
}

func TestAFailedTestShowsItsOutput(t *testing.T) {
	in := `{"Action":"output","Package":"m/p","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"m/p","Test":"TestC","Output":"    c_test.go:3: want 1, got 2\n"}
{"Action":"output","Package":"m/p","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"m/p","Test":"TestC"}
{"Action":"output","Package":"m/p","Output":"FAIL\tm/p\t0.01s\n"}
{"Action":"fail","Package":"m/p"}
`
	var out strings.Builder
	require.Equal(t, 1, run(strings.NewReader(in), &out, "m/", nil, false))
	require.Contains(t, out.String(), "c_test.go:3: want 1, got 2")
	require.Contains(t, out.String(), "FAIL\tm/p\t0.01s")
}
