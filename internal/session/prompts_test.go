package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// promptsByScan is Prompts as it was before messages_sent: one query over
// every message of the project's recent sessions. It is the reference the
// indexed Prompts must agree with.
func promptsByScan(ctx context.Context, s *Store, cwd string, n int) ([]Message, error) {
	return s.queryMessages(ctx, `SELECT `+messageCols+` FROM (
		SELECT m.id AS id, m.seq AS seq, m.role AS role, m.content AS content, NULL AS full_content,
			NULL AS tool_calls, m.tool_call_id AS tool_call_id, m.name AS name, m.tokens AS tokens,
			m.created_at AS created_at, m.meta AS meta, NULL AS mask_tokens
		FROM messages m
		WHERE m.role = 'user' AND m.session_id IN (
			SELECT id FROM sessions WHERE cwd = ? ORDER BY updated_at DESC LIMIT ?)
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?)
		ORDER BY created_at, id`, cwd, promptSessions, n)
}

// TestPromptsAreTheScans: Up walks the same messages, in the same order,
// as when every message of the project's sessions was read: sessions
// written in turns (their messages interleave in time), many messages in
// one Append (the same time: the insertion order decides), more sessions
// than are read, and more messages in one session than are asked for.
func TestPromptsAreTheScans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st, err := Open(ctx, t.TempDir(), WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	require.NoError(t, err)
	defer st.Close()
	r := rand.New(rand.NewPCG(7, 7))
	var ids []string
	for i := range promptSessions + 10 {
		cwd := "/proj"
		if i%7 == 3 {
			cwd = "/other"
		}
		s, err := st.CreateSession(ctx, cwd, "m")
		require.NoError(t, err)
		ids = append(ids, s.ID)
	}
	for i := range 600 {
		var msgs []Message
		for j := range 1 + r.IntN(4) {
			role := []Role{RoleUser, RoleAssistant}[r.IntN(2)]
			msgs = append(msgs, Message{Role: role, Content: fmt.Sprintf("m%d.%d", i, j)})
		}
		_, err := st.Append(ctx, ids[r.IntN(len(ids))], msgs...)
		require.NoError(t, err)
	}
	for _, cwd := range []string{"/proj", "/other", "/none"} {
		for _, n := range []int{1, 7, 200, 5000} {
			want, err := promptsByScan(ctx, st, cwd, n)
			require.NoError(t, err)
			got, err := st.Prompts(ctx, cwd, n, 0)
			require.NoError(t, err)
			require.Equal(t, contents(want), contents(got), "Prompts(%q, %d)", cwd, n)
		}
	}
}

func contents(msgs []Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// TestPromptsReadTheIndex: each session's part is read from the index of
// messages sent, not by visiting every message of the session.
func TestPromptsReadTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer st.Close()
	rows, err := st.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT id, created_at FROM messages
		WHERE session_id = 'x' AND role = 'user' ORDER BY created_at DESC, id DESC LIMIT 200`)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"SEARCH messages USING COVERING INDEX messages_sent (session_id=?)"}, plan,
		"plan: %s", strings.Join(plan, "; "))
}
