package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// runCLI runs gencode in-process with a map environment.
func runCLI(t *testing.T, env map[string]string, local []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	work := t.TempDir()
	code = Run(context.Background(), Env{
		Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv:       func(k string) string { return env[k] },
		Getwd:        func() (string, error) { return work, nil },
		IsTerminal:   func() bool { return false },
		LocalServers: local,
		// The fake servers answer at once, but a loaded machine running
		// -race may take longer than the real 400 ms to get them there.
		LocalProbeTimeout: 20 * time.Second,
	})
	return out.String(), errb.String(), code
}

func TestLocalServerIsFoundAndAnnounced(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithModels("llama3.1:8b", "qwen2.5-coder"))
	srv.Enqueue(openaitest.Text("hello from the local model"))
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data")}
	dead := "http://127.0.0.1:1/v1"
	out, errOut, code := runCLI(t, env, []string{dead, srv.URL()}, "-p", "hi")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "hello from the local model\n", out)
	require.Contains(t, errOut, "no OPENAI_API_KEY set; using the local server at "+srv.URL()+" with model llama3.1:8b")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "llama3.1:8b", reqs[0].Model, "the configured default model is not offered there, so the first one is used")
}

// The local servers are asked at once, and the first in order that answers
// is used even when it answers after a later one was asked: here the first
// answers only once the third has been asked. Asked one after another, the
// first is given up on before the third is asked, and the third is used.
func TestLocalServersAreAskedAtOnce(t *testing.T) {
	t.Parallel()
	thirdAsked := make(chan struct{})
	var once sync.Once
	waitForThird := func(ctx context.Context) bool {
		select {
		case <-thirdAsked:
			return true
		case <-ctx.Done(): // the client gave up on this server
			return false
		case <-time.After(30 * time.Second):
			return false
		}
	}
	first := openaitest.NewServer(t, openaitest.WithModels("first-model"), openaitest.WithModelsHook(waitForThird))
	hangs := openaitest.NewServer(t, openaitest.WithModelsHook(func(ctx context.Context) bool { <-ctx.Done(); return false }))
	third := openaitest.NewServer(t, openaitest.WithModels("third-model"), openaitest.WithModelsHook(func(context.Context) bool {
		once.Do(func() { close(thirdAsked) })
		return true
	}))
	first.Enqueue(openaitest.Text("from the first"))
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data")}
	out, errOut, code := runCLI(t, env, []string{first.URL(), hangs.URL(), third.URL()}, "-p", "hi")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "from the first\n", out)
	require.Contains(t, errOut, "using the local server at "+first.URL()+" with model first-model")
	require.Empty(t, third.Requests(), "no chat request went to a later server")
}

func TestNoEndpointSaysWhatToSet(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, errOut, code := runCLI(t, map[string]string{"HOME": home}, []string{"http://127.0.0.1:1/v1"}, "-p", "hi")
	require.Equal(t, ExitError, code)
	require.Equal(t, "gencode: no model endpoint: set OPENAI_API_KEY (or api_key in the config file), or OPENAI_BASE_URL / --base-url for a local OpenAI-compatible server\n", errOut)
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-c", "-r", "abc", "-p", "x"}, "use either --continue or --resume, not both"},
		{[]string{"-p", "  "}, "print mode needs a prompt"},
		{[]string{"export", "--format", "pdf"}, "--format must be md or jsonl"},
		{[]string{"-p", "x", "--allow", "Nope"}, "Nope"},
	}
	for _, tt := range tests {
		home := t.TempDir()
		_, errOut, code := runCLI(t, map[string]string{"HOME": home, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, nil, tt.args...)
		if code != ExitUsage {
			t.Errorf("Run(%q) = %d, want %d (stderr %q)", tt.args, code, ExitUsage, errOut)
		}
		require.Contains(t, errOut, tt.wantErr)
	}
}

// TestMistypedAllowLeavesNoSession: a usage error in --allow is found
// before a session is made, in print mode and in the TUI, so -c still
// continues the session the user had.
func TestMistypedAllowLeavesNoSession(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data"), "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	for _, args := range [][]string{{"-p", "x", "--allow", "Bassh"}, {"--allow", "Bassh"}} {
		_, errOut, code := runIn(t, home, env, args...)
		require.Equal(t, ExitUsage, code, "%q: %s", args, errOut)
		require.Contains(t, errOut, `allow "Bassh": unknown tool (did you mean Bash?`)
	}
	out, errOut, code := runIn(t, home, env, "sessions")
	require.Equal(t, 0, code, errOut)
	require.NotRegexp(t, `[0-9a-f]{12}`, out, "no session was made")
}

