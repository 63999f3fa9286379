package cli_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/gencodetest"
	"github.com/gencode/gencode/internal/openaitest"
	llsandbox "github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/sandbox/confine"
)

// binary is the gencode binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	// In-process runs start their shell commands through this binary.
	if llsandbox.IsHelper(os.Args[1:]) {
		os.Exit(confine.Main(os.Args[1:], os.Stderr))
	}
	flag.Parse()
	waitBound()
	path, err := gencodetest.Binary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = path
	os.Exit(m.Run())
}

// waitBound lets more of this package's tests run at once than the
// default -parallel (GOMAXPROCS), unless -parallel was given: most of
// them spend their time waiting (for the binary to start, for the fake
// server's delays, for tmux), not computing.
func waitBound() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// runResult is one run of the binary.
type runResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// sandbox is a home, data dir and working dir for the binary.
type sandbox struct {
	t    *testing.T
	home string
	work string
	env  map[string]string
	bin  string // binary, or the race-built one (withRace)
	race bool
}

// withRace runs the race-built binary in the sandbox (see
// gencodetest.RaceBinary): a data race fails the test.
func (s *sandbox) withRace() *sandbox {
	s.t.Helper()
	path, err := gencodetest.RaceBinary()
	require.NoError(s.t, err)
	s.bin, s.race = path, true
	s.env["GORACE"] = "atexit_sleep_ms=0 clear_shadow_mmap_threshold=8388608"
	return s
}

// command is the binary run with args in the sandbox's environment.
func (s *sandbox) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Dir = s.work
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// raced is the data race a race-built run reported on stderr, or "".
func (s *sandbox) raced(stderr string) string {
	if i := strings.Index(stderr, "WARNING: DATA RACE"); s.race && i >= 0 {
		return stderr[i:]
	}
	return ""
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	home := t.TempDir()
	work := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(work, 0o755))
	return &sandbox{t: t, home: home, work: work, bin: binary, env: map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"PATH":            os.Getenv("PATH"),
	}}
}

func (s *sandbox) useServer(srv *openaitest.Server) {
	s.env["OPENAI_BASE_URL"] = srv.URL()
	s.env["OPENAI_API_KEY"] = "sk-test"
}

func (s *sandbox) run(args ...string) runResult {
	s.t.Helper()
	return s.runIn(s.work, "", args...)
}

func (s *sandbox) runIn(dir, stdin string, args ...string) runResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := s.command(ctx, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := runResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("run gencode %v: %v", args, err)
	}
	if r := s.raced(res.stderr); r != "" {
		s.t.Fatalf("gencode %v: %s", args, r)
	}
	return res
}

func TestPrintModeContinueAndResume(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Text("Hello! The secret word is PAPAYA."))
	res := sb.run("-p", "hi")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "Hello! The secret word is PAPAYA.\n", res.stdout)

	srv.Enqueue(openaitest.Text("You were told PAPAYA."))
	res = sb.run("-c", "-p", "what was the word?")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "You were told PAPAYA.\n", res.stdout)
	reqs := srv.Requests()
	second := reqs[1].Messages
	require.Len(t, second, 4, "the continued request carries the first turn")
	require.Equal(t, "hi", second[1].Content)
	require.Contains(t, second[2].Content, "PAPAYA")

	// A new session in another directory, then -r resumes the first one.
	other := filepath.Join(sb.home, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	srv.Enqueue(openaitest.Text("fresh"))
	res = sb.runIn(other, "", "-p", "unrelated")
	require.Equal(t, 0, res.code, res.stderr)
	require.Len(t, srv.Requests()[2].Messages, 2, "a new session starts empty")

	list := sb.run("sessions")
	require.Equal(t, 0, list.code, list.stderr)
	id := regexp.MustCompile(`(?m)^([0-9a-f]{12})\s.*\s4\s.*\bhi$`).FindStringSubmatch(list.stdout)
	require.NotNil(t, id, "sessions output:\n%s", list.stdout)
	srv.Enqueue(openaitest.Text("resumed"))
	res = sb.runIn(other, "", "-r", id[1][:6], "-p", "and now?")
	require.Equal(t, 0, res.code, res.stderr)
	require.Len(t, srv.Requests()[3].Messages, 6, "-r resumed the first session from another directory")
}

func TestPrintModeErrors(t *testing.T) {
	t.Parallel()
	overflow := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	tests := []struct {
		name     string
		setup    func(*sandbox, *openaitest.Server)
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
		maxTime  time.Duration
	}{
		{
			name:     "missing key",
			setup:    func(sb *sandbox, _ *openaitest.Server) {},
			args:     []string{"-p", "hi"},
			wantCode: 1,
			wantErr:  "set OPENAI_API_KEY",
		},
		{
			name: "dead endpoint",
			setup: func(sb *sandbox, _ *openaitest.Server) {
				sb.env["OPENAI_BASE_URL"] = "http://" + deadAddr(t) + "/v1"
				sb.env["OPENAI_API_KEY"] = "sk-test"
			},
			args:     []string{"-p", "hi"},
			wantCode: 1,
			wantErr:  "cannot reach the model endpoint",
			maxTime:  60 * time.Second,
		},
		{
			name: "429 then success",
			setup: func(sb *sandbox, srv *openaitest.Server) {
				sb.useServer(srv)
				srv.Enqueue(openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"},
					Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
					openaitest.Text("made it"))
			},
			args:    []string{"-p", "hi"},
			wantOut: "made it\n",
		},
		{
			name: "overflow surfaced clearly",
			setup: func(sb *sandbox, srv *openaitest.Server) {
				sb.useServer(srv)
				srv.Enqueue(openaitest.Error(400, overflow), openaitest.Error(400, overflow))
			},
			args:     []string{"-p", "hi", "--no-summarize"},
			wantCode: 1,
			wantErr:  "does not fit the model's context window",
		},
		{
			name: "broken config names file and line",
			setup: func(sb *sandbox, srv *openaitest.Server) {
				sb.useServer(srv)
				dir := filepath.Join(sb.home, ".config", "gencode")
				require.NoError(t, os.MkdirAll(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte("model = \"x\"\n[summarize]\nsoft_ratio = \"high\"\n"), 0o600))
			},
			args:     []string{"-p", "hi"},
			wantCode: 1,
			wantErr:  "config.toml:3: summarize.soft_ratio",
		},
		{
			name:     "usage error",
			setup:    func(*sandbox, *openaitest.Server) {},
			args:     []string{"--no-such-flag"},
			wantCode: 2,
			wantErr:  "unknown flag: --no-such-flag",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			sb := newSandbox(t)
			tt.setup(sb, srv)
			res := sb.run(tt.args...)
			if res.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d; stderr: %s", res.code, tt.wantCode, res.stderr)
			}
			require.Equal(t, tt.wantOut, res.stdout)
			if tt.wantErr != "" {
				require.Contains(t, res.stderr, tt.wantErr)
				require.Equal(t, 1, strings.Count(strings.TrimSpace(res.stderr), "\n")+1, "one line on stderr: %q", res.stderr)
				require.NotContains(t, res.stderr, "goroutine", "no stack traces")
			} else {
				require.Empty(t, res.stderr)
			}
			if tt.maxTime > 0 && res.took > tt.maxTime {
				t.Errorf("took %v, want under %v", res.took, tt.maxTime)
			}
		})
	}
}

// deadAddr is an address nothing listens on. It is on 127.0.0.2: a port
// freed on 127.0.0.1 was taken by a fake server of a parallel test now and
// then, and the "dead" endpoint answered.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
