package cli

import (
	"sync"

	"github.com/gencode/gencode/internal/agent"
)

// modelSet holds the TUI's agent and summarizer, for one model at a time.
// /model builds the next model's pair, then closes the summarizer of the
// old one (its background compactions canceled and waited for) before the
// next is handed out: two summarizers never work on one session, and none
// is left running until exit.
type modelSet struct {
	build func(model string) (*agent.Agent, summarizer, error)

	mu  sync.Mutex
	sum summarizer // the current model's; nil when summarization is off
}

// use makes model's agent and summarizer the current ones. When they
// cannot be built the current ones stay, and the error says why.
func (s *modelSet) use(model string) (*agent.Agent, summarizer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ag, sum, err := s.build(model)
	if err != nil {
		return nil, nil, err
	}
	if s.sum != nil {
		s.sum.Close()
	}
	s.sum = sum
	return ag, sum, nil
}

// close closes the current summarizer.
func (s *modelSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sum != nil {
		s.sum.Close()
		s.sum = nil
	}
}
