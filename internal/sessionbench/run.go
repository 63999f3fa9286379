package sessionbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/tokens"
)

// Options say how to run a scenario.
type Options struct {
	// Binary is the gencode binary to run.
	Binary string
	// Dir is where the session's home and project are made; "" is a new
	// temporary directory, removed afterwards.
	Dir string
	// Config is appended to the config file gencode reads (TOML), after
	// the scenario's context_window: for experiments with the settings.
	Config string
	// Progress, when set, gets a line every few turns.
	Progress io.Writer
}

// Turn is one print-mode run of the binary.
type Turn struct {
	N      int // from 1; the recall question is Turns+1
	Start  time.Time
	CPU    time.Duration
	Wall   time.Duration
	Code   int
	Stdout string
	Stderr string
}

// Result is what a scenario cost.
type Result struct {
	Scenario Scenario
	Turns    []Turn
	Accounts []openaitest.Account
	Bill     openaitest.Bill
	// Alternation counts the served agent requests whose roles a strict
	// local chat template would refuse (openaitest.CheckRoleAlternation).
	Alternation int
	// FirstAlternation is the first such violation, for the report.
	FirstAlternation string
	// SystemPrompts is how many different first messages the agent sent.
	SystemPrompts int
	// Breaks counts the agent requests that do not carry all of the
	// previous agent request's messages unchanged: each compaction or
	// masking batch that rewrote the history sent before.
	Breaks int
	// Baseline is the first CPU range played again in a session of its
	// own, interleaved with the last range (Scenario.Baseline).
	Baseline []Turn
	// Recalled says the recall question was answered with the fact;
	// RecallAnswer is the answer.
	Recalled     bool
	RecallAnswer string
}

// Failed is the number of turns, baseline ones included, that did not
// exit 0.
func (r Result) Failed() int {
	n := 0
	for _, turns := range [][]Turn{r.Turns, r.Baseline} {
		for _, t := range turns {
			if t.Code != 0 {
				n++
			}
		}
	}
	return n
}

