package transcript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/transcript"
)

// TestStreamedImportStoresWhatAWholeReadStores: a JSONL file of 4,500
// messages (more than two of import's batches), with what Read repairs
// spread over it (a system message first, calls whose results come late,
// out of order or never, a result that answers no call) and absolute paths
// that make a root, is stored by OpenFile + Import, which read it a line at
// a time, exactly as ReadFormat + Import, which read it whole, store it:
// the same messages, title, changes and source.
func TestStreamedImportStoresWhatAWholeReadStores(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	add := func(v any) {
		line, err := json.Marshal(v)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	add(map[string]any{"role": "system", "content": "You are a helpful agent."})
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < 4500; i++ {
		add(map[string]any{"role": "user", "content": fmt.Sprintf("Turn %d: fix file %d.", i, i)})
		id1, id2 := fmt.Sprintf("c%d_1", i), fmt.Sprintf("c%d_2", i)
		read, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("/src/proj/pkg%d/f.go", i%7)})
		bash, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./pkg%d", i%7)})
		add(map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
			map[string]any{"id": id1, "type": "function", "function": map[string]any{"name": "Read", "arguments": string(read)}},
			map[string]any{"id": id2, "type": "function", "function": map[string]any{"name": "Bash", "arguments": string(bash)}}}})
		switch i % 5 {
		case 0: // out of order
			add(map[string]any{"role": "tool", "tool_call_id": id2, "content": "ok"})
			add(map[string]any{"role": "tool", "tool_call_id": id1, "content": "package p"})
		case 1: // one never answered, a user message before the other
			add(map[string]any{"role": "user", "content": "also check the docs"})
			add(map[string]any{"role": "tool", "tool_call_id": id1, "content": "package p"})
		case 2: // a result for no call
			add(map[string]any{"role": "tool", "tool_call_id": id1, "content": "package p"})
			add(map[string]any{"role": "tool", "tool_call_id": id2, "content": "permission denied: the user declined"})
			add(map[string]any{"role": "tool", "tool_call_id": "nobody", "content": "stray"})
		default:
			add(map[string]any{"role": "tool", "tool_call_id": id1, "content": "package p"})
			add(map[string]any{"role": "tool", "tool_call_id": id2, "content": "ok"})
		}
		add(map[string]any{"role": "assistant", "content": fmt.Sprintf("Done with %d.", i)})
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))

	ctx := context.Background()
	store := sessiontest.Open(t)
	count := func(m session.Message) int { return len(m.Content)/4 + 1 }
	opts := transcript.ImportOptions{Cwd: "/w", Model: "gpt-4o-mini", Count: count}

	msgs, changes, src, err := transcript.ReadFormat(bytes.NewReader(b.Bytes()), "session.jsonl", "")
	require.NoError(t, err)
	whole, err := transcript.Import(ctx, store, msgs, opts)
	require.NoError(t, err)

	file, err := transcript.OpenFile(path, "session.jsonl", "")
	require.NoError(t, err)
	streamed, err := file.Import(ctx, store, opts)
	require.NoError(t, err)

	require.Equal(t, "/src/proj", src.Root, "the test's paths should make a root")
	require.Equal(t, src, file.Source)
	require.Equal(t, changes, file.Changes)
	require.NotEmpty(t, changes)
	require.Equal(t, whole.Title, streamed.Title)
	require.Equal(t, whole.MessageCount, streamed.MessageCount)
	require.Greater(t, whole.MessageCount, 4000)
	a, err := store.Messages(ctx, whole.ID, 1, 0)
	require.NoError(t, err)
	c, err := store.Messages(ctx, streamed.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, c, len(a))
	for i := range a {
		a[i].Time = c[i].Time // stored when imported
		require.Equal(t, a[i], c[i], "message %d", i+1)
	}
}
