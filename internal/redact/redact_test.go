package redact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// secretCase is one secret shape Redact must catch, in the context it is
// usually met in; secret is the part that must vanish, tag the kind it
// must be labeled with (when the test cares).
type secretCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Secret string `json:"secret"`
	Tag    string `json:"tag"`
}

// corpus reads testdata/secrets.json: the secrets and the ordinary code
// and text (hashes, ids, code that names passwords or tokens) that Redact
// must leave exactly as they are. The CLI's end-to-end test reads it too.
func corpus(t testing.TB) (secrets []secretCase, notSecrets []string) {
	t.Helper()
	b, err := os.ReadFile("testdata/secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Secrets    []secretCase `json:"secrets"`
		NotSecrets []string     `json:"not_secrets"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Secrets, c.NotSecrets
}

func TestRedactCorpus(t *testing.T) {
	t.Parallel()
	secrets, _ := corpus(t)
	if len(secrets) < 20 {
		t.Fatalf("corpus has %d shapes, want at least 20", len(secrets))
	}
	for _, tt := range secrets {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, n := Redact(tt.Text)
			if strings.Contains(got, tt.Secret) || n == 0 {
				t.Fatalf("Redact(%q) = %q (%d), still holds %q", tt.Text, got, n, tt.Secret)
			}
			if tt.Tag != "" && !strings.Contains(got, "[REDACTED:"+tt.Tag+"]") {
				t.Errorf("Redact(%q) = %q, want a [REDACTED:%s] tag", tt.Text, got, tt.Tag)
			}
			again, n2 := Redact(got)
			if again != got || n2 != 0 {
				t.Errorf("Redact is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	_, notSecrets := corpus(t)
	if len(notSecrets) < 20 {
		t.Fatalf("the not-to-redact list has %d entries, want at least 20", len(notSecrets))
	}
	for _, text := range notSecrets {
		if got, n := Redact(text); got != text || n != 0 {
			t.Errorf("Redact(%q) = %q (%d), want it unchanged", text, got, n)
		}
	}
}

func TestRedactKeepsSurroundingText(t *testing.T) {
	t.Parallel()
	in := "connect with postgres://app:Tr0ub4dor-and-3@db:5432/prod then run make"
	got, _ := Redact(in)
	want := "connect with postgres://app:[REDACTED:url-password]@db:5432/prod then run make"
	if got != want {
		t.Errorf("Redact(%q) = %q, want %q", in, got, want)
	}
}

// mixedText is size bytes of what a session range holds: this package's
// hand-written Go source (code full of words like key, token and secret), the corpus's
// secrets and ordinary lines, and JSON lines as long as a tool output
// with escaped newlines. It is the same text for a given size.
func mixedText(b testing.TB, size int) string {
	b.Helper()
	secrets, notSecrets := corpus(b)
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		b.Fatalf("glob *.go: %v", err)
	}
	sort.Strings(files)
	var code []string
	for _, f := range files {
		if f == "gitleaks_rules.go" {
			continue // generated: a page of regexps is no session's text
		}
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		code = append(code, strings.Split(string(src), "\n")...)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		// Blocks of 40 lines from all over the code, so that 100 KB
		// and 1 MB hold the same mix.
		from := (i * 7919) % len(code)
		for j := 0; j < 40; j++ {
			sb.WriteString(code[(from+j)%len(code)] + "\n")
		}
		sb.WriteString(notSecrets[i%len(notSecrets)] + "\n")
		sb.WriteString("I ran it again with " + secrets[i%len(secrets)].Text + " and it worked.\n")
		if i%10 == 0 {
			long, _ := json.Marshal(map[string]string{"output": strings.Join(code[(i*7)%(len(code)-200):][:200], "\n")})
			sb.Write(long)
			sb.WriteString("\n")
		}
	}
	return sb.String()[:size]
}

// BenchmarkRedact measures Redact on 100 KB and 1 MB of mixed text: the
// time per byte should not grow with the size (ns/op at 1 MB over ns/op at
// 100 KB near 10). On a shared machine wall time follows the neighbours'
// load, so it also reports the process's CPU time per op (cpu-ns/op).
// 1KB is a message of a long log (the compaction redacts each as it reads
// it): there what Redact costs per text, not per byte, shows.
func BenchmarkRedact(b *testing.B) {
	for _, size := range []int{1 << 10, 100 << 10, 1 << 20} {
		text := mixedText(b, size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			Redact("warm up: compile the rules") // not part of the cost per byte
			b.SetBytes(int64(len(text)))
			start := cpuTime()
			for b.Loop() {
				Redact(text)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestRedactRealSessions runs Redact over the shared recordings of real
// sessions (about 1.9 MB of code, tool output and prose, JSON-escaped):
// the one secret they hold, a Phoenix secret_key_base, is redacted and
// nothing else is touched.
func TestRedactRealSessions(t *testing.T) {
	t.Parallel()
	dir := openaitest.SharedTestdata(t)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	want := map[string]string{
		"03_claudecode_spotter_explore-agent-afc096d.openai.jsonl": `secret_key_base: \"[REDACTED:secret]\"`,
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		got, n := Redact(string(b))
		name := filepath.Base(f)
		if w, ok := want[name]; ok {
			require.Equal(t, 1, n, name)
			require.Contains(t, got, w, name)
			continue
		}
		if n != 0 {
			i := strings.Index(got, redactedPrefix)
			t.Errorf("%s: %d redactions in ordinary text, first: %q", name, n, got[max(0, i-80):min(len(got), i+40)])
		}
	}
}

