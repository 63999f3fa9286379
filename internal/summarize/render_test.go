package summarize

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gencode/gencode/internal/view"
	"github.com/stretchr/testify/require"
)

// encCounter is a tokenizer that names its encoding and whether its
// vocabulary loaded (Err), as tokens.Counter does.
type encCounter struct {
	charCounter
	err error
}

func (encCounter) Encoding() string { return "o200k_base" }

func (c encCounter) Err() error { return c.err }

// TestTokenKeyOnlyForExactCounts: a summary keeps what its count counted
// (TokenKey) when the tokenizer is exact; a count estimated because the
// vocabulary did not load is not one a later run may reuse.
func TestTokenKeyOnlyForExactCounts(t *testing.T) {
	t.Parallel()
	for _, loadErr := range []error{nil, errors.New("load encoding o200k_base: broken")} {
		store := openStore(t)
		l := newLog(t, store)
		for i := range 12 {
			l.turn(fmt.Sprintf("request %d", i), bashCall("ls", "a\nb", 0))
		}
		llm := &fakeLLM{answer: func(r Request) (Completion, error) { return Completion{Text: echoSummary(r)}, nil }}
		s := newSummarizer(store, llm, encCounter{err: loadErr}, testConfig(16000))
		rep, err := s.SummarizeNow(context.Background(), l.id, "")
		s.Close()
		require.NoError(t, err)
		require.NotNil(t, rep.Summary)
		if loadErr != nil {
			require.Empty(t, rep.Summary.TokenKey, "an estimate is not reused")
			continue
		}
		require.Equal(t, view.TokenKey("o200k_base", view.RenderSummary(*rep.Summary)), rep.Summary.TokenKey)
	}
}