// runIn runs gencode in-process in dir with a map environment.
func runIn(t *testing.T, dir string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), Env{
		Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv:     func(k string) string { return env[k] },
		Getwd:      func() (string, error) { return dir, nil },
		IsTerminal: func() bool { return true },
	})
	return out.String(), errb.String(), code
}

// TestNoSessionIsSaidOnce: -c, print mode's -c and history in a directory
// without a session each say so in one sentence, not twice.
func TestNoSessionIsSaidOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, "project")
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data"), "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-c"}, "gencode: no session to continue in " + dir + "\n"},
		{[]string{"-c", "-p", "hi"}, "gencode: no session to continue in " + dir + "\n"},
		{[]string{"history"}, "gencode: no session in " + dir + " (use --session ID; `gencode sessions` lists them)\n"},
	}
	for _, tt := range tests {
		_, errOut, code := runIn(t, dir, env, tt.args...)
		require.Equal(t, ExitError, code, "%q", tt.args)
		require.Equal(t, tt.want, errOut, "%q", tt.args)
	}
}

// TestAmbiguousResumeListsTheCandidates: -r with a prefix several
// sessions share lists them, so the user can pick one.
func TestAmbiguousResumeListsTheCandidates(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data"), "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	st, err := session.Open(context.Background(), env["GENCODE_HOME"])
	require.NoError(t, err)
	byFirst := map[byte][]session.Session{}
	for i := range 17 { // 16 hex digits: two ids share their first one
		s, err := st.CreateSession(context.Background(), home, "m")
		require.NoError(t, err)
		require.NoError(t, st.SetTitle(context.Background(), s.ID, fmt.Sprintf("task %d\x1b[2J", i)))
		byFirst[s.ID[0]] = append(byFirst[s.ID[0]], s)
	}
	require.NoError(t, st.Close())
	var prefix string
	var want []session.Session
	for c, list := range byFirst {
		if len(list) > 1 {
			prefix, want = string(c), list
			break
		}
	}
	for _, args := range [][]string{{"-r", prefix}, {"-r", prefix, "-p", "hi"}, {"history", "--session", prefix}} {
		_, errOut, code := runIn(t, home, env, args...)
		require.Equal(t, ExitError, code)
		require.Contains(t, errOut, fmt.Sprintf("gencode: session id %q is the start of more than one session; give more of it:\n", prefix))
		for _, s := range want {
			require.Regexp(t, `(?m)^  `+s.ID+`  \S+ \S+ +0 msgs  task \d+`, errOut, "%q", args)
		}
		require.NotContains(t, errOut, "\x1b")
	}
}

// What a user types where no argument goes is named with what they most
// likely meant, as a usage error (exit 2), before anything is opened.
func TestStrayArgumentSaysWhatWasMeant(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fix the bug"}, `gencode: "fix the bug" is not a command; to ask it, run gencode -p "fix the bug" (print mode), or start gencode and type it`},
		{[]string{"histroy"}, `gencode: unknown command "histroy" for "gencode"; did you mean history?`},
		{[]string{"history", "a1b2c3"}, "gencode: gencode history takes no arguments; for session a1b2c3, use --session a1b2c3"},
		{[]string{"summarize", "a1b2c3"}, "gencode: gencode summarize takes no arguments; for session a1b2c3, use --session a1b2c3"},
		{[]string{"export", "a1b2c3"}, "gencode: gencode export takes no arguments; for session a1b2c3, use --session a1b2c3"},
		{[]string{"rewind", "3"}, "gencode: gencode rewind takes no arguments; did you mean --to 3?"},
		{[]string{"rewind", "a1b2c3"}, "gencode: gencode rewind takes no arguments; for session a1b2c3, use --session a1b2c3"},
		{[]string{"rewind", "--undo", "r1"}, "gencode: --undo takes its value after an equals sign: gencode rewind --undo=r1"},
		{[]string{"sessions", "5"}, "gencode: gencode sessions takes no arguments; did you mean --limit 5?"},
		{[]string{"sessions", "x"}, `gencode: gencode sessions takes no arguments (got "x"); see gencode sessions --help`},
		{[]string{"rewind", "--to", "0"}, "gencode: rewind: --to wants a turn number; turns count from 1 (see --list)"},
		{[]string{"mcp", "lsit"}, `gencode: unknown command "lsit" for "gencode mcp"; did you mean list?`},
		{[]string{"history", "\x1b[2Jx"}, `gencode: gencode history takes no arguments; for session x, use --session x`},
	} {
		out, errOut, code := runCLI(t, env, nil, c.args...)
		require.Equal(t, ExitUsage, code, "%q: %s", c.args, errOut)
		require.Empty(t, out)
		require.Equal(t, c.want+"\n", errOut, "%q", c.args)
	}
}
