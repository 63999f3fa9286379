package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// The path tools touch files only through an os.Root: a directory handle
// whose methods cannot reach past it, whatever symlinks or ".." the path
// holds when it is used. resolve decides, on names, whether a path is
// inside the working directory (the permission check); the access then
// goes through the working directory's Root with the resolved path, so a
// directory swapped for a symlink between the check and the use makes the
// call fail instead of landing outside. Check and use are one operation.
//
// A path outside the working directory (allowed by the user or --yolo) is
// reached through a Root opened at its nearest existing ancestor, so it
// too stays where the user approved it.

// rootedPath is a target opened for access: root cannot be left, and name
// is the target inside it ("." for root itself).
type rootedPath struct {
	root  *os.Root
	name  string
	close func()
}

// open returns t's root and its name inside it. The caller calls close.
func (s *Set) open(t target) (rootedPath, error) {
	if !t.outside {
		name, _ := relInside(s.workDir, t.abs)
		if s.root != nil {
			return rootedPath{root: s.root, name: name, close: func() {}}, nil
		}
		r, err := os.OpenRoot(s.workDir)
		if err != nil {
			return rootedPath{}, fmt.Errorf("open working directory %s: %w", s.workDir, unwrapPath(err))
		}
		return rootedPath{root: r, name: name, close: func() { r.Close() }}, nil
	}
	base := filepath.Dir(t.abs)
	for {
		if fi, err := os.Stat(base); err == nil && fi.IsDir() {
			break
		}
		up := filepath.Dir(base)
		if up == base {
			break
		}
		base = up
	}
	name, ok := relInside(base, t.abs)
	if !ok {
		return rootedPath{}, fmt.Errorf("no directory above %s", t.abs)
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return rootedPath{}, fmt.Errorf("open %s: %w", base, unwrapPath(err))
	}
	return rootedPath{root: r, name: name, close: func() { r.Close() }}, nil
}

// openRoot opens the directory t as a Root of its own, for walking it.
// fi describes it; a target that is not a directory is an error naming it.
func (s *Set) openRoot(t target) (*os.Root, fs.FileInfo, error) {
	rp, err := s.open(t)
	if err != nil {
		return nil, nil, err
	}
	defer rp.close()
	fi, err := rp.root.Stat(rp.name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, fi, errNotDir
	}
	sub, err := rp.root.OpenRoot(rp.name)
	if err != nil {
		return nil, nil, err
	}
	return sub, fi, nil
}

var errNotDir = errors.New("not a directory")

// openExisting opens name in root for reading without blocking (a FIFO
// must not hang the call) and describes what was opened, so that the
// checks on the file and the reads are about the same file.
func openExisting(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readRegular reads a whole regular file of root; anything else is an
// error for the caller to describe with fi.
func readRegular(root *os.Root, name string) ([]byte, fs.FileInfo, error) {
	f, fi, err := openExisting(root, name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil, fi, nil
	}
	b, err := io.ReadAll(f)
	return b, fi, err
}

// writeAtomic replaces name in root with data: a temporary file in the
// same directory is written, synced and renamed over name, so readers see
// the old or the new content and never a partial file. An existing file
// keeps its permission bits; a new one gets 0644. Missing parent
// directories are created. Every step goes through root.
func writeAtomic(root *os.Root, name string, data []byte) (err error) {
	dir := filepath.Dir(name)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create parent directories: %w", unwrapPath(err))
		}
	}
	mode := fs.FileMode(0o644)
	if fi, err := root.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	tmpName := filepath.Join(dir, "."+filepath.Base(name)+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			_ = root.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write: %w", unwrapPath(err))
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod: %w", unwrapPath(err))
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync: %w", unwrapPath(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close: %w", unwrapPath(err))
	}
	if err := root.Rename(tmpName, name); err != nil {
		return fmt.Errorf("rename: %w", unwrapPath(err))
	}
	if d, err := root.Open(dir); err == nil { // make the rename durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}
