package tools

import (
	"math/rand/v2"
	"os/exec"
	"strconv"
)

// ProcessGuard makes a long-lived child of gencode (a stdio MCP server)
// and everything it starts end with it, as a Bash call's processes do:
// the child leads its own process group (setProcessGroup: it gets SIGKILL
// when gencode dies), its environment carries a tag, and a watcher
// process kills the group and every tagged process if gencode dies,
// however it dies. End reaps them when the child's session is over.
type ProcessGuard struct {
	tag   string
	w     *watcher
	pgid  int
	since uint64
}

// guardTagEnv marks the processes of one guarded child.
const guardTagEnv = "GENCODE_CHILD"

// Guard prepares cmd, not started yet, to be guarded: its own process
// group, the tag in its environment (set cmd.Env first), and the watcher,
// started now so that no moment is unwatched. Started must follow
// cmd.Start, and End the child's end.
func Guard(cmd *exec.Cmd) *ProcessGuard {
	g := &ProcessGuard{tag: guardTagEnv + "=" + strconv.FormatUint(rand.Uint64(), 36)}
	cmd.Env = append(cmd.Env, g.tag)
	setProcessGroup(cmd)
	g.w = startWatcher(g.tag)
	return g
}

// Started tells the guard the child's process id (its group's).
func (g *ProcessGuard) Started(pid int) {
	if g == nil || g.pgid != 0 {
		return
	}
	g.pgid, g.since = pid, startTime(pid)
	g.w.started(pid)
}

// End ends what is left of the child's group and of the processes it
// tagged (SIGTERM, then SIGKILL after a grace period), and the watcher.
func (g *ProcessGuard) End() {
	if g == nil {
		return
	}
	if g.pgid != 0 {
		reapLeftovers(g.pgid, g.tag, g.since)
	}
	// Never started: the watcher reads no group, and ends any tagged
	// process a failed start left.
	g.w.done()
	g.w = nil
}
