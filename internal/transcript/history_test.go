package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/transcript"
)

// TestHistoryJSONStreamsTheOneObject: the streamed `history --json` is
// byte for byte the indented encoding of the whole object at once (what
// it was before it streamed), empty lists included.
func TestHistoryJSONStreamsTheOneObject(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	exit := 1
	msgs := []session.Message{
		{Seq: 1, Role: session.RoleUser, Content: "fix <b> & go", Tokens: 5, Time: at},
		{Seq: 2, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "c", Name: "Bash", Arguments: `{"command":"make"}`}}, Tokens: 9, Time: at},
		{Seq: 3, Role: session.RoleTool, ToolCallID: "c", Name: "Bash", Content: "cut", Full: "the whole output", Tokens: 3, Time: at,
			Meta: session.Meta{Tool: "Bash", Command: "make", ExitCode: &exit, Changes: &session.FileChanges{Observed: true, Modified: []string{"a.go"}}}},
	}
	sess := session.Session{ID: "abc", Created: at, Updated: at, Cwd: "/w", Model: "m", Title: "t", MessageCount: 3, LastSeq: 3}
	facts := transcript.FactsOf(session.Summary{FilesModified: []string{"a.go"}, CommandRuns: 1, Commands: []string{"make"}})
	sums := []session.Summary{{ID: "s1", SessionID: "abc", FromSeq: 1, ToSeq: 2, Content: "## Goal\n- x", GeneratedAt: at}}

	for _, tc := range []struct {
		name string
		msgs []session.Message
		sums []session.Summary
	}{{"messages and a summary", msgs, sums}, {"nothing", nil, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			require.NoError(t, transcript.WriteHistoryJSON(&got, transcript.History{Session: sess, Facts: facts, Summaries: tc.sums}, slicesSeq2(tc.msgs)))

			want := struct {
				Session   any                  `json:"session"`
				Messages  []transcript.Message `json:"messages"`
				Summaries []session.Summary    `json:"summaries"`
				Facts     transcript.Facts     `json:"session_facts"`
			}{
				Session: map[string]any{"id": sess.ID, "created": sess.Created, "updated": sess.Updated, "cwd": sess.Cwd,
					"model": sess.Model, "title": sess.Title, "message_count": sess.MessageCount},
				Facts: facts, Messages: []transcript.Message{}, Summaries: tc.sums,
			}
			if want.Summaries == nil {
				want.Summaries = []session.Summary{}
			}
			for _, m := range tc.msgs {
				want.Messages = append(want.Messages, transcript.LogMessage(m))
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			require.NoError(t, enc.Encode(want))
			require.Equal(t, buf.String(), got.String())
		})
	}
}

// TestHistoryJSONStopsAtAReadError: a log that cannot be read is an
// error, not a truncated object presented as whole.
func TestHistoryJSONStopsAtAReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	msgs := func(yield func(session.Message, error) bool) {
		if yield(session.Message{Seq: 1, Role: session.RoleUser, Content: "a"}, nil) {
			yield(session.Message{}, boom)
		}
	}
	var out bytes.Buffer
	err := transcript.WriteHistoryJSON(&out, transcript.History{}, msgs)
	require.ErrorIs(t, err, boom)
}
