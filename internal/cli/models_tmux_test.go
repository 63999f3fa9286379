package cli_test

import (
	"testing"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestModelSwitchAppliesItsTableInTmux: /model NAME in the real binary on
// a real terminal applies that model's table: its window in the switch
// notice, its fields in the next request (and no reasoning_effort for a
// model that does not take it).
func TestModelSwitchAppliesItsTableInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels("gpt-4o-mini", "qwen3:8b"))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(modelTables)

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("/model qwen3:8b")
	p.waitText("Switched to qwen3:8b (context window 32,768 tokens)")
	srv.Enqueue(openaitest.Text("switched answer"))
	p.typeLine("hello")
	p.waitText("switched answer")
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Model != "qwen3:8b" {
		t.Fatalf("the request went to %q, want qwen3:8b", last.Model)
	}
	requireFields(t, last, map[string]string{
		"max_tokens": "1024", "reasoning_effort": "", "top_k": "20",
		"options": `{"num_ctx":32768,"stop":["<|im_end|>"]}`, "chat_template_kwargs": `{"enable_thinking":false}`,
	})
	p.keys("C-c")
	p.keys("C-c")
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
