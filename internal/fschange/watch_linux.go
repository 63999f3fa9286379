//go:build linux

package fschange

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// watcher follows a tree with inotify: one watch per directory, a cache of
// every file's stat. A command's changes are the paths its events name,
// compared with the cache, so a call costs what the command touched, not
// the size of the tree. The full walk happens once, when it starts.
type watcher struct {
	o     *Observer
	fd    int
	wds   map[int32]string // watch -> directory, relative to the root ("" for the root)
	files map[string]stat  // the tree as of the last drain
	ign   []ignoreFile     // every .gitignore met, any depth
	buf   []byte
}

const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_ATTRIB | syscall.IN_ONLYDIR |
	syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// errOverflow means the kernel dropped events: the tree must be walked.
var errOverflow = errors.New("inotify queue overflowed")

// startWatcher walks the tree once and watches its directories; it fails
// (and the caller falls back to walking per call) when inotify is not
// available or out of watches.
func startWatcher(ctx context.Context, o *Observer) (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &watcher{o: o, fd: fd, wds: map[int32]string{}, files: map[string]stat{}, buf: make([]byte, 64<<10)}
	if err := w.scan(ctx, ""); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *watcher) close() {
	if w.fd >= 0 {
		syscall.Close(w.fd)
		w.fd = -1
	}
}

func (w *watcher) ignored(rel string, isDir bool) bool {
	if w.o.excluded(rel) {
		return true
	}
	g := ignorer{}
	for _, f := range w.ign {
		if f.base == "" || strings.HasPrefix(rel, f.base+"/") {
			g.add(f)
		}
	}
	return g.ignored(rel, isDir)
}

// scan watches directory rel and everything under it, and caches its
// files; it returns the files it found.
func (w *watcher) scan(ctx context.Context, rel string) error {
	var visit func(rel string) error
	visit = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(w.o.root, filepath.FromSlash(rel))
		wd, err := syscall.InotifyAddWatch(w.fd, dir, watchMask)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EACCES) {
				return nil
			}
			return fmt.Errorf("watch %s: %w", dir, err) // ENOSPC: out of watches
		}
		w.wds[int32(wd)] = rel
		f, err := os.Open(dir)
		if err != nil {
			return nil
		}
		entries, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range entries {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				g := &ignorer{}
				if g.push(filepath.Join(dir, ".gitignore"), rel) {
					w.ign = append(w.ign, g.stack[0])
				}
			}
		}
		for _, e := range entries {
			r := join(rel, e.Name())
			isDir := e.IsDir()
			if isDir && e.Name() == ".git" || w.ignored(r, isDir) {
				continue
			}
			if isDir {
				if err := visit(r); err != nil {
					return err
				}
				continue
			}
			if len(w.files) >= w.o.opts.MaxFiles {
				return fmt.Errorf("%w: over %d files under %s", ErrTooLarge, w.o.opts.MaxFiles, w.o.root)
			}
			if fi, err := e.Info(); err == nil {
				w.files[r] = statOf(fi)
			}
		}
		return nil
	}
	return visit(rel)
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// drain reads the events queued so far and returns the paths they name
// (files, and directories created or removed as "dir/").
func (w *watcher) drain() (map[string]bool, error) {
	touched := map[string]bool{}
	for {
		n, err := syscall.Read(w.fd, w.buf)
		if errors.Is(err, syscall.EAGAIN) || n == 0 {
			return touched, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read inotify events: %w", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameBytes := w.buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				return nil, errOverflow
			}
			if ev.Mask&syscall.IN_IGNORED != 0 {
				delete(w.wds, ev.Wd)
				continue
			}
			dir, ok := w.wds[ev.Wd]
			if !ok {
				continue
			}
			name := strings.TrimRight(string(nameBytes), "\x00")
			if name == "" {
				continue
			}
			p := join(dir, name)
			if ev.Mask&syscall.IN_ISDIR != 0 {
				touched[p+"/"] = true
			} else {
				touched[p] = true
			}
		}
	}
}

// settle drains the queue and brings the cache up to date; it returns
// what changed since the last call.
func (w *watcher) settle(ctx context.Context) (Changes, error) {
	touched, err := w.drain()
	if errors.Is(err, errOverflow) {
		return w.rescan(ctx)
	}
	if err != nil {
		return Changes{}, err
	}
	var c Changes
	seen := map[string]bool{}
	check := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		old, had := w.files[p]
		fi, err := os.Lstat(filepath.Join(w.o.root, filepath.FromSlash(p)))
		now := err == nil && !fi.IsDir()
		switch {
		case had && !now:
			delete(w.files, p)
			c.Deleted = append(c.Deleted, p)
		case !had && now:
			if w.ignored(p, false) || hasGitDir(p) {
				return
			}
			w.files[p] = statOf(fi)
			c.Created = append(c.Created, p)
		case had && now:
			if st := statOf(fi); st != old {
				w.files[p] = st
				c.Modified = append(c.Modified, p)
			}
		}
	}
	for p := range touched {
		if !strings.HasSuffix(p, "/") {
			if path.Base(p) == ".gitignore" {
				w.reloadIgnore(p)
			}
			continue
		}
		// A directory came or went (or moved): its cached files are
		// checked, and a new one is watched and scanned.
		d := strings.TrimSuffix(p, "/")
		if d == ".git" || strings.HasSuffix(d, "/.git") || w.ignored(d, true) {
			continue
		}
		for f := range w.files {
			if strings.HasPrefix(f, d+"/") {
				check(f)
			}
		}
		if fi, err := os.Lstat(filepath.Join(w.o.root, filepath.FromSlash(d))); err == nil && fi.IsDir() {
			before := make(map[string]bool, 0)
			for f := range w.files {
				if strings.HasPrefix(f, d+"/") {
					before[f] = true
				}
			}
			if err := w.scan(ctx, d); err != nil {
				return Changes{}, err
			}
			for f := range w.files {
				if strings.HasPrefix(f, d+"/") && !before[f] && !seen[f] {
					seen[f] = true
					c.Created = append(c.Created, f)
				}
			}
		}
	}
	for p := range touched {
		if !strings.HasSuffix(p, "/") {
			check(p)
		}
	}
	c.sort()
	return c, nil
}

func hasGitDir(p string) bool {
	return p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/")
}

func (w *watcher) reloadIgnore(p string) {
	base := path.Dir(p)
	if base == "." {
		base = ""
	}
	kept := w.ign[:0]
	for _, f := range w.ign {
		if f.base != base {
			kept = append(kept, f)
		}
	}
	w.ign = kept
	g := &ignorer{}
	if g.push(filepath.Join(w.o.root, filepath.FromSlash(p)), base) {
		w.ign = append(w.ign, g.stack[0])
	}
}

// rescan walks the whole tree again after lost events and compares it
// with the cache.
func (w *watcher) rescan(ctx context.Context) (Changes, error) {
	old := w.files
	w.close()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return Changes{}, fmt.Errorf("inotify: %w", err)
	}
	w.fd, w.wds, w.files, w.ign = fd, map[int32]string{}, map[string]stat{}, nil
	if err := w.scan(ctx, ""); err != nil {
		return Changes{}, err
	}
	var c Changes
	for p, b := range old {
		a, ok := w.files[p]
		switch {
		case !ok:
			c.Deleted = append(c.Deleted, p)
		case a != b:
			c.Modified = append(c.Modified, p)
		}
	}
	for p := range w.files {
		if _, ok := old[p]; !ok {
			c.Created = append(c.Created, p)
		}
	}
	c.sort()
	return c, nil
}
