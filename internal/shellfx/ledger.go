package shellfx

import (
	"path"
	"strings"
)

// Ledger folds file operations, in the order they happened, into their net
// effect: which files are new, changed or gone compared with before the
// first operation. A file created and then deleted is neither; a revert
// undoes what came before it; a rename is the old path gone and the new one
// there. Whether a file existed before is taken from the evidence (a read
// or an in-place edit says it did); a write to a file never seen counts as
// creating it.
//
// The zero value is not ready; use NewLedger.
type Ledger struct {
	files map[string]*fileState
	order []string
	reads []string
	read  map[string]bool
	// made are the directories the session made (mkdir): nothing under
	// them existed before it.
	made map[string]bool
}

type existence uint8

const (
	unknown existence = iota
	present
	absent
)

type fileState struct {
	before, now existence
	changed     bool
	// reverted: a revert reached past this ledger's start (the file's
	// earlier changes, in another range, are undone).
	reverted bool
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{files: map[string]*fileState{}, read: map[string]bool{}, made: map[string]bool{}}
}

func (l *Ledger) file(p string) *fileState {
	f := l.files[p]
	if f == nil {
		f = &fileState{}
		l.files[p] = f
		l.order = append(l.order, p)
	}
	return f
}

// under lists the known paths equal to p or inside directory p.
func (l *Ledger) under(p string) []string {
	var out []string
	prefix := strings.TrimSuffix(p, "/") + "/"
	if p == "." || p == "" {
		prefix = ""
	}
	for _, k := range l.order {
		if k == p || prefix == "" && !path.IsAbs(k) || prefix != "" && strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// Apply folds one operation in. Run operations are ignored (their effects
// come as separate operations).
func (l *Ledger) Apply(op Op) {
	p := op.Path
	if p == "" {
		return
	}
	switch op.Kind {
	case Read:
		f, known := l.files[p]
		if known && f.before == unknown && !f.changed {
			f.before = present
		}
		if !known {
			l.file(p).before, l.files[p].now = present, present
		}
		if !l.read[p] {
			l.read[p] = true
			l.reads = append(l.reads, p)
		}
	case Write, Create:
		f := l.file(p)
		if f.before == unknown && l.inMade(p) {
			f.before = absent
		}
		if f.before == unknown {
			f.before = absent
			if op.Kind == Write && f.now == present {
				f.before = present
			}
		}
		f.now, f.changed = present, true
	case Modify:
		f := l.file(p)
		if f.before == unknown && l.inMade(p) {
			f.before = absent
		}
		if f.before == unknown {
			f.before = present
		}
		f.now, f.changed = present, true
	case Touch:
		f := l.file(p)
		if f.now == present {
			return
		}
		if f.before == unknown {
			f.before = absent
		}
		f.now, f.changed = present, true
	case Mkdir:
		if len(l.under(p)) == 0 && !l.inMade(p) {
			l.made[path.Clean(p)] = true
		}
	case Delete:
		inside := l.under(p)
		if l.inMade(p) {
			// A directory the session made, or something inside one:
			// nothing of it existed before, so removing it is no change.
			for _, k := range inside {
				if f := l.files[k]; f.before == unknown {
					f.before = absent
				}
				l.delete(k)
			}
			return
		}
		if l.files[p] != nil || len(inside) == 0 {
			l.delete(p)
		}
		for _, k := range inside {
			if k != p {
				l.delete(k)
			}
		}
	case Rename:
		if op.To == "" || op.To == p {
			return
		}
		moved := l.under(p)
		if l.files[p] == nil {
			moved = append([]string{p}, moved...)
		}
		for _, k := range moved {
			to := op.To
			if k != p {
				to = path.Join(op.To, strings.TrimPrefix(k, strings.TrimSuffix(p, "/")+"/"))
			}
			l.delete(k)
			t := l.file(to)
			if t.before == unknown {
				t.before = absent
			}
			t.now, t.changed = present, true
		}
	case Revert:
		known := l.under(p)
		for _, k := range known {
			f := l.files[k]
			if f.before == absent {
				continue // git leaves untracked files alone
			}
			f.before, f.now, f.changed, f.reverted = present, present, false, true
		}
		if len(known) == 0 {
			f := l.file(p)
			f.before, f.now, f.reverted = present, present, true
		}
	}
}

// inMade says whether p is, or is inside, a directory the session made.
func (l *Ledger) inMade(p string) bool {
	for d := path.Clean(p); ; d = path.Dir(d) {
		if l.made[d] {
			return true
		}
		if d == "." || d == "/" || !strings.Contains(d, "/") {
			return false
		}
	}
}

func (l *Ledger) delete(p string) {
	f := l.file(p)
	if f.before == unknown {
		f.before = present
	}
	f.now, f.changed = absent, true
}

// Observe folds in changes seen on the filesystem: they are facts, not
// guesses, so they set what existed before where the ledger did not know.
func (l *Ledger) Observe(created, modified, deleted []string) {
	for _, p := range created {
		f := l.file(p)
		if f.before == unknown {
			f.before = absent
		}
		f.now, f.changed = present, true
	}
	for _, p := range modified {
		f := l.file(p)
		if f.before == unknown {
			f.before = present
		}
		f.now, f.changed = present, true
	}
	for _, p := range deleted {
		l.delete(p)
	}
}

// Created lists the files that did not exist before and do now.
func (l *Ledger) Created() []string {
	return l.list(func(f *fileState) bool { return f.changed && f.before == absent && f.now == present })
}

// Modified lists the files changed and present now, created ones included.
func (l *Ledger) Modified() []string {
	return l.list(func(f *fileState) bool { return f.changed && f.now == present })
}

// Deleted lists the files that existed before and are gone now.
func (l *Ledger) Deleted() []string {
	return l.list(func(f *fileState) bool { return f.changed && f.before != absent && f.now == absent })
}

// Reverted lists the files a revert returned to their committed state and
// that stayed so: changes to them before this ledger's first operation
// (an earlier summary's) are undone too.
func (l *Ledger) Reverted() []string {
	return l.list(func(f *fileState) bool { return f.reverted && !f.changed })
}

// Read lists the files read, in order.
func (l *Ledger) Read() []string { return append([]string(nil), l.reads...) }

func (l *Ledger) list(keep func(*fileState) bool) []string {
	var out []string
	for _, p := range l.order {
		if keep(l.files[p]) {
			out = append(out, p)
		}
	}
	return out
}
