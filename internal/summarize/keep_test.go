package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/view"
	"github.com/stretchr/testify/require"
)

// TestFallbackKeepsTheFactsInItsBudget: the summarizer fails; the
// deterministic summary of 40 turns, each stating one short fact among
// longer requests, shows all 40 in a 6,000-token window's budget.
func TestFallbackKeepsTheFactsInItsBudget(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	for i := 1; i <= 40; i++ {
		l.turn(fmt.Sprintf("Turn %d. Please review the parser without breaking the plugins and explain %s. FACT%02d: the staging port is %d.",
			i, strings.Repeat("the nested blocks ", 20), i, 7400+i),
			bashCall(fmt.Sprintf("go test ./p%d", i), "ok", 0))
	}
	failing := &fakeLLM{answer: func(Request) (Completion, error) { return Completion{}, errors.New("500 server error") }}
	cfg := testConfig(6000)
	cfg.PreserveRecent = 2
	s := newSummarizer(store, failing, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.True(t, rep.Fallback)
	text := view.RenderSummary(*rep.Summary)
	for i := 1; i <= 39; i++ {
		require.Contains(t, text, fmt.Sprintf("FACT%02d: the staging port is %d.", i, 7400+i))
	}
	require.Less(t, rep.Summary.TokenCount, 900, "within the block's budget")
}
