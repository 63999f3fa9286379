package commands

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// modelRegistry is a registry whose Models is the real client against
// srv, as gencode wires it.
func modelRegistry(t *testing.T, srv *openaitest.Server, timeout time.Duration) *Registry {
	t.Helper()
	store := sessiontest.Open(t)
	return New(Deps{Store: store, Config: config.Default(), ModelsTimeout: timeout,
		Models: llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1}).Models})
}

// TestModelNameCheckedAgainstTheEndpoint: /model NAME switches to a name
// the endpoint lists; a name it does not list is refused with the listed
// names closest to it; when the endpoint cannot say (an error, no answer,
// gone), the name is taken with one line saying it was not checked, and
// never after more than the timeout.
func TestModelNameCheckedAgainstTheEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := State{Model: "gpt-4o-mini"}
	srv := openaitest.NewServer(t, openaitest.WithModels("gpt-4o", "gpt-4o-mini", "o3-mini", "llama3.2", "qwen2.5-coder:7b"))
	reg := modelRegistry(t, srv, 5*time.Second)

	r, err := reg.Run(ctx, st, "/model qwen2.5-coder:7b")
	require.NoError(t, err)
	require.Equal(t, Result{Action: ActionSetModel, Model: "qwen2.5-coder:7b"}, r, "a listed name switches, nothing said before")

	_, err = reg.Run(ctx, st, "/model gpt-40")
	require.ErrorIs(t, err, ErrUnknownModel)
	require.EqualError(t, err, "unknown model gpt-40: the endpoint does not list it; close matches: gpt-4o (/model lists them all)")
	_, err = reg.Run(ctx, st, "/model qwen2.5-coder")
	require.ErrorContains(t, err, "close matches: qwen2.5-coder:7b")
	_, err = reg.Run(ctx, st, "/model claude-sonnet")
	require.ErrorIs(t, err, ErrUnknownModel)
	require.EqualError(t, err, "unknown model claude-sonnet: the endpoint does not list it (/model lists its 5 models)")

	hang := func(ctx context.Context) bool { <-ctx.Done(); return false }
	gone := openaitest.NewServer(t)
	gone.Close()
	// Only the endpoint that never answers waits for the timeout; the
	// others answer at once and get room for a loaded machine, so that
	// their own reason is what the line says.
	for _, tt := range []struct {
		name, why string
		srv       *openaitest.Server
		timeout   time.Duration
	}{
		{"error", "503", openaitest.NewServer(t, openaitest.WithModelsError(http.StatusServiceUnavailable)), 5 * time.Second},
		{"no answer", "no answer in 300ms", openaitest.NewServer(t, openaitest.WithModelsHook(hang)), 300 * time.Millisecond},
		{"gone", "connect", gone, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := modelRegistry(t, tt.srv, tt.timeout)
			start := time.Now()
			r, err := reg.Run(ctx, st, "/model whatever-7b")
			require.NoError(t, err)
			require.Less(t, time.Since(start), 10*time.Second, "never hangs")
			require.Equal(t, ActionSetModel, r.Action)
			require.Equal(t, "whatever-7b", r.Model)
			require.True(t, strings.HasPrefix(r.Text, "Could not check whatever-7b against the endpoint's models ("), r.Text)
			require.Contains(t, r.Text, tt.why)
			require.NotContains(t, r.Text, "\n", "one line")
		})
	}
}

