package facts

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// syntheticLog is n messages of turns that each give a constraint, make a
// decision, write a file and run a command, all distinct: every list of a
// summary grows with the log.
func syntheticLog(n int) []session.Message {
	out := make([]session.Message, 0, n)
	for i := 0; len(out) < n; i++ {
		path := fmt.Sprintf("/w/pkg%d/file%d.go", i%97, i)
		cmd := fmt.Sprintf("go test ./pkg%d/... -run Test%d", i%97, i)
		wargs, _ := json.Marshal(map[string]string{"file_path": path, "content": "package x"})
		bargs, _ := json.Marshal(map[string]string{"command": cmd})
		exit := 0
		out = append(out,
			session.Message{Seq: int64(len(out) + 1), Role: session.RoleUser, Content: fmt.Sprintf("Step %d: add the handler. Always run the tests of step %d first.", i, i)},
			session.Message{Seq: int64(len(out) + 2), Role: session.RoleAssistant, Content: fmt.Sprintf("I decided to use store %d for it.", i),
				ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("w%d", i), Name: "Write", Arguments: string(wargs)}, {ID: fmt.Sprintf("b%d", i), Name: "Bash", Arguments: string(bargs)}}},
			session.Message{Seq: int64(len(out) + 3), Role: session.RoleTool, ToolCallID: fmt.Sprintf("w%d", i), Name: "Write", Content: "wrote " + path,
				Meta: session.Meta{Tool: "Write", FilePath: path}},
			session.Message{Seq: int64(len(out) + 4), Role: session.RoleTool, ToolCallID: fmt.Sprintf("b%d", i), Name: "Bash", Content: "ok",
				Meta: session.Meta{Tool: "Bash", Command: cmd, ExitCode: &exit}},
		)
	}
	return out[:n]
}

// medianOf times f in rounds and returns the median round.
func medianOf(rounds int, f func()) time.Duration {
	var ds []time.Duration
	for range rounds {
		start := time.Now()
		f()
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkExtractLinear is issue 11's "extraction linear up to 100k
// messages" as a ratio within one run: extracting the facts of 100,000
// messages over 10,000. Linear is about 10 (more where the larger maps
// leave the CPU caches); before each constraint and keyword decision
// rebuilt a lookup map of all the earlier ones: 81 (86 s for 100,000
// messages). Union-100k-ms is the merge of ten summaries of 10,000
// messages each.
func BenchmarkExtractLinear(b *testing.B) {
	for b.Loop() {
		small := syntheticLog(10_000)
		ts := medianOf(5, func() { Extract(small, true) })
		small = nil
		large := syntheticLog(100_000)
		tl := medianOf(3, func() { Extract(large, true) })
		var sums []session.Summary
		for i := 0; i < 10; i++ {
			sums = append(sums, Extract(large[i*10_000:(i+1)*10_000], true))
		}
		ul := medianOf(3, func() { Union(sums) })
		b.ReportMetric(float64(tl)/float64(ts), "Extract-100k/10k")
		b.ReportMetric(float64(tl.Milliseconds()), "Extract-100k-ms")
		b.ReportMetric(float64(ul.Milliseconds()), "Union-100k-ms")
	}
}

// TestUserRequestsAreBounded: a summary keeps the most recent
// maxUserRequests user-request lines, whatever the range's length and
// however many summaries merge, so that what every turn decodes stops
// growing with the session; the last request stays, and the files and
// commands are all kept.
func TestUserRequestsAreBounded(t *testing.T) {
	t.Parallel()
	var msgs []session.Message
	for i := range 3 * maxUserRequests {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("request %d", i)},
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Write", Arguments: fmt.Sprintf(`{"file_path":"f%d.txt","content":"x"}`, i)}}},
			session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Write", Content: "ok"})
	}
	half := len(msgs) / 2
	a, b := Extract(msgs[:half], false), Extract(msgs[half:], false)
	whole := Extract(msgs, false)
	for _, s := range []session.Summary{a, b, whole, Union([]session.Summary{a, b})} {
		require.Len(t, s.UserRequests, maxUserRequests)
		require.Equal(t, s.LastUserRequest, s.UserRequests[len(s.UserRequests)-1])
	}
	require.Equal(t, fmt.Sprintf("request %d", 3*maxUserRequests-1), whole.UserRequests[maxUserRequests-1])
	require.Len(t, whole.FilesModified, 3*maxUserRequests, "every file is kept")
	require.Len(t, Union([]session.Summary{a, b}).FilesModified, 3*maxUserRequests)
}

// TestCommandsAreBounded: a summary keeps the latest maxCommands distinct
// commands, also when two summaries merge, and counts every run.
func TestCommandsAreBounded(t *testing.T) {
	t.Parallel()
	var msgs []session.Message
	n := 3 * maxCommands
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("request %d", i)},
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: fmt.Sprintf(`{"command":"wc -l notes/turn%d.md"}`, i)}}},
			session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: "1 notes\n[exit code 0]"})
	}
	half := len(msgs) / 2
	a, b := Extract(msgs[:half], false), Extract(msgs[half:], false)
	for _, s := range []session.Summary{a, b, Extract(msgs, false), Union([]session.Summary{a, b})} {
		require.Len(t, s.Commands, maxCommands)
	}
	for _, s := range []session.Summary{Extract(msgs, false), Union([]session.Summary{a, b})} {
		require.Equal(t, fmt.Sprintf("wc -l notes/turn%d.md", n-1), s.Commands[maxCommands-1], "the latest is kept")
		require.Equal(t, fmt.Sprintf("wc -l notes/turn%d.md", n-maxCommands), s.Commands[0])
	}
	whole := Extract(msgs, false)
	require.Equal(t, n, whole.CommandRuns)
	require.Equal(t, n, Union([]session.Summary{a, b}).CommandRuns)
}
