package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/termtext"
)

const (
	bashDescription = "Run a command with bash -c in the working directory. stdout and stderr are combined and the exit code is reported; long output keeps its head and tail. No stdin and no terminal: interactive commands fail. timeout is in seconds (default 120, max 600); on timeout, and when the command ends, every process it started (background jobs and daemons too) is killed. Use Read, Grep, Glob and LS rather than cat, grep, find or ls. Needs the user's approval."
	// bashSandboxNote ends the description under a sandbox.
	bashSandboxNote = " Sandboxed: it can write only inside the working directory, the temp dir and dirs the user configured (reads are open); a write elsewhere fails with Permission denied: do not work around it, ask the user."
	// bashAutoNote follows it when commands run without asking
	// ([sandbox] auto_allow): what such commands may not write.
	bashAutoNote = " Commands run without asking the user, and such commands cannot write .git (no git commit, git config or hooks) nor create, remove or rename entries at the top level of the working directory (Write can create a file there); when a command needs that, ask the user."
	bashSchema   = `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer","description":"Seconds, default 120, max 600"}},"required":["command"]}`

	bashDefaultTimeout = 120 * time.Second
	bashMaxTimeout     = 600 * time.Second
	// killGrace is how long a process group gets between SIGTERM and SIGKILL.
	killGrace = 2 * time.Second
	// drainWait bounds reading what is left in the pipe after the group is
	// gone (a process that escaped the group may hold it open).
	drainWait = time.Second
	// bashCaptureBytes bounds the output kept in memory: this much of the
	// head and of the tail, the middle counted and dropped.
	bashCaptureBytes = 1 << 20
)

type bashArgs struct {
	Command string `json:"command"`
	Timeout intArg `json:"timeout"`
}

func runBash(ctx context.Context, s *Set, raw json.RawMessage, progress func(Progress) bool) output {
	var a bashArgs
	if msg, ok := decodeArgs(ToolBash, raw, &a, "command"); !ok {
		return failf("%s", msg)
	}
	meta := Meta{Command: a.Command}
	if strings.TrimSpace(a.Command) == "" {
		return meta.failf("invalid arguments for Bash: command is empty")
	}
	timeout, note := bashDefaultTimeout, ""
	if a.Timeout.set && a.Timeout.v != 0 {
		d := time.Duration(a.Timeout.v) * time.Second
		switch {
		case a.Timeout.v < 0:
			return meta.failf("invalid arguments for Bash: timeout must be 1-600 seconds, not %d", a.Timeout.v)
		case d > bashMaxTimeout:
			timeout, note = bashMaxTimeout, fmt.Sprintf("[timeout %ds lowered to the maximum, 600s]\n", a.Timeout.v)
		default:
			timeout = d
		}
	}
	req := Request{Tool: ToolBash, Summary: termtext.FirstLine(a.Command, 200), Args: string(raw), Path: s.workDir}
	d, auto := s.authorizeAuto(ctx, req)
	if d != nil {
		return d.output(meta)
	}
	lim := sandbox.Approved() // the user decided: network, and .git writable
	if auto != nil {
		lim = *auto
	}

	cp := s.checkpointBefore(ctx)
	snap, obsErr := s.observeBefore(ctx)
	res := s.execBash(ctx, a.Command, timeout, lim, progress)
	meta.Changes = observeAfter(ctx, snap, obsErr)
	meta.Checkpoint = s.checkpointAfterChanges(ctx, cp, meta.Changes)
	text := res.out.String() // final: counts what it drops
	o := output{meta: meta, elidedLines: res.out.droppedLines, elidedBytes: res.out.droppedBytes}
	if res.err != nil {
		o.text, o.isError = fmt.Sprintf("Bash: cannot run the command: %v", res.err), true
		return o
	}
	code := res.exitCode
	o.exitCode = &code
	o.isError = code != 0 || res.timedOut || res.canceled
	var b strings.Builder
	b.WriteString(note)
	if text == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	switch {
	case res.timedOut:
		fmt.Fprintf(&b, "[timed out after %s; the process group was killed; exit code %d]", timeout, code)
	case res.canceled:
		fmt.Fprintf(&b, "[canceled; the process group was killed; exit code %d]", code)
	case res.signal != "":
		fmt.Fprintf(&b, "[killed by %s; exit code %d]", res.signal, code)
	default:
		b.WriteString(ExitTrailer(code))
	}
	if blocked := s.sandbox.Blocked(text, code, lim); blocked != "" {
		b.WriteString("\n" + blocked)
	}
	o.text = b.String()
	return o
}

type bashResult struct {
	out      *headTail
	exitCode int
	signal   string // set when the shell was killed by a signal
	timedOut bool
	canceled bool
	err      error // the command could not be started
}

// execBash runs command in its own process group, under the Set's sandbox
// (within lim) when it has one. The group is signaled
// (SIGTERM, then SIGKILL after killGrace) on timeout and when ctx ends;
// after the shell exits, everything it left running is ended too (see
// reapLeftovers), so that no background child or daemon outlives the call.
// A watcher process ends them if gencode itself dies during the call.
// Output goes to a pipe the Set reads itself, so the call returns as soon as
// the group is gone even if an escaped process keeps the pipe open.
//
// progress, when set, is told the output's tail as it arrives (see
// startReporter); it is told nothing once execBash returns.
func (s *Set) execBash(ctx context.Context, command string, timeout time.Duration, lim sandbox.Limits, progress func(Progress) bool) bashResult {
	return s.execShell(ctx, shellSpec{command: command, timeout: timeout, lim: lim, progress: progress})
}

