package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestThirtyTurnsThenSummarize: after a scripted 30-turn print-mode
// session with writes and commands, `gencode summarize` on a terminal
// prints a boxed report naming the written files and the commands;
// `history --full` shows the summary with its range; `history --json`
// lists every message of the log.
func TestThirtyTurnsThenSummarize(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatalf("script (util-linux) gives the test a terminal: %v", err)
	}
	// The main model writes a file and runs a command each turn, then
	// answers; the summarizer model answers with a narrative.
	turn := 0
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		if r.Model == summaryModel {
			return summarize(r)
		}
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" {
			turn++
			return openaitest.Calls(
				openaitest.ToolCall{Name: "Write", Arguments: fmt.Sprintf(`{"file_path":"notes/n%02d.md","content":"note %d\n"}`, turn, turn)},
				openaitest.ToolCall{Name: "Bash", Arguments: fmt.Sprintf(`{"command":"wc -c notes/n%02d.md"}`, turn)},
			)
		}
		return openaitest.Text(fmt.Sprintf("Turn %d done.", turn))
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	// Its subject is the report: no sandbox helper (a gencode started again per
	// Bash call) and no checkpoints, which have their own tests (sandbox_e2e,
	// rewind_e2e).
	sb.writeConfig("[sandbox]\nenabled = false\n[rewind]\nenabled = false\n")
	for i := 1; i <= 30; i++ {
		args := []string{"-p", fmt.Sprintf("write note %d and count its bytes", i), "--allow", "Write,Bash", "--no-summarize"}
		if i > 1 {
			args = append([]string{"-c"}, args...)
		}
		res := sb.run(args...)
		require.Equal(t, 0, res.code, "turn %d: %s", i, res.stderr)
		require.Equal(t, fmt.Sprintf("Turn %d done.\n", i), res.stdout)
	}

	// On a terminal the report is boxed.
	var env []string
	for k, v := range sb.env {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command("script", "-q", "-e", "-c", shellQuote(binary)+" summarize", "/dev/null")
	cmd.Dir, cmd.Env = sb.work, append(env, "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "\x1b[", "coloured on a terminal")
	report := ansi.Strip(string(out))
	require.Contains(t, report, "╭─ Session Summary")
	require.Contains(t, report, "╰")
	// Files and commands of the summarized range are all listed; the
	// whole-session facts count every one of them.
	for i := 1; i <= 20; i++ {
		require.Contains(t, report, fmt.Sprintf("notes/n%02d.md", i))
		require.Contains(t, report, fmt.Sprintf("wc -c notes/n%02d.md", i))
	}
	require.Contains(t, report, "30 files modified, 30 shell commands run (30 distinct)")

	res := sb.run("history", "--full")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `\[Summary 1\] Messages 1-\d+ · `, res.stdout)
	require.Contains(t, res.stdout, "Files modified: notes/n01.md")

	res = sb.run("history", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var h historyJSON
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
	require.Len(t, h.Messages, 30*5, "user, assistant with two calls, two results... every message")
	require.Len(t, h.Summaries, 1)
	data, err := os.ReadFile(filepath.Join(sb.work, "notes", "n30.md"))
	require.NoError(t, err)
	require.Equal(t, "note 30\n", string(data))
	require.True(t, strings.HasPrefix(h.Messages[0].Content, "write note 1"))
}
