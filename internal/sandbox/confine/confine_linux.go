//go:build linux

// Package confine is the sandbox helper: the gencode process that
// restricts itself with Landlock, with no_new_privs, then executes one
// command in its place (see package sandbox, which builds its arguments).
// It is its own package so that go-landlock, and through it libcap's psx,
// is linked only where the helper runs: gencode's main, and the test
// binaries that run real commands through it.
package confine

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/gencode/gencode/internal/sandbox"
)

// configFor is go-landlock's configuration of an ABI version: what that
// version can restrict. A version newer than go-landlock knows is its
// newest.
func configFor(abi int) landlock.Config {
	all := []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
		landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	return all[min(max(abi, 0), len(all)-1)]
}

// writeRights are the filesystem rights the sandbox handles: every kind of
// write. Reading, listing and executing are not handled, so they stay open.
const writeRights landlock.AccessFSSet = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
	ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate

// fileRights are those of writeRights that apply to a file itself.
const fileRights landlock.AccessFSSet = ll.AccessFSWriteFile | ll.AccessFSTruncate

// devices are always writable: what ordinary commands write to that is
// not a file on disk (files, then directories).
func devices() (files, dirs []string) {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"},
		[]string{"/dev/pts", "/dev/shm"}
}

// ruleset is the Landlock configuration and rules for sp, exactly at
// sp.ABI: nothing is dropped to fit the kernel (no best effort); a kernel
// that cannot enforce it makes Restrict fail and the command is not run.
func ruleset(sp sandbox.Spec) (landlock.Config, []landlock.Rule, error) {
	if sp.ABI < 1 {
		return landlock.Config{}, nil, fmt.Errorf("no Landlock ABI to enforce (%d)", sp.ABI)
	}
	all := configFor(sp.ABI)
	fsRights := writeRights & all.HandledAccessFS
	cfg := landlock.Config{HandledAccessFS: fsRights}
	if !sp.Network {
		cfg.HandledAccessNet = all.HandledAccessNet
		// Pathname UNIX sockets of daemons outside the sandbox (ABI 9+).
		cfg.HandledAccessFS |= all.HandledAccessFS & ll.AccessFSResolveUnix
		cfg.Scoped = all.Scoped // abstract UNIX sockets and signals out (ABI 6+)
	} else {
		cfg.Scoped = all.Scoped & ll.ScopeSignal
	}
	grants, _, err := sandbox.Plan(sp.Writable, append(slices.Clone(sp.Protected), sp.GitDirs...))
	if err != nil {
		return landlock.Config{}, nil, err
	}
	if len(grants) > sandbox.MaxGrants {
		return landlock.Config{}, nil, fmt.Errorf("the plan takes %d rules, more than %d", len(grants), sandbox.MaxGrants)
	}
	var rules []landlock.Rule
	for _, g := range grants {
		r := fsRights & fileRights
		if g.Dir {
			r = fsRights
		}
		// Gone since the plan: nothing to grant there (never more access).
		rules = append(rules, landlock.PathAccess(r, g.Path).IgnoreIfMissing())
	}
	files, dirs := devices()
	rules = append(rules, landlock.PathAccess(fsRights&fileRights, files...).IgnoreIfMissing(),
		landlock.PathAccess(fsRights, dirs...).IgnoreIfMissing())
	return cfg, rules, nil
}

// Main is the helper: args are what follows sandbox.HelperArg (SPEC PATH ARGV0
// ARGS...). It restricts its own process (and so everything the command
// starts) with Landlock, with no_new_privs, then executes PATH in its
// place. It returns only when that fails, with the exit status to use;
// the reason goes to stderr, which is the command's output.
func Main(args []string, stderr io.Writer) int {
	if sandbox.IsHelper(args) {
		args = args[1:]
	}
	if len(args) < 3 {
		fmt.Fprintln(stderr, "gencode sandbox: usage: gencode "+sandbox.HelperArg+" SPEC PATH ARGV0 [ARGS...]")
		return 126
	}
	var sp sandbox.Spec
	if err := json.Unmarshal([]byte(args[0]), &sp); err != nil {
		fmt.Fprintf(stderr, "gencode sandbox: bad spec: %v; the command was not run\n", err)
		return 126
	}
	if got := sandbox.Probe(); got.ABI < sp.ABI {
		fmt.Fprintf(stderr, "gencode sandbox: the kernel offers Landlock ABI %d, not the %d gencode announced; the command was not run\n", got.ABI, sp.ABI)
		return 126
	}
	cfg, rules, err := ruleset(sp)
	if err == nil {
		err = cfg.Restrict(rules...)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gencode sandbox: cannot confine the command: %v; it was not run\n", err)
		return 126
	}
	err = syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(stderr, "gencode sandbox: run %s: %v\n", args[1], err)
	return 127
}