// TestRedactAppliesEveryGeneratedRule: every rule generated from gitleaks'
// config is applied (none dropped on the way), beside the local ones.
func TestRedactAppliesEveryGeneratedRule(t *testing.T) {
	t.Parallel()
	kinds := map[string]bool{}
	for _, r := range compiledRules().rules {
		kinds[r.kind] = true
	}
	for _, g := range gitleaksRules() {
		require.True(t, kinds[g.id], "gitleaks rule %s is not applied", g.id)
	}
	n := ruleCounts()
	require.Equal(t, len(gitleaksRules()), n[tierGitleaks]+n[tierGeneric])
	t.Logf("rules: %d local vendor (PEM included), %d from gitleaks %s (%d skipped: %q), %d heuristics",
		n[tierVendor], n[tierGitleaks]+n[tierGeneric], gitleaksVersion, len(gitleaksSkipped()), gitleaksSkipped(), n[tierHeuristic])
}

// TestEveryRuleCompiles: the rules' expressions compile on first use (see
// lazyRegexp); a bad one would panic only when a text first reaches it.
// Compile every one here.
func TestEveryRuleCompiles(t *testing.T) {
	t.Parallel()
	n := 0
	compile := func(l *lazyRegexp) {
		if l != nil {
			require.NotPanics(t, func() { l.get() })
			n++
		}
	}
	for _, r := range compiledRules().rules {
		compile(r.re)
		compile(r.startRe)
		compile(r.names)
	}
	global := compileAllow(gitleaksGlobalAllow())
	allows := []compiledAllow{global}
	for _, g := range gitleaksRules() {
		for _, a := range g.allow {
			allows = append(allows, compileAllow(a))
		}
	}
	for _, a := range allows {
		for _, re := range a.regexes {
			compile(re)
		}
	}
	t.Logf("%d expressions", n)
	require.Greater(t, n, 300)
}

// BenchmarkFirstRedact measures what the first Redact of a process costs:
// building the rules and redacting one log line (gencode's start record),
// which every process that logs pays once.
//
//	go test ./internal/redact -run '^$' -bench FirstRedact
func BenchmarkFirstRedact(b *testing.B) {
	line := `time=2026-12-01T23:46:37Z level=INFO msg=start pid=4242 command=gencode cwd=/home/user/src/project data_dir=/home/user/.local/share/gencode model=gpt-4o-mini`
	start := cpuTime()
	for b.Loop() {
		got, n := buildRules().redact(line)
		if n != 0 || got != line {
			b.Fatalf("redact(%q) = %q, %d: want it unchanged", line, got, n)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
