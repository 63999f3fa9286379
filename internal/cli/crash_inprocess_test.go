package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/logfile"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/window"
)

// These tests inject a panic (Env.PanicAt, or a probe that panics) in each
// goroutine gencode starts itself and check that it is recovered: the
// stack is in the log with the session id, and the user is given an error
// that says where the log is. (The terminal: TestPanicLeavesASaneTerminalInTmux
// runs the binary built with the hook; a recovered panic never reaches
// Bubble Tea.)

// panicAt is an Env.PanicAt that panics at where.
func panicAt(where string) func(string) {
	return func(at string) {
		if at == where {
			panic("injected: " + where)
		}
	}
}

// lockedBuffer is a log sink for goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readLog returns the one gencode.log under dir.
func readLog(t *testing.T, dir string) (path, text string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "gencode.log" {
			path = p
		}
		return err
	}))
	require.NotEmpty(t, path, "no gencode.log under %s", dir)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return path, string(b)
}

func TestPanicInTheTurnIsReportedAndLogged(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Text("never asked"))
	home := t.TempDir()
	state := filepath.Join(home, "state")
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{
		Args: []string{"-p", "hi"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			return map[string]string{"HOME": home, "XDG_STATE_HOME": state, "GENCODE_HOME": filepath.Join(home, "data"),
				"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL()}[k]
		},
		Getwd:      func() (string, error) { return home, nil },
		IsTerminal: func() bool { return false },
		PanicAt:    panicAt("turn"),
	})
	require.Equal(t, ExitError, code, "stdout %q stderr %q", out.String(), errb.String())
	path, log := readLog(t, state)
	require.Contains(t, errb.String(), "internal error in the turn (a bug in gencode): injected: turn")
	require.Contains(t, errb.String(), "its stack is in "+path, "the user is told where the stack is")
	require.Contains(t, log, "panic recovered")
	require.Contains(t, log, "where=turn")
	require.Regexp(t, `session=[0-9a-z]{6,}`, log, "the session id is logged with the panic")
	require.Contains(t, log, "hookedStreamer.Stream", "the log holds the turn goroutine's stack")
	require.Empty(t, srv.Requests(), "the panic came before the request")
}

func TestPanicInTheBackgroundSummaryIsAFailedCompaction(t *testing.T) {
	t.Parallel()
	answer := "Answered: " + strings.Repeat("the quick brown fox jumps over the lazy dog ", 30)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: answer}
	}))
	store, sess := newStoreSession(t)
	var logBuf lockedBuffer
	logger := logfile.New(&logBuf, logfile.Options{})
	counter := tokenCache.Counter("gpt-4o-mini")
	ts := tools.New(tools.Options{WorkDir: sess.Cwd, Permissions: tools.DefaultPermissions(), CountTokens: counter.Count})
	cfg := summarize.DefaultConfig()
	ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ts, counter, agent.Options{Model: "gpt-4o-mini",
		WorkDir: sess.Cwd, MaxIterations: 10, Window: 12000, MaskToolOutputsAfter: cfg.MaskToolOutputsAfter, Logger: logger})
	// As TestBackgroundSummaryDoesNotDelayTurns: a background summary starts a few turns in.
	cfg.Window, cfg.Model, cfg.Logger = 12000, fakeSummaryModel, logger
	cfg.TriggerThreshold, cfg.PreserveRecent = 12, 4
	var mu sync.Mutex
	var reps []summarize.Report
	cfg.Notify = func(r summarize.Report) {
		mu.Lock()
		defer mu.Unlock()
		reps = append(reps, r)
	}
	comp := completer{c: llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1}), tools: ag.Tools, hook: panicAt("summary")}
	sum := summarize.New(store, comp, counter, ag.Policy(), cfg)
	ag.SetCompactor(sum)
	t.Cleanup(sum.Close)

	var failed *summarize.Report
	for i := 1; failed == nil; i++ {
		require.Less(t, i, 12, "no background summary failed")
		for ev := range ag.Start(context.Background(), sess.ID, fmt.Sprintf("question %d", i)) {
			require.NotEqual(t, agent.EventError, ev.Kind, "the turn failed: %v", ev.Err)
		}
		sum.Wait()
		mu.Lock()
		for _, r := range reps {
			if r.Phase == summarize.Failed {
				failed = &r
			}
		}
		mu.Unlock()
	}
	require.True(t, failed.Background)
	var ce *crash.Error
	require.True(t, errors.As(failed.Err, &ce), "the report carries the recovered panic: %v", failed.Err)
	require.Equal(t, "background summary", ce.Where)
	log := logBuf.String()
	require.Contains(t, log, "where=\"background summary\" session="+sess.ID)
	require.Contains(t, log, "completer.Complete", "the log holds the summary goroutine's stack")
	// The session goes on: the next turn is answered.
	var last agent.Event
	for ev := range ag.Start(context.Background(), sess.ID, "one more") {
		last = ev
	}
	require.Equal(t, agent.EventDone, last.Kind, "%v", last.Err)
}

func TestPanicInTheIndexerIsReported(t *testing.T) {
	t.Parallel()
	store, _ := newStoreSession(t)
	var logBuf lockedBuffer
	a := &app{store: store, log: logfile.New(&logBuf, logfile.Options{}), env: Env{PanicAt: panicAt("indexer")}}
	var got []error
	var mu sync.Mutex
	stop := a.startIndexer(context.Background(), func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	})
	stop() // returns: the goroutine ended
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	var ce *crash.Error
	require.True(t, errors.As(got[0], &ce), "%v", got[0])
	require.Contains(t, got[0].Error(), "internal error in the search indexer")
	require.Contains(t, got[0].Error(), "no log file this run", "where the stack is (here: nowhere)")
	require.Contains(t, logBuf.String(), "where=\"search indexer\"")
	require.Contains(t, logBuf.String(), "startIndexer.func")

	// With a log file, the error names it.
	dir := t.TempDir()
	f, err := logfile.Open(dir, logfile.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	a.logFile = f
	require.Contains(t, a.locate(got[0]).Error(), "its stack is in "+f.Path())
}

func TestPanicInTheWindowProbeLeavesTheConfiguredWindow(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Text("answered"))
	store, sess := newStoreSession(t)
	var logBuf lockedBuffer
	counter := tokenCache.Counter("gpt-4o-mini")
	ts := tools.New(tools.Options{WorkDir: sess.Cwd, Permissions: tools.DefaultPermissions(), CountTokens: counter.Count})
	ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ts, counter, agent.Options{Model: "gpt-4o-mini",
		WorkDir: sess.Cwd, Window: 12000, Logger: logfile.New(&logBuf, logfile.Options{})})
	a := &app{env: Env{PanicAt: panicAt("window")}, windows: window.New(nil, time.Second), cfg: config.Config{BaseURL: srv.URL()}}
	ag.SetWindowProbe(a.windowProbe("gpt-4o-mini"), nil)
	r, _ := ag.AwaitWindow(context.Background())
	require.Zero(t, r.Tokens, "no answer from a probe that panicked")
	require.Equal(t, 12000, ag.Window(), "the configured window stands")
	var last agent.Event
	for ev := range ag.Start(context.Background(), sess.ID, "hi") {
		last = ev
	}
	require.Equal(t, agent.EventDone, last.Kind, "%v", last.Err)
	require.Contains(t, logBuf.String(), "where=\"window probe\"")
	require.Contains(t, logBuf.String(), "windowProbe.func")
}
