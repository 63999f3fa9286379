package checkpoint

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gencode/gencode/internal/fschange"
)

// takeChanged is the last snapshot with the paths in c brought up to date:
// the trees of the directories on their way to the root are rebuilt from
// the last snapshot's, every other tree is shared. Its cost follows the
// paths and the size of the directories holding them, not the project:
// one `cat-file --batch` for the old trees, one `hash-object` for the
// changed files' contents, one `commit-tree`. The shadow index is not
// touched (a whole-tree snapshot brings it up to date by stat, as after
// any change). It says false when the result cannot be trusted to be the
// tree's state: a .gitignore changed (what is kept changes beyond the
// paths named), a path lies in a nested repository, or git failed.
func (s *Store) takeChanged(ctx context.Context, c fschange.Changes) (Snapshot, bool) {
	skipped := map[string]bool{}
	for _, p := range s.last.Skipped {
		skipped[p] = true
	}
	now := map[string]entry{} // path -> its entry now; absent: not in the tree now
	changed := map[string]bool{}
	var hashPaths []string
	for _, list := range [][]string{c.Created, c.Modified, c.Deleted, c.Reverted} {
		for _, p := range list {
			// A .gitignore changes what is kept beyond the paths
			// named; a name hash-object's lines cannot carry as is is
			// left to `add -A`.
			if path.Base(p) == ".gitignore" || strings.ContainsAny(p, "\n\"") {
				return Snapshot{}, false
			}
			if changed[p] {
				continue
			}
			changed[p] = true
			delete(skipped, p)
			abs := filepath.Join(s.workDir, filepath.FromSlash(p))
			fi, err := os.Lstat(abs)
			switch {
			case err != nil || fi.IsDir():
			case fi.Mode().IsRegular() && fi.Size() > s.maxFile:
				skipped[p] = true
			case fi.Mode().IsRegular():
				mode := "100644"
				if fi.Mode()&0o100 != 0 {
					mode = "100755"
				}
				now[p] = entry{mode: mode} // oid from hash-object below
				hashPaths = append(hashPaths, p)
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(abs)
				if err != nil {
					return Snapshot{}, false
				}
				oid, err := s.writeObject("blob", []byte(target))
				if err != nil {
					return Snapshot{}, false
				}
				raw, _ := hex.DecodeString(oid)
				now[p] = entry{mode: "120000", oid: string(raw)}
			}
		}
	}
	snap := Snapshot{Tree: s.last.Tree}
	diff, exact := []string{}, true // what differs from s.last, when known
	for p := range skipped {
		snap.Skipped = append(snap.Skipped, p)
	}
	sort.Strings(snap.Skipped)
	if len(changed) > 0 {
		if len(hashPaths) > 0 {
			out, err := s.git(ctx, []byte(strings.Join(hashPaths, "\n")+"\n"), "hash-object", "-w", "--stdin-paths")
			if err != nil {
				return Snapshot{}, false
			}
			oids := strings.Fields(string(out))
			if len(oids) != len(hashPaths) {
				return Snapshot{}, false
			}
			for i, p := range hashPaths {
				e := now[p]
				raw, err := hex.DecodeString(oids[i])
				if err != nil {
					return Snapshot{}, false
				}
				e.oid = string(raw)
				now[p] = e
			}
		}
		tree, paths, ok, err := s.rebuild(ctx, s.last.Tree, changed, now)
		if err != nil {
			return Snapshot{}, false
		}
		snap.Tree, diff, exact = tree, paths, ok
	}
	if err := s.commit(&snap); err != nil {
		return Snapshot{}, false
	}
	s.stats.Changed++
	s.lastDiff = lastDiff{}
	if exact {
		s.lastDiff = lastDiff{from: s.last.ID, to: snap.ID, paths: diff}
	}
	return snap, true
}

// lastDiff is what differs between the last two snapshots, as the
// followed one found it (Changed answers from it, without git).
type lastDiff struct {
	from, to string
	paths    []string
}

// entry is one entry of a git tree: its mode as git writes it ("100644",
// "100755", "120000", "40000", "160000") and its raw object ID.
type entry struct {
	mode, oid string
}

func (e entry) isTree() bool { return e.mode == "40000" }

// errNested means a changed path lies inside a nested repository, kept
// as a gitlink: only a whole-tree snapshot knows what git does there.
var errNested = errors.New("a changed path is inside a nested repository")

