//go:build linux

package tools

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that it and all its children can be signaled at once, and kills it when
// gencode dies (the watcher ends the rest).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	ppid, pgrp int
	start      uint64 // clock ticks after boot
	dead       bool   // a zombie: it has run its course
}

// readStat reads /proc/PID/stat (false: the process is gone, or the file
// is not what Linux writes). It reads with one open, one read and one close into a buffer on the
// stack: leftovers reads it for every process on the machine after each
// Bash call, and os.ReadFile's two fstats, second read and allocation were
// most of that cost.
func readStat(pid string) (procStat, bool) {
	fd, err := syscall.Open("/proc/"+pid+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	var buf [1024]byte
	n := 0
	for n < len(buf) && (n == 0 || buf[n-1] != '\n') { // the line ends the file
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	_ = syscall.Close(fd)
	b := buf[:n]
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime ...; comm may hold spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	var st procStat
	st.dead = string(f[0]) == "Z" || string(f[0]) == "X"
	st.ppid, _ = strconv.Atoi(string(f[1]))
	st.pgrp, _ = strconv.Atoi(string(f[2]))
	st.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return st, true
}

// startTime is when process pid started, in /proc's clock ticks (0 if
// unknown): processes of a call cannot be older than its shell.
func startTime(pid int) uint64 {
	st, _ := readStat(strconv.Itoa(pid))
	return st.start
}

// leftovers lists the live processes of a Bash call: the members of its
// process group, those whose environment holds tag (they left the group:
// setsid, daemons), and every descendant of those that is still attached
// (it cleared its environment but not its parent). Only processes started
// since the call's shell are considered. Zombies do not count: an orphan
// stays one until init reaps it, and in containers that may never happen.
func leftovers(pgid int, tag string, since uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if groupExists(pgid) {
			return []int{-pgid}
		}
		return nil
	}
	self := os.Getpid()
	stats := map[int]procStat{}
	in := map[int]bool{}
	want := []byte("\x00" + tag + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := readStat(e.Name())
		if !ok || st.dead || st.start < since {
			continue
		}
		stats[pid] = st
		if st.pgrp == pgid {
			in[pid] = true
			continue
		}
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil {
			in[pid] = bytes.Contains(append(append([]byte{0}, env...), 0), want)
		}
	}
	for grew := true; grew; {
		grew = false
		for pid, st := range stats {
			if !in[pid] && in[st.ppid] {
				in[pid], grew = true, true
			}
		}
	}
	var out []int
	for pid, ok := range in {
		if ok {
			out = append(out, pid)
		}
	}
	return out
}
