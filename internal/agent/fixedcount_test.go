package agent

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
)

// textsCounter is the real tokenizer, recording the texts it counts.
type textsCounter struct {
	*tokens.Counter
	mu    sync.Mutex
	texts []string
}

func (c *textsCounter) Count(s string) int {
	c.mu.Lock()
	c.texts = append(c.texts, s)
	c.mu.Unlock()
	return c.Counter.Count(s)
}

func (c *textsCounter) counted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.texts...)
}

// TestFixedTextsCountedOncePerStore: the tool schemas and the system
// prompt every request carries are counted by the first process that
// sends them, not by each (a print-mode run is a process): another agent
// on the same data directory finds their counts in the store; a tool list
// it has not seen is counted.
func TestFixedTextsCountedOncePerStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	opts := Options{Model: "gpt-4o-mini", WorkDir: "/home/user/project"}
	ts := tools.New(tools.Options{WorkDir: t.TempDir()})
	process := func(tr toolRunner) (int, []string) {
		store, err := session.Open(ctx, dir)
		require.NoError(t, err)
		defer store.Close()
		c := &textsCounter{Counter: vocabs.Counter("gpt-4o-mini")}
		a := New(store, nil, tr, c, opts)
		return a.FixedCost(), c.counted()
	}
	first, counted := process(ts)
	require.NotEmpty(t, counted, "the first process counts the schemas and the prompt")
	again, counted := process(ts)
	require.Equal(t, first, again, "FixedCost() from the store")
	require.Empty(t, counted, "a later process counted the fixed texts again")

	other, counted := process(&echoTools{})
	require.NotEmpty(t, counted, "another tool list is counted")
	require.Less(t, other, first)
}
