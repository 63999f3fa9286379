package cli

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/recall"
	"github.com/gencode/gencode/internal/session"
)

func TestRendererHonoursNoColor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want colorprofile.Profile
	}{
		{"forced colour", map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, colorprofile.ANSI256},
		{"NO_COLOR wins", map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, colorprofile.Ascii},
		{"not a terminal", map[string]string{"TERM": "xterm-256color"}, colorprofile.NoTTY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := (&app{env: Env{Stdout: io.Discard, Getenv: func(k string) string { return tt.env[k] }}}).profile()
			if got != tt.want {
				t.Errorf("profile() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRenderReportBoxedOnlyOnAColourTerminal(t *testing.T) {
	t.Parallel()
	rep := &commands.Report{Title: "History", Sections: []commands.Section{{Lines: []string{"#1 messages 1-40"}}}}
	tests := []struct {
		name     string
		terminal bool
		env      map[string]string
		boxed    bool
	}{
		{"terminal", true, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, true},
		{"NO_COLOR", true, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, false},
		{"piped", false, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &app{env: Env{Stdout: io.Discard, Getenv: func(k string) string { return tt.env[k] },
				IsTerminal: func() bool { return tt.terminal }}}
			out := ansi.Strip(a.renderReport(rep))
			if got := strings.Contains(out, "╭─ History"); got != tt.boxed {
				t.Errorf("renderReport boxed = %v, want %v:\n%s", got, tt.boxed, out)
			}
			if !strings.Contains(out, "#1 messages 1-40") {
				t.Errorf("renderReport lost a line:\n%s", out)
			}
		})
	}
}

// TestHistorySearchInLogOrderWithoutTheModelsSearches: /history --search
// and history --search list their hits in the order they were written,
// and leave out the model's own SearchHistory/ReadHistory traffic, which
// only echoes the query.
func TestHistorySearchInLogOrderWithoutTheModelsSearches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := session.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer st.Close()
	sess, err := st.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	_, err = st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "The escrow code for the staging vault is HELIOTROPE-7731. Keep it in mind while we work on the deploy scripts, the logs and the rest of it."},
		session.Message{Role: session.RoleAssistant, Content: "Noted."},
		session.Message{Role: session.RoleUser, Content: "What was the escrow code?"},
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "s1", Name: recall.ToolSearchHistory, Arguments: `{"query":"escrow code"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "s1", Name: recall.ToolSearchHistory, Content: `2 messages match "escrow code": seq 1 escrow code ... seq 3 escrow code`},
		session.Message{Role: session.RoleAssistant, Content: "The escrow code is HELIOTROPE-7731 (escrow, escrow: the staging one)."},
	)
	require.NoError(t, err)
	a := &app{store: st}
	rep, err := commands.History(ctx, st, a.searchFunc(), sess.ID, commands.HistoryOptions{Search: "escrow"})
	require.NoError(t, err)
	out := rep.Plain()
	var seqs []string
	for _, m := range regexp.MustCompile(`(?m)^\s*#(\d+) `).FindAllStringSubmatch(out, -1) {
		seqs = append(seqs, m[1])
	}
	require.Equal(t, []string{"1", "3", "6"}, seqs, "hits in log order, the SearchHistory call and result left out:\n%s", out)
	require.Contains(t, out, "3 matches")
}
