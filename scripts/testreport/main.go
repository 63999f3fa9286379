// Command testreport reads `go test -json` on stdin and prints what
// `go test` prints without -v (each package's closing ok/FAIL line, and the
// whole output of a test that failed), then every skipped test with its
// reason. With -allow FILE it fails on a skip the file does not list.
//
//	go test -json ./... 2>&1 | go run ./scripts/testreport -allow .ci/skips
//
// FILE holds one allowed skip a line: a package path relative to the
// module (or "*"), a Go regexp matched against the whole test name, and
// the reason it may skip, e.g.
//
//	internal/session  ^TestCrashHelper$  only runs as the crash test's subprocess
//
// Lines starting with # are comments. The exit status is 1 when a test or
// a package failed, or a skip was not allowed; 2 on a usage error.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type event struct {
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Output     string
}

type key struct{ pkg, test string }

type skip struct {
	pkg, test, reason string
}

type allowed struct {
	pkg    string
	test   *regexp.Regexp
	reason string
}

func main() {
	allowFile := flag.String("allow", "", "fail on a skip this file does not list")
	module := flag.String("module", "github.com/gencode/gencode/", "the import path prefix left out of package names")
	flag.Parse()
	var allow []allowed
	if *allowFile != "" {
		var err error
		if allow, err = readAllow(*allowFile); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
	}
	os.Exit(run(os.Stdin, os.Stdout, *module, allow, *allowFile != ""))
}

func run(in io.Reader, out io.Writer, module string, allow []allowed, check bool) int {
	failed := false
	outputs := map[key][]string{}
	var skips []skip
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(out, string(line)) // not go test's JSON: a build error, a panic
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				if o := e.Output; o != "PASS\n" && !strings.HasPrefix(o, "=== ") {
					fmt.Fprint(out, o) // ok/FAIL/? lines, a package's own output
				}
				continue
			}
			outputs[k] = append(outputs[k], e.Output)
		case "fail":
			if e.Test == "" {
				failed = true
				continue
			}
			for _, o := range outputs[k] {
				fmt.Fprint(out, o)
			}
			delete(outputs, k)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{strings.TrimPrefix(e.Package, module), e.Test, reason(outputs[k])})
			}
			delete(outputs, k)
		case "pass":
			delete(outputs, k)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testreport: reading go test's output:", err)
		failed = true
	}
	sort.Slice(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	unexpected := 0
	if len(skips) > 0 {
		fmt.Fprintf(out, "\nskipped tests (%d):\n", len(skips))
	}
	for _, s := range skips {
		mark := ""
		if check && !isAllowed(allow, s) {
			mark = "UNEXPECTED "
			unexpected++
		}
		fmt.Fprintf(out, "  %s%s %s: %s\n", mark, s.pkg, s.test, s.reason)
	}
	if unexpected > 0 {
		fmt.Fprintf(out, "FAIL: %d unexpected skip(s): fix the test, or list it with its reason in the allow-list\n", unexpected)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// reason is what a skipped test printed, without go test's own lines.
func reason(output []string) string {
	var parts []string
	for _, o := range output {
		t := strings.TrimSpace(o)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func isAllowed(allow []allowed, s skip) bool {
	for _, a := range allow {
		if (a.pkg == "*" || a.pkg == s.pkg) && a.test.MatchString(s.test) {
			return true
		}
	}
	return false
}

func readAllow(path string) ([]allowed, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []allowed
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want: package test-regexp reason", path, i+1)
		}
		re, err := regexp.Compile(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, allowed{f[0], re, strings.Join(f[2:], " ")})
	}
	return out, nil
}
