//go:build unix

package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestPrintModeSIGTERMWhileCountingHugePrompt: a prompt of megabytes
// without spaces used to be counted for minutes (quadratic) with SIGTERM
// ignored. Counting now stops on the signal and the run exits at once.
func TestPrintModeSIGTERMWhileCountingHugePrompt(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("too late")
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	// A window large enough that the prompt is counted, not refused by size.
	sb.writeConfig("context_window = 4000000\n")
	prompt := strings.Repeat("x", 16<<20) // seconds to count even when linear

	cmd := exec.Command(binary, "-p", "-", "--no-summarize")
	cmd.Dir = sb.work
	for k, v := range sb.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Once gencode has read the whole prompt, give it time to start the
	// turn: counting 16 MB takes many seconds, so the signal comes during it.
	_, err = stdin.Write([]byte(prompt))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	time.Sleep(2 * time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gencode ignored SIGTERM for 20 s; stderr: %s", stderr.String())
	}
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "stderr: %s", stderr.String())
	require.Equal(t, "gencode: canceled\n", stderr.String())
	require.Empty(t, stdout.String())
	require.Empty(t, srv.Requests(), "nothing was sent after the signal")
}

// TestPrintModeSilentEndpoint: a server that never answers, or stops after
// its first bytes, used to keep print mode waiting for ever. Now each
// silence is bounded (here by short timeouts from the config), retried
// while nothing was received, then reported.
func TestPrintModeSilentEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     openaitest.Reply
		wantErr   string
		wantOut   string // what arrived before the silence, printed (issue 25)
		wantTries int
	}{
		{
			name:      "never answers",
			reply:     openaitest.Reply{Content: "never", Delay: time.Hour},
			wantErr:   "gencode: the model endpoint stopped answering: chat completion gpt-4o-mini: no response headers from 127.0.0.1:",
			wantTries: 2,
		},
		{
			name:      "stalls after the first bytes",
			reply:     openaitest.Reply{Content: "one two three four", Chunks: 4, Stall: true, CutAfter: 2},
			wantErr:   "gencode: the model endpoint stopped answering: chat completion gpt-4o-mini: answer interrupted after 4 characters: no data from 127.0.0.1:",
			wantOut:   "one",
			wantTries: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return tt.reply }))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.writeConfig("request_header_timeout = \"300ms\"\nrequest_idle_timeout = \"300ms\"\n")
			res := sb.run("-p", "hi", "--no-summarize")
			require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
			require.Equal(t, tt.wantOut, strings.TrimSpace(res.stdout))
			require.True(t, strings.HasPrefix(res.stderr, tt.wantErr), "stderr: %s", res.stderr)
			require.Contains(t, res.stderr, "request_idle_timeout in the config")
			require.Equal(t, 1, strings.Count(res.stderr, "\n"), "one line: %q", res.stderr)
			require.GreaterOrEqual(t, len(srv.Requests()), tt.wantTries)
			require.Less(t, res.took, 60*time.Second)
		})
	}
}

// TestSummarizeSilentSummarizer: gencode summarize used to wait for ever on
// a summarizer that stopped mid-answer. Now the summary falls back to the
// deterministic one and the command ends.
func TestSummarizeSilentSummarizer(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "## Goal\n- never finished", Stall: true, CutAfter: 20}
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	// The stall under test is mid-answer (the idle timeout); the headers'
	// timeout is long enough that a loaded machine's slow first bytes do
	// not end the request before it.
	sb.writeConfig("request_header_timeout = \"10s\"\nrequest_idle_timeout = \"300ms\"\n")
	sb.seedSession(12, 3)
	res := sb.run("summarize")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Contains(t, res.stdout, "deterministic summary (no LLM narrative)")
	require.Contains(t, res.stdout, "no data from 127.0.0.1:")
	require.NotEmpty(t, srv.Requests())
	require.Less(t, res.took, 60*time.Second)
}

// TestPrintModeNotAnOpenAIAnswer: a redirect gave "provider error 400: bad
// json" and an HTML page "answer interrupted after 0 characters"; now the
// message says what the server sent, made printable.
func TestPrintModeNotAnOpenAIAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply openaitest.Reply
		want  string
	}{
		{
			name: "redirect",
			reply: openaitest.Reply{Status: 302, Header: map[string]string{"Location": "/v1/../login", "Content-Type": "text/html"},
				Body: "<a href=\"/login\">Found</a>"},
			want: `gencode: the endpoint did not answer like an OpenAI-compatible API; it sent HTTP 302 Found, redirect to /v1/../login, text/html, starting "<a href=\"/login\">Found</a>" (check OPENAI_BASE_URL or base_url; redirects are not followed)` + "\n",
		},
		{
			name: "html page",
			reply: openaitest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/html"},
				Body: "<html><title>\x1b]0;pwned\x07Portal</title>\n\n<body>Log in first</body></html>"},
			want: `gencode: the endpoint did not answer like an OpenAI-compatible API; it sent HTTP 200 OK, text/html, starting "<html><title>Portal</title> <body>Log in first</body></html>" (check OPENAI_BASE_URL or base_url; redirects are not followed)` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return tt.reply }))
			sb := newSandbox(t)
			sb.useServer(srv)
			res := sb.run("-p", "hi", "--no-summarize")
			require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
			require.Equal(t, tt.want, res.stderr)
			require.Len(t, srv.Requests(), 1, "not followed, not retried")
		})
	}
}

// TestWarnings: an API key that would cross the network unencrypted, or
// sits in a config file others can read, is warned about on stderr, once.
func TestWarnings(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	sb.env["OPENAI_BASE_URL"] = "http://gpu-box.invalid:8000/v1" // never contacted: sessions lists the log
	sb.writeConfig("api_key = \"sk-in-the-file\"\n")
	cfg := filepath.Join(sb.home, ".config", "gencode", "config.toml")
	require.NoError(t, os.Chmod(cfg, 0o644))
	res := sb.run("sessions")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "gencode: warning: base_url http://gpu-box.invalid:8000/v1 is plain http to another machine: the API key and the whole conversation cross the network unencrypted (use https://)\n"+
		"gencode: warning: "+cfg+" holds api_key and other users can read it (mode 0644): run chmod 600 "+cfg+"\n", res.stderr)
	require.NotContains(t, res.stderr, "sk-in-the-file")

	require.NoError(t, os.Chmod(cfg, 0o600))
	sb.env["OPENAI_BASE_URL"] = "https://gpu-box.invalid/v1"
	res = sb.run("sessions")
	require.Equal(t, 0, res.code)
	require.Empty(t, res.stderr)
}
