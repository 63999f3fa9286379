package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestTwoPrintLoopsOnOneSession: two `gencode -c -p` loops of 20 turns each
// on one session (issue 14, item 2). Each turn runs a slow Bash call, so the
// loops overlap in the middle of each other's tool calls; one turn runs
// longer than a writer waits for the session. Afterwards no
// request broke the message rules, no call was answered with a made-up
// result, each turn's messages are together in the log, and every prompt
// was either kept or refused with a message naming the session and the
// process that held it.
func TestTwoPrintLoopsOnOneSession(t *testing.T) {
	if testing.Short() {
		t.Skip("80 runs of the binary")
	}
	t.Parallel()
	const loops, turns = 2, 20
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		prompt := ""
		for _, m := range r.Messages {
			if m.Role == "user" {
				prompt = m.Content
			}
		}
		switch r.Messages[len(r.Messages)-1].Role {
		case "user":
			pause := "0.3"
			if prompt == "loop1-turn10" {
				pause = "6" // longer than the other loop waits: it is refused
			}
			return openaitest.Calls(openaitest.ToolCall{Name: "Bash",
				Arguments: fmt.Sprintf(`{"command":"sleep %s; echo ran %s"}`, pause, prompt)})
		case "tool":
			return openaitest.Reply{Content: "done: " + prompt, Delay: 100 * time.Millisecond}
		}
		return openaitest.Text("unexpected request")
	}))
	sb := newSandbox(t).withRace()
	// Its subject is two writers on one session: no sandbox helper (a race-built
	// gencode per Bash call) and no checkpoints, which have their own tests
	// (sandbox_e2e, rewind_e2e); 19.3 -> 12.8 CPU-s.
	sb.writeConfig("[sandbox]\nenabled = false\n\n[rewind]\nenabled = false\n")
	sb.useServer(srv)
	res := sb.run("-p", "seed", "--allow", "Bash", "--no-summarize")
	require.Equal(t, 0, res.code, res.stderr)

	type outcome struct {
		prompt string
		res    runResult
		err    error
	}
	results := make(chan outcome, loops*turns)
	var wg sync.WaitGroup
	for l := 1; l <= loops; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= turns; i++ {
				p := fmt.Sprintf("loop%d-turn%02d", l, i)
				r, err := sb.exec("-c", "-p", p, "--allow", "Bash", "--no-summarize")
				results <- outcome{p, r, err}
			}
		}()
	}
	wg.Wait()
	close(results)

	violations, reqs := 0, srv.Requests()
	for i, r := range reqs {
		if err := openaitest.CheckMessageRules(r.Messages); err != nil {
			violations++
			t.Logf("request %d breaks the message rules: %v", i, err)
		}
	}
	require.Zero(t, violations, "of %d requests", len(reqs))

	sess := sb.run("history", "--json")
	require.Equal(t, 0, sess.code, sess.stderr)
	var h struct {
		Session struct {
			ID string `json:"id"`
		} `json:"session"`
		Messages []struct {
			Seq       int64  `json:"seq"`
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
			Meta       struct {
				Interrupted bool `json:"interrupted"`
			} `json:"meta"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(sess.stdout), &h))
	at := map[string]int{} // prompt -> index of its user message
	for i, m := range h.Messages {
		require.False(t, m.Meta.Interrupted, "message %d is a made-up result: %q", m.Seq, m.Content)
		if m.Role == "user" {
			_, dup := at[m.Content]
			require.False(t, dup, "prompt %q stored twice", m.Content)
			at[m.Content] = i
		}
	}

	busy := regexp.MustCompile(`^gencode: session ` + h.Session.ID + ` is in use by gencode pid \d+ since \d\d:\d\d; wait for it, or use a new session\n$`)
	kept, refused := 0, 0
	for o := range results {
		require.NoError(t, o.err, o.prompt)
		i, stored := at[o.prompt]
		switch {
		case o.res.code == 0:
			kept++
			require.Equal(t, "done: "+o.prompt+"\n", o.res.stdout)
			require.True(t, stored, "%s answered but not in the log", o.prompt)
			// The turn's four messages are together: nobody wrote
			// between the call and its result.
			require.Less(t, i+3, len(h.Messages), o.prompt)
			call, result, answer := h.Messages[i+1], h.Messages[i+2], h.Messages[i+3]
			require.Len(t, call.ToolCalls, 1, "%s: message after the prompt", o.prompt)
			require.Equal(t, call.ToolCalls[0].ID, result.ToolCallID, "%s: the result follows its call", o.prompt)
			require.Contains(t, result.Content, "ran "+o.prompt)
			require.Equal(t, "done: "+o.prompt, answer.Content)
		default:
			refused++
			require.Equal(t, 1, o.res.code, "%s: %s", o.prompt, o.res.stderr)
			require.Regexp(t, busy, o.res.stderr, o.prompt)
			require.False(t, stored, "%s refused but stored", o.prompt)
		}
	}
	t.Logf("%d turns kept, %d refused as in use", kept, refused)
	require.Positive(t, refused, "the long turn made the other loop give up at least once")
	require.Equal(t, loops*turns, kept+refused)
	require.Len(t, at, kept+1, "the log holds the seed and the kept turns, nothing else")
}

// exec runs the binary in the working directory; unlike run it may be
// called from any goroutine (it reports instead of failing the test).
func (s *sandbox) exec(args ...string) (runResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := s.command(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := runResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
		err = nil
	}
	if err != nil {
		return res, fmt.Errorf("run gencode %s: %w", strings.Join(args, " "), err)
	}
	if r := s.raced(res.stderr); r != "" {
		return res, fmt.Errorf("gencode %s: %s", strings.Join(args, " "), r)
	}
	return res, nil
}