// shellSpec is one shell command for execShell: Bash's, or a hook's,
// which reads stdin and keeps its stderr apart.
type shellSpec struct {
	command  string
	timeout  time.Duration
	lim      sandbox.Limits // what the sandbox grants the command
	progress func(Progress) bool
	stdin    []byte    // nil: /dev/null
	stderr   *headTail // nil: stderr goes with stdout
	env      []string  // added to the scrubbed environment
}

// execShell is execBash for spec.
func (s *Set) execShell(ctx context.Context, spec shellSpec) bashResult {
	command, timeout, lim, progress := spec.command, spec.timeout, spec.lim, spec.progress
	res := bashResult{out: &headTail{limit: bashCaptureBytes}}
	pr, pw, err := os.Pipe()
	if err != nil {
		res.err = err
		return res
	}
	defer pr.Close()
	tag := callTagEnv + "=" + strconv.FormatUint(rand.Uint64(), 36)
	// Under a sandbox the helper runs first, restricts itself and becomes
	// the shell (same process: the group, the watcher and the kill below
	// work as without).
	path, args, err := s.sandbox.Command([]string{"bash", "-c", command}, lim)
	if err != nil {
		pw.Close()
		res.err = err
		return res
	}
	cmd := &exec.Cmd{Path: path, Args: args}
	cmd.Dir = s.workDir
	cmd.Env = append(append(bashEnv(s.env), spec.env...), tag)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = pw, pw
	if spec.stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.stdin)
	}
	if spec.stderr != nil {
		cmd.Stderr = spec.stderr
	}
	if spec.stdin != nil || spec.stderr != nil {
		// The copies exec makes for them end when the group is gone, or
		// after drainWait if an escaped process holds them.
		cmd.WaitDelay = drainWait
	}
	setProcessGroup(cmd)
	watch := startWatcher(tag) // before the shell, so no moment is unwatched
	defer watch.done()
	err = cmd.Start()
	pw.Close() // the child has its copy
	if err != nil {
		res.err = err
		return res
	}
	watch.started(cmd.Process.Pid)
	since := startTime(cmd.Process.Pid)
	var sink io.Writer = res.out
	live := &liveTail{}
	if progress != nil {
		sink = io.MultiWriter(res.out, live)
	}
	rep := s.startReporter(live, progress)
	defer rep.stop()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(sink, pr)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-waitDone:
	case <-timer.C:
		res.timedOut = true
		stopGroup(cmd, waitDone)
	case <-ctx.Done():
		res.canceled = true
		stopGroup(cmd, waitDone)
	}
	// The shell is gone; end whatever it left running.
	reapLeftovers(cmd.Process.Pid, tag, since)

	select {
	case <-readDone:
	case <-time.After(drainWait):
		pr.Close() // unblocks the copy
		<-readDone
	}
	res.exitCode, res.signal = exitStatus(cmd.ProcessState)
	return res
}

// stopGroup ends a running shell's group and waits for the shell.
func stopGroup(cmd *exec.Cmd, waitDone <-chan error) {
	terminateGroup(cmd)
	select {
	case <-waitDone:
		return
	case <-time.After(killGrace):
	}
	killGroup(cmd)
	<-waitDone
}

// callTagEnv names the environment variable that marks every process of
// one Bash call, so that those which leave its process group (setsid,
// daemons) can still be found and ended. Its value is unique per call.
const callTagEnv = "GENCODE_TOOL_CALL"

// reapLeftovers ends what the exited shell left running: its process group
// and, where the platform can find them, the processes carrying the call's
// tag and their descendants (see leftovers). SIGTERM first, then SIGKILL
// for whatever is still alive after killGrace, repeated while new ones
// appear.
func reapLeftovers(pgid int, tag string, since uint64) {
	left := leftovers(pgid, tag, since)
	if len(left) == 0 {
		return
	}
	signalProcs(pgid, left, false)
	deadline := time.Now().Add(killGrace)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if left = leftovers(pgid, tag, since); len(left) == 0 {
			return
		}
	}
	for range 10 {
		signalProcs(pgid, left, true)
		time.Sleep(20 * time.Millisecond)
		if left = leftovers(pgid, tag, since); len(left) == 0 {
			return
		}
	}
}

// bashEnv is env without secrets (toolEnv), and with pagers and prompts
// turned off, since there is no terminal and no stdin.
func bashEnv(env []string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range toolEnv(env) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
}

// ExitTrailer is the line that ends the output of a command that exited
// by itself: what the model reads of its exit code. A display that shows
// the code by other means (a brief, a user command's output) leaves it out.
func ExitTrailer(code int) string { return fmt.Sprintf("[exit code %d]", code) }

// TrimExitTrailer is output without the ExitTrailer of code that ends it
// (and the newlines after it), for a display that says the code itself.
func TrimExitTrailer(output string, code int) string {
	return strings.TrimSuffix(strings.TrimRight(output, "\n"), ExitTrailer(code))
}
