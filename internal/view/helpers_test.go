package view

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// charCounter counts a token per 4 bytes: cheap and close enough for the
// policy tests (the CLI's tokenizer is exercised in its own tests).
type charCounter struct{}

func (charCounter) Count(s string) int { return (len(s) + 3) / 4 }

func openStore(t testing.TB) *session.Store {
	t.Helper()
	return sessiontest.Open(t, session.WithClassifier(Classify))
}

// logBuilder appends messages to a session.
type logBuilder struct {
	t     testing.TB
	store *session.Store
	id    string
}

func newLog(t testing.TB, store *session.Store) *logBuilder {
	t.Helper()
	sess, err := store.CreateSession(context.Background(), "/w", "gpt-4o-mini")
	require.NoError(t, err)
	return &logBuilder{t: t, store: store, id: sess.ID}
}

func (l *logBuilder) add(msgs ...session.Message) []session.Message {
	l.t.Helper()
	for i := range msgs {
		if msgs[i].Tokens == 0 {
			msgs[i].Tokens = charCounter{}.Count(msgs[i].Content) + 4
			for _, c := range msgs[i].ToolCalls {
				msgs[i].Tokens += charCounter{}.Count(c.Arguments) + 4
			}
		}
	}
	out, err := l.store.Append(context.Background(), l.id, msgs...)
	require.NoError(l.t, err)
	return out
}