// Run plays sc through the binary against a fake server started here.
//
// With sc.Baseline, the turns of the first CPU range are played a second
// time, in a new session of their own, each one just before a turn of the
// last range: the growth target compares turns that ran side by side, so a
// change in the machine's load between the start and the end of a long run
// does not read as growth (or hide it).
func Run(ctx context.Context, sc Scenario, opts Options) (Result, error) {
	if opts.Binary == "" {
		return Result{}, errors.New("run scenario: no gencode binary")
	}
	bin, err := filepath.Abs(opts.Binary)
	if err != nil {
		return Result{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	dir := opts.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "gencode-bench-session-")
		if err != nil {
			return Result{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	sess, err := newWorld(dir, sc, opts.Config)
	if err != nil {
		return Result{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
	}
	defer sess.srv.Close()
	var base *world
	lastFrom := sc.lastRangeFrom()
	if sc.Baseline && lastFrom > 1 {
		if base, err = newWorld(filepath.Join(dir, "baseline"), sc, opts.Config); err != nil {
			return Result{}, fmt.Errorf("run scenario %s: %w", sc.Name, err)
		}
		defer base.srv.Close()
	}

	res := Result{Scenario: sc}
	for n := 1; n <= sc.runs(); n++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("run scenario %s: %w", sc.Name, err)
		}
		if base != nil && n == lastFrom {
			// The baseline's project as large as the session's: what a
			// turn costs with the project's size (checkpoints, the
			// shell's change watch) is then the same on both sides, and
			// the growth compared is the session's.
			if err := copyTree(filepath.Join(sess.work, "notes"), filepath.Join(base.work, "earlier-notes")); err != nil {
				return res, fmt.Errorf("run scenario %s, baseline: %w", sc.Name, err)
			}
		}
		if base != nil && n >= lastFrom && n <= sc.Turns {
			t, err := base.turn(ctx, bin, sc, n-lastFrom+1)
			if err != nil {
				return res, fmt.Errorf("run scenario %s, baseline turn %d: %w", sc.Name, n-lastFrom+1, err)
			}
			res.Baseline = append(res.Baseline, t)
		}
		t, err := sess.turn(ctx, bin, sc, n)
		if err != nil {
			return res, fmt.Errorf("run scenario %s, turn %d: %w", sc.Name, n, err)
		}
		res.Turns = append(res.Turns, t)
		if opts.Progress != nil && (n%25 == 0 || n == sc.runs()) {
			fmt.Fprintf(opts.Progress, "scenario %s: turn %d/%d, %d requests\n", sc.Name, n, sc.runs(), len(sess.srv.Accounts()))
		}
	}
	srv := sess.srv
	res.Accounts = srv.Accounts()
	res.Bill = openaitest.Total(res.Accounts)
	system := map[string]bool{}
	prev := -1
	for i, r := range srv.Requests() {
		a := res.Accounts[i]
		if a.Purpose != openaitest.PurposeAgent || a.Rejected != "" {
			continue
		}
		if prev >= 0 && a.SharedMessages < res.Accounts[prev].Messages {
			res.Breaks++
		}
		prev = i
		if len(r.Messages) > 0 {
			system[r.Messages[0].Content] = true
		}
		if err := openaitest.CheckRoleAlternation(r.Messages); err != nil {
			if res.Alternation == 0 {
				res.FirstAlternation = fmt.Sprintf("request %d: %v", i+1, err)
			}
			res.Alternation++
		}
	}
	res.SystemPrompts = len(system)
	if sc.FactTurn > 0 {
		last := res.Turns[len(res.Turns)-1]
		res.RecallAnswer = strings.TrimSpace(last.Stdout)
		res.Recalled = last.Code == 0 && strings.Contains(last.Stdout, Fact)
	}
	return res, nil
}

// world is one session of a scenario: its home, project and fake server.
type world struct {
	env  []string
	work string
	srv  *openaitest.Server
}

func newWorld(dir string, sc Scenario, extra string) (*world, error) {
	env, work, err := sandbox(dir, sc, extra)
	if err != nil {
		return nil, err
	}
	counter := tokens.New("gpt-4o-mini")
	srv := openaitest.NewServer(nil,
		openaitest.WithMessageRules(),
		openaitest.WithContextWindow(sc.Window, nil),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithResponder(model{sc: sc}.reply),
	)
	env = append(env, "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=sk-bench")
	return &world{env: env, work: work, srv: srv}, nil
}

// turn plays turn n of sc in w.
func (w *world) turn(ctx context.Context, bin string, sc Scenario, n int) (Turn, error) {
	args := []string{"-p", sc.Prompt(n)}
	if n > 1 {
		args = append([]string{"-c"}, args...)
	}
	if sc.WriteAndRun {
		args = append(args, "--allow", "Write,Bash")
	}
	t, err := runTurn(ctx, bin, w.work, w.env, args)
	t.N = n
	return t, err
}

// sandbox makes a home, config and project for the binary and returns its
// environment and working directory.
func sandbox(dir string, sc Scenario, extra string) (env []string, work string, err error) {
	home := filepath.Join(dir, "home")
	work = filepath.Join(home, "project")
	cfgDir := filepath.Join(home, ".config", "gencode")
	for _, d := range []string{work, filepath.Join(work, "notes"), cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, "", err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte(sc.readmeText()), 0o644); err != nil {
		return nil, "", err
	}
	cfg := fmt.Sprintf("model = \"gpt-4o-mini\"\ncontext_window = %d\n%s\n", sc.Window, extra)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		return nil, "", err
	}
	env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"PATH=" + os.Getenv("PATH"),
	}
	return env, work, nil
}

// runTurn runs the binary once and measures the CPU it used (user and
// system time of the process and of the children it waited for).
func runTurn(ctx context.Context, bin, dir string, env, args []string) (Turn, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t := Turn{Start: start, Wall: time.Since(start), Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Code = ee.ExitCode()
	case err != nil:
		return t, fmt.Errorf("run %s: %w", bin, err)
	}
	if ps := cmd.ProcessState; ps != nil {
		t.CPU = ps.UserTime() + ps.SystemTime()
	}
	return t, nil
}

// copyTree copies the regular files of directory src into dst (made).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}
