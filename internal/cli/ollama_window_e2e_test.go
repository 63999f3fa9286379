package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// flat is a screen's text with its line breaks and runs of spaces as one
// space: a note wrapped over lines reads as one.
func flat(screen string) string { return strings.Join(strings.Fields(screen), " ") }

// TestOllamaWindowCommandInTmux: on an Ollama that runs the model at 4,096
// of its 32,768, the raise hint offers /ollama-window; the command alone
// says what it would do and creates nothing; typed with TOKENS it creates
// the derived model on the server and switches to it as /model does: the
// status bar shows the new model's larger window, and the next request
// goes to it.
func TestOllamaWindowCommandInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	const base, made = "qwen2.5-coder:7b", "qwen2.5-coder:7b-32k"
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(base),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true}),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			return openaitest.Text("answered by " + r.Model + ".")
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = base
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("hello")
	s := p.waitText("answered by " + base + ".")
	require.Regexp(t, regexp.MustCompile(`ctx [\d.]+k?/4\.1k \d+% \(Ollama\)`), s)
	p.waitFor("the raise hint's third way", func(s string) bool {
		return strings.Contains(flat(s), "or type /ollama-window 32768 and gencode creates "+made)
	})

	p.typeLine("/ollama-window")
	p.waitFor("what the command would do", func(s string) bool {
		return strings.Contains(flat(s), "/ollama-window 32768` would create "+made) ||
			strings.Contains(flat(s), "/ollama-window 32768 would create "+made)
	})
	require.Empty(t, srv.Created(), "nothing is created without TOKENS")

	p.typeLine("/ollama-window 32768")
	s = p.waitFor("the switch", func(s string) bool {
		return strings.Contains(flat(s), "Switched to "+made)
	})
	require.Contains(t, flat(s), "Created "+made+" on the Ollama server")
	require.Equal(t, map[string]int{made: 32768}, srv.Created())

	p.typeLine("hello again")
	p.waitText("answered by " + made + ".")
	reqs := srv.Requests()
	require.Equal(t, made, reqs[len(reqs)-1].Model, "the next request goes to the new model")
	// The status bar: the new model and its window, the server's.
	bar := regexp.MustCompile(regexp.QuoteMeta(made) + `\b.*ctx [\d.]+k?/33k \d+% \(Ollama\)`)
	p.waitFor("the new model and its larger window in the status bar", func(s string) bool { return bar.MatchString(s) })
	require.Contains(t, srv.Loaded(), made)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestOllamaRaiseHintInPrintMode: print mode has no slash commands: its
// raise hint gives the shell commands only.
func TestOllamaRaiseHintInPrintMode(t *testing.T) {
	t.Parallel()
	const base = "qwen2.5-coder:7b"
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(base),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true}))
	srv.Enqueue(openaitest.Text("hi"))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = base
	res := sb.run("-p", "hello")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "ollama create qwen2.5-coder:7b-32k -f Modelfile")
	require.NotContains(t, res.stderr, "/ollama-window")
	require.Empty(t, srv.Created())
}
