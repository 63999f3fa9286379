package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// TestInstructionsInTmux is the acceptance run of the project
// instructions: the real binary in a terminal, a project with an AGENTS.md
// (and a user-level one) and a window small enough that the session
// compacts. Every request the session makes starts with the same system
// message, byte for byte, holding both files, before and after the
// compactions; /context counts them; /init asks the model to write
// AGENTS.md and the write goes through the permission dialog.
func TestInstructionsInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	const window = 4096
	var answer atomic.Int64
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(window, promptTokens),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
				return summarize(r)
			}
			last := r.Messages[len(r.Messages)-1]
			if last.Role == "user" && strings.HasPrefix(last.Content, "Write an AGENTS.md file") {
				args, _ := json.Marshal(map[string]string{"file_path": "AGENTS.md", "content": "# Project\nRun `go test ./...`.\n"})
				return openaitest.Calls(openaitest.ToolCall{Name: "Write", Arguments: string(args)})
			}
			if last.Role == "tool" {
				return openaitest.Text("AGENTS.md is written.")
			}
			n := answer.Add(1)
			return openaitest.Text(fmt.Sprintf("Answer %d. %s", n, strings.Repeat("Some detail about the code base. ", 40)))
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(fmt.Sprintf("context_window = %d\n", window))
	require.NoError(t, os.Mkdir(filepath.Join(sb.work, ".git"), 0o755))
	const project = "# Rules\nPROJECT-RULE-7: keep every function under forty lines.\n"
	const user = "USER-RULE-3: answer in British English.\n"
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "AGENTS.md"), []byte(project), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sb.home, ".config", "gencode", "AGENTS.md"), []byte(user), 0o600))

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	for i := 1; i <= 8; i++ {
		p.typeLine(fmt.Sprintf("Question %d: tell me about part %d of the code base.", i, i))
		p.waitText(fmt.Sprintf("Answer %d.", i))
	}
	p.waitFor("a compaction", func(s string) bool { return strings.Contains(s, "summarized ") })

	p.typeLine("/context")
	s := p.waitText("of which instructions")
	require.Contains(t, s, "AGENTS.md")

	p.typeLine("/init")
	p.waitText("Allow Write?")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("y")
	p.waitText("AGENTS.md is written.")
	b, err := os.ReadFile(filepath.Join(sb.work, "AGENTS.md"))
	require.NoError(t, err)
	require.Equal(t, "# Project\nRun `go test ./...`.\n", string(b))
	// /cost counts the summarizer's requests apart.
	p.typeLine("/cost")
	s = p.waitText("Session total")
	require.Regexp(t, `summarizer\s+\d+\s+[\d,]+`, s)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	var sys string
	agentReqs, summaryReqs := 0, 0
	for i, r := range srv.Requests() {
		first := r.Messages[0]
		if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
			summaryReqs++
			if !strings.HasPrefix(first.Content, "You are gencode") {
				continue // a summarizer request of its own (a pasted range), not the conversation
			}
		} else {
			agentReqs++
		}
		require.Equal(t, "system", first.Role, "request %d", i+1)
		if sys == "" {
			sys = first.Content
			require.Contains(t, sys, project)
			require.Contains(t, sys, user)
			require.Less(t, strings.Index(sys, user), strings.Index(sys, project), "the user's file comes first")
		}
		require.Equal(t, sys, first.Content, "request %d: the system message changed", i+1)
	}
	require.Positive(t, summaryReqs, "the session never compacted")
	store := sb.openStore()
	defer store.Close()
	ss, err := store.Sessions(context.Background(), 1)
	require.NoError(t, err)
	usage, err := store.UsageBySession(context.Background(), ss[0].ID)
	require.NoError(t, err)
	counted := map[string]int{}
	for _, u := range usage[ss[0].ID] {
		counted[u.Purpose] += u.Requests
	}
	require.Equal(t, map[string]int{session.UsageTurn: agentReqs, session.UsageSummary: summaryReqs}, counted,
		"every request's usage is stored with the session, the summarizer's apart")
	require.Equal(t, 8+2, agentReqs, "one request per question, two for /init")
	last := srv.Requests()[len(srv.Requests())-1]
	require.Equal(t, commands.InitPrompt, lastUser(t, last), "/init sent its instruction")
}