// TestModelPicker: /model lists the endpoint's models, sorted, with the
// one in use marked and selected (listed first when the endpoint does
// not serve it); each item switches as /model NAME does. When the
// endpoint does not answer, the configured models are listed, and one
// line says why.
func TestModelPicker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	titles := func(p *Pick) []string {
		var out []string
		for _, c := range p.Items {
			out = append(out, c.Title)
			require.Equal(t, ActionSetModel, c.Result.Action)
			require.True(t, strings.HasPrefix(c.Title, c.Result.Model), "%q picks %q", c.Title, c.Result.Model)
		}
		return out
	}
	srv := openaitest.NewServer(t, openaitest.WithModels("o3-mini", "gpt-4o", "gpt-4o-mini"))
	reg := modelRegistry(t, srv, 5*time.Second)

	r, err := reg.Run(ctx, State{Model: "gpt-4o-mini"}, "/model")
	require.NoError(t, err)
	require.NotNil(t, r.Pick)
	require.Empty(t, r.Text)
	require.Equal(t, []string{"gpt-4o", "gpt-4o-mini  (current)", "o3-mini"}, titles(r.Pick))
	require.Equal(t, 1, r.Pick.Selected)
	typed, err := reg.Run(ctx, State{Model: "gpt-4o-mini"}, "/model o3-mini")
	require.NoError(t, err)
	require.Equal(t, typed, r.Pick.Items[2].Result, "picking is typing the name")

	r, err = reg.Run(ctx, State{Model: "local-only"}, "/model")
	require.NoError(t, err)
	require.Equal(t, []string{"local-only  (current)", "gpt-4o", "gpt-4o-mini", "o3-mini"}, titles(r.Pick))
	require.Equal(t, 0, r.Pick.Selected)

	down := modelRegistry(t, openaitest.NewServer(t, openaitest.WithModelsError(http.StatusNotFound)), 5*time.Second)
	r, err = down.Run(ctx, State{Model: "qwen2.5-coder"}, "/model")
	require.NoError(t, err)
	require.Equal(t, []string{"qwen2.5-coder  (current)", config.Default().Model}, titles(r.Pick))
	require.True(t, strings.HasPrefix(r.Text, "Could not list the endpoint's models ("), r.Text)
	require.True(t, strings.HasSuffix(r.Text, "): showing the configured ones."), r.Text)
	require.NotContains(t, r.Text, "\n")
}

// TestResumePicker: /resume lists the sessions, those of the working
// directory first, each group latest first, with when, how many messages
// and the id; the one shown now is marked and not selected; picking one
// is /resume ID.
func TestResumePicker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := sessiontest.Open(t)
	reg := New(Deps{Store: store, Config: config.Default(), Cwd: "/here"})

	r, err := reg.Run(ctx, State{}, "/resume")
	require.NoError(t, err)
	require.Nil(t, r.Pick)
	require.Equal(t, "No sessions yet.", r.Text)

	mk := func(cwd, title string) session.Session {
		s, err := store.CreateSession(ctx, cwd, "m")
		require.NoError(t, err)
		require.NoError(t, store.SetTitle(ctx, s.ID, title))
		_, err = store.Append(ctx, s.ID, session.Message{Role: session.RoleUser, Content: title})
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond) // distinct update times: the order is the store's
		return s
	}
	a := mk("/here", "first here")
	b := mk("/elsewhere", "over there")
	c := mk("/here", "second here")
	shown := mk("/here", "shown now")

	r, err = reg.Run(ctx, State{SessionID: shown.ID}, "/resume")
	require.NoError(t, err)
	require.NotNil(t, r.Pick)
	var got []string
	for _, it := range r.Pick.Items {
		got = append(got, it.Title)
	}
	require.Equal(t, []string{"shown now", "second here", "first here", "over there"}, got)
	require.Contains(t, r.Pick.Items[0].Detail, "shown now")
	require.Equal(t, 1, r.Pick.Selected, "the latest other session is selected")
	require.Contains(t, r.Pick.Items[1].Detail, "1 msgs · "+c.ID)
	require.Contains(t, r.Pick.Items[3].Detail, b.ID+" · /elsewhere", "another directory's session says where")
	require.NotContains(t, r.Pick.Items[2].Detail, "/here")
	for i, s := range []session.Session{shown, c, a, b} {
		typed, err := reg.Run(ctx, State{SessionID: shown.ID}, "/resume "+s.ID)
		require.NoError(t, err)
		require.Equal(t, typed, r.Pick.Items[i].Result, "picking %s is /resume ID", s.ID)
	}
}
