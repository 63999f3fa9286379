package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/hooks"
	"github.com/gencode/gencode/internal/session"
)

// sessionsByID is a store that knows each session's message count.
type sessionsByID map[string]int

func (s sessionsByID) Session(_ context.Context, id string) (session.Session, error) {
	return session.Session{ID: id, MessageCount: s[id]}, nil
}

// TestSessionStartSource: a session's first turn of the run is
// "startup" (the run's first, new session), "resume" (one with
// messages), or "clear" (a new one after another); later turns run no
// SessionStart.
func TestSessionStartSource(t *testing.T) {
	t.Parallel()
	hs, _ := hooks.Load(map[string][]config.HookConfig{"SessionStart": {{Command: "true"}}}, "config.toml", hooks.Files{})
	h := &hookedAgent{hooks: hooks.New(hooks.Options{Hooks: hs}), store: sessionsByID{"old": 12},
		state: &hookedState{started: map[string]bool{}}}
	steps := []struct{ session, want string }{
		{"new1", "startup"},
		{"new1", ""},
		{"new2", "clear"},
		{"old", "resume"},
		{"old", ""},
	}
	for _, s := range steps {
		require.Equal(t, s.want, h.sessionStart(context.Background(), s.session), "sessionStart(%q)", s.session)
	}
}
