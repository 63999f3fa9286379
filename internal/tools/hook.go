package tools

import (
	"context"
	"time"

	"github.com/gencode/gencode/internal/sandbox"
)

// HookRun is what a hook command did: its stdout and stderr (each capped,
// head and tail), its exit code, and whether it was killed at its
// timeout. Err: it could not be started.
type HookRun struct {
	Stdout, Stderr string
	ExitCode       int
	TimedOut       bool
	Err            error
}

// RunHook runs a hook's command as Bash runs the model's: bash -c in the
// working directory, with the same scrubbed environment (plus
// CLAUDE_PROJECT_DIR and GENCODE_PROJECT_DIR, the working directory), in
// its own process group, under the Set's sandbox where one is in force,
// killed with everything it started at timeout or when ctx ends. stdin is
// written to its standard input. No permission is asked: the user
// configured (or approved) the hook.
func (s *Set) RunHook(ctx context.Context, command string, stdin []byte, timeout time.Duration) HookRun {
	if stdin == nil {
		stdin = []byte{}
	}
	errOut := &headTail{limit: bashCaptureBytes}
	res := s.execShell(ctx, shellSpec{command: command, timeout: timeout, lim: sandbox.Approved(),
		stdin: stdin, stderr: errOut,
		env: []string{"CLAUDE_PROJECT_DIR=" + s.workDir, "GENCODE_PROJECT_DIR=" + s.workDir}})
	if res.err != nil {
		return HookRun{Err: res.err}
	}
	return HookRun{Stdout: res.out.String(), Stderr: errOut.String(), ExitCode: res.exitCode, TimedOut: res.timedOut}
}