// rebuild returns the tree that is old with the changed paths as now says
// (a path absent from now is not in the tree), and the paths that differ
// between the two as `diff-tree -r` lists them (sorted), when the trees it
// read and built say (exact; not when a subtree it did not read is
// gone or replaced by a file: its files are not known here).
func (s *Store) rebuild(ctx context.Context, old string, changed map[string]bool, now map[string]entry) (tree string, diff []string, exact bool, err error) {
	// Every directory on the way to a changed path, the root ("") first.
	dirs := map[string]bool{"": true}
	for p := range changed {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Strings(order)
	trees, err := s.readTrees(ctx, old, order)
	if err != nil {
		return "", nil, false, err
	}
	olds := make(map[string]map[string]entry, len(trees)) // as read, before the changes
	for d, ents := range trees {
		olds[d] = maps.Clone(ents)
	}
	news := map[string]map[string]entry{} // as built
	// Deepest first, so that a directory's new tree is known before its
	// parent's is built.
	sort.Slice(order, func(i, j int) bool {
		return strings.Count(order[i], "/") > strings.Count(order[j], "/") ||
			strings.Count(order[i], "/") == strings.Count(order[j], "/") && order[i] > order[j]
	})
	built := map[string]string{} // dir -> its new tree's raw ID; "" when empty
	for _, d := range order {
		ents := trees[d]
		if ents == nil {
			ents = map[string]entry{}
		}
		for p := range changed {
			if parentDir(p) != d {
				continue
			}
			name := path.Base(p)
			if e, ok := now[p]; ok {
				ents[name] = e
			} else if !ents[name].isTree() || !dirs[p] {
				// Gone, or not kept; a directory still holding
				// changed paths is built below.
				delete(ents, name)
			}
		}
		for c := range dirs {
			if c == "" || parentDir(c) != d {
				continue
			}
			name := path.Base(c)
			if ents[name].mode == "160000" {
				return "", nil, false, errNested
			}
			if _, isFile := now[c]; isFile {
				continue // a file where the directory was
			}
			// Git keeps no empty directory, nor one that is gone.
			fi, err := os.Lstat(filepath.Join(s.workDir, filepath.FromSlash(c)))
			if err == nil && fi.IsDir() && built[c] != "" {
				ents[name] = entry{mode: "40000", oid: built[c]}
			} else {
				delete(ents, name)
			}
		}
		news[d] = ents
		if len(ents) == 0 {
			built[d] = ""
			continue
		}
		oid, err := s.writeObject("tree", treeBody(ents))
		if err != nil {
			return "", nil, false, err
		}
		raw, _ := hex.DecodeString(oid)
		built[d] = string(raw)
	}
	diff, exact = treeDiff(dirs, olds, news)
	if built[""] == "" {
		tree, err = s.writeObject("tree", nil)
		return tree, diff, exact, err
	}
	return hex.EncodeToString([]byte(built[""])), diff, exact, nil
}

// treeDiff is what differs between two trees as `diff-tree -r` lists it
// (each file, symlink or gitlink added, removed or changed; sorted), from
// the directories on the way to the changes: olds as they were, news as
// rebuilt. A subtree outside those that differs (removed whole, or
// replaced by a file: its files are not read here) makes it not exact.
func treeDiff(dirs map[string]bool, olds, news map[string]map[string]entry) ([]string, bool) {
	out := []string{}
	var walk func(d string, o, n map[string]entry) bool
	walk = func(d string, o, n map[string]entry) bool {
		names := map[string]bool{}
		for name := range o {
			names[name] = true
		}
		for name := range n {
			names[name] = true
		}
		for name := range names {
			oe, inOld := o[name]
			ne, inNew := n[name]
			if inOld == inNew && oe == ne {
				continue // the same, subtrees by their hash
			}
			p := name
			if d != "" {
				p = d + "/" + name
			}
			if inOld && !oe.isTree() || inNew && !ne.isTree() {
				out = append(out, p) // listed once, a change of kind too
			}
			var oSub, nSub map[string]entry
			if inOld && oe.isTree() {
				if oSub = olds[p]; !dirs[p] || oSub == nil {
					return false
				}
			}
			if inNew && ne.isTree() {
				if nSub = news[p]; !dirs[p] || nSub == nil {
					return false
				}
			}
			if (oSub != nil || nSub != nil) && !walk(p, oSub, nSub) {
				return false
			}
		}
		return true
	}
	if !walk("", olds[""], news[""]) {
		return nil, false
	}
	sort.Strings(out)
	return out, true
}

// parentDir is p's directory, "" at the top.
func parentDir(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

// readTrees reads the trees of dirs in the tree old; a directory missing
// there, or not a directory, has none. They are read from their loose
// objects (a snapshot's trees are loose: the shadow directory is never
// packed), else with one `cat-file --batch`.
func (s *Store) readTrees(ctx context.Context, old string, dirs []string) (map[string]map[string]entry, error) {
	if trees, ok := s.readLooseTrees(old, dirs); ok {
		return trees, nil
	}
	return s.catFileTrees(ctx, old, dirs)
}

// catFileTrees is readTrees through git (`cat-file --batch`).
func (s *Store) catFileTrees(ctx context.Context, old string, dirs []string) (map[string]map[string]entry, error) {
	var in bytes.Buffer
	for _, d := range dirs {
		if d == "" {
			fmt.Fprintf(&in, "%s\n", old)
		} else {
			fmt.Fprintf(&in, "%s:%s\n", old, d)
		}
	}
	out, err := s.git(ctx, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	trees := map[string]map[string]entry{}
	for _, d := range dirs {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("cat-file: %w", err)
		}
		f := strings.Fields(head)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("cat-file: unexpected %q", head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("cat-file: unexpected %q", head)
		}
		body := make([]byte, n+1)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("cat-file: %w", err)
		}
		if f[1] != "tree" {
			continue // a file where the directory is now
		}
		ents, err := parseTree(body[:n])
		if err != nil {
			return nil, err
		}
		trees[d] = ents
	}
	return trees, nil
}

// readLooseTrees is readTrees from the loose objects, without a git
// process (two objects per tool call's "after" snapshot, most often); false
// when an object on the way is not a loose object of the shadow directory
// or does not read as one.
func (s *Store) readLooseTrees(old string, dirs []string) (map[string]map[string]entry, bool) {
	root, ok := s.looseTree(old)
	if !ok {
		return nil, false
	}
	read := map[string]map[string]entry{"": root} // trees by directory, as read on the way
	trees := map[string]map[string]entry{}
	for _, d := range dirs {
		t, at := root, ""
		if d != "" {
			for _, name := range strings.Split(d, "/") {
				e, found := t[name]
				if !found || !e.isTree() {
					t = nil // missing, or a file where the directory is now
					break
				}
				at = path.Join(at, name)
				if t, found = read[at]; !found {
					if t, ok = s.looseTree(hex.EncodeToString([]byte(e.oid))); !ok {
						return nil, false
					}
					read[at] = t
				}
			}
		}
		if t != nil {
			trees[d] = t
		}
	}
	return trees, true
}

// looseTree reads the tree object oid (hex) from its loose file.
func (s *Store) looseTree(oid string) (map[string]entry, bool) {
	if len(oid) != 40 {
		return nil, false
	}
	f, err := os.Open(filepath.Join(s.gitDir, "objects", oid[:2], oid[2:]))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, false
	}
	hdr, body, found := bytes.Cut(b, []byte{0})
	if !found || string(hdr) != "tree "+strconv.Itoa(len(body)) {
		return nil, false
	}
	ents, err := parseTree(body)
	if err != nil {
		return nil, false
	}
	return ents, true
}

