package session

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShownReadsNoMoreThanIsDrawn: a read for the screen cuts a long
// answer or request to its first bytes (never inside a character) and
// says so; results, messages with pastes and short messages come whole,
// as Tail and Messages give them.
func TestShownReadsNoMoreThanIsDrawn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer st.Close()
	s, err := st.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	long := strings.Repeat("é", 600) // 1,200 bytes
	_, err = st.Append(ctx, s.ID,
		Message{Role: RoleUser, Content: "a" + long},
		Message{Role: RoleAssistant, Content: long, ToolCalls: []ToolCall{{ID: "c", Name: "Bash", Arguments: `{}`}}},
		Message{Role: RoleTool, ToolCallID: "c", Name: "Bash", Content: long, Full: long + long},
		Message{Role: RoleUser, Content: long, Meta: Meta{Pastes: []Paste{{Start: 0, End: len(long), N: 1}}}},
		Message{Role: RoleAssistant, Content: "short"},
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "d", Name: "Bash", Arguments: `{}`}}}, // no text
		Message{Role: RoleTool, ToolCallID: "d", Name: "Bash"})
	require.NoError(t, err)
	whole, err := st.Tail(ctx, s.ID, 10)
	require.NoError(t, err)
	tail, err := st.TailShown(ctx, s.ID, 10, 100)
	require.NoError(t, err)
	page, err := st.MessagesShown(ctx, s.ID, 1, 0, 100)
	require.NoError(t, err)
	require.Equal(t, tail, page)
	require.Len(t, tail, len(whole))
	for i, m := range tail {
		w := whole[i]
		switch i {
		case 0, 1: // cut: 100 bytes are "a", 49 "é" and half of one (left out); or 50 "é"
			require.True(t, m.Clipped, "message %d", m.Seq)
			require.True(t, strings.HasPrefix(w.Content, m.Content), "message %d", m.Seq)
			require.Len(t, m.Content, []int{99, 100}[i], "message %d: %q", m.Seq, m.Content)
			m.Content, m.Clipped = w.Content, false
		}
		require.Equal(t, w, m, "message %d", m.Seq)
	}
	prompts, err := st.Prompts(ctx, "/w", 10, 100)
	require.NoError(t, err)
	require.Len(t, prompts, 2)
	require.True(t, prompts[0].Clipped)
	require.False(t, prompts[1].Clipped, "a message with pastes comes whole")
	require.Equal(t, long, prompts[1].Content)
}
