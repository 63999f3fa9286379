package llm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/llm"
)

// sleeper records the waits the client asks for without waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeper) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newClient returns a client for baseURL whose retries do not really wait.
func newClient(t *testing.T, baseURL string, edit ...func(*llm.Config)) (*llm.Client, *sleeper) {
	t.Helper()
	s := &sleeper{}
	cfg := llm.Config{BaseURL: baseURL, APIKey: "sk-test", Sleep: s.sleep}
	for _, e := range edit {
		e(&cfg)
	}
	return llm.New(cfg), s
}

func userMsg(s string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: s}}
}