// parseTree reads a tree object's body: entries "mode name\0<20 bytes>".
func parseTree(b []byte) (map[string]entry, error) {
	ents := map[string]entry{}
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || len(b) < nul+21 {
			return nil, errors.New("checkpoint: a malformed tree")
		}
		ents[string(b[sp+1:nul])] = entry{mode: string(b[:sp]), oid: string(b[nul+1 : nul+21])}
		b = b[nul+21:]
	}
	return ents, nil
}

// treeBody is a tree object's body, entries in git's order (a directory
// sorts as its name followed by "/").
func treeBody(ents map[string]entry) []byte {
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}
	key := func(n string) string {
		if ents[n].isTree() {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString(ents[n].mode)
		b.WriteByte(' ')
		b.WriteString(n)
		b.WriteByte(0)
		b.WriteString(ents[n].oid)
	}
	return b.Bytes()
}

// zlibWriters are writeObject's compressors, kept from one object to the
// next: a new one allocates ~800 kB of tables (zeroed, then faulted in)
// to compress a tree or commit of a few hundred bytes, which was most of
// a snapshot's own CPU and the garbage collections of a tool call. Reset
// keeps the level: the same bytes on disk.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// writeObject stores a loose object in the shadow directory (as git does:
// zlib of "kind size\0body", under objects/xx/), or freshens it when it is
// there already, so that pruning by age counts from its latest use. It
// returns the object's ID in hex.
func (s *Store) writeObject(kind string, body []byte) (string, error) {
	hdr := fmt.Sprintf("%s %d\x00", kind, len(body))
	h := sha1.New()
	h.Write([]byte(hdr))
	h.Write(body)
	oid := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(s.gitDir, "objects", oid[:2])
	dst := filepath.Join(dir, oid[2:])
	if _, err := os.Stat(dst); err == nil {
		t := time.Now()
		_ = os.Chtimes(dst, t, t)
		return oid, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(tmp)
	_, err = zw.Write([]byte(hdr))
	if err == nil {
		_, err = zw.Write(body)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(tmp.Name(), 0o444)
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("checkpoint: write object: %w", err)
	}
	return oid, nil
}
