package tui

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// viewFailingStore is a real store whose LoadView fails.
type viewFailingStore struct{ *session.Store }

var errDiskGone = errors.New("disk I/O error")

func (viewFailingStore) LoadView(context.Context, string) (session.View, error) {
	return session.View{}, errDiskGone
}

// syncBuffer is a bytes.Buffer a logger may write from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestContextEstimateFailureIsLogged: the context estimate loads in the
// background when a session opens; when it fails the user sees the
// session all the same, and the log says why the estimate is missing,
// with the session's id.
func TestContextEstimateFailureIsLogged(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "t", session.Message{Role: session.RoleUser, Content: "hello there"})
	var buf syncBuffer
	h := newHarness(t, 80, 20, withSession(id), withStore(viewFailingStore{st}), func(o *harnessSetup) {
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	})
	h.untilModel("the failed estimate", func(Model) bool { return buf.String() != "" })
	require.Contains(t, h.view(), "hello there")
	require.Contains(t, buf.String(), `level=WARN msg="estimate the context" session=`+id+` err="disk I/O error"`)
}
