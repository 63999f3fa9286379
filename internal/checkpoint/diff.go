package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Pair names two checkpoints by ID, to compare (DiffPairs).
type Pair struct{ From, To string }

// PairDiff is what differs between the checkpoints of a Pair.
type PairDiff struct {
	Changes []Change
	// Err is ErrPruned when either checkpoint is no longer kept: what
	// differs is not known.
	Err error
}

// DiffPairs is Diff for each pair of checkpoints, whatever their number in
// two git processes: one `cat-file --batch-check` finds the trees, one
// `diff-tree --stdin` compares each pair. As with Diff, a subtree both
// trees hold alike is passed over by its hash, never read: the cost
// follows what differs, not the project's size.
func (s *Store) DiffPairs(ctx context.Context, pairs []Pair) ([]PairDiff, error) {
	out := make([]PairDiff, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	var ids []string
	for _, p := range pairs {
		ids = append(ids, p.From, p.To)
	}
	tree, err := s.trees(ctx, ids)
	if err != nil {
		return nil, err
	}
	// One line per distinct pair of different trees; diff-tree answers
	// each it can read with a line "FROM TO" and the changes, and skips
	// one it cannot (an error on stderr).
	byHeader := map[string][]int{}
	var in strings.Builder
	for i, p := range pairs {
		from, to := tree[p.From], tree[p.To]
		switch {
		case from == "" || to == "":
			out[i].Err = fmt.Errorf("checkpoint %s or %s: %w", short(p.From), short(p.To), ErrPruned)
		case from != to:
			h := from + " " + to
			if byHeader[h] == nil {
				in.WriteString(h + "\n")
			}
			byHeader[h] = append(byHeader[h], i)
		}
	}
	if len(byHeader) == 0 {
		return out, nil
	}
	for _, is := range byHeader { // gone until diff-tree answers for it
		for _, i := range is {
			out[i].Err = fmt.Errorf("checkpoint %s or %s: %w", short(pairs[i].From), short(pairs[i].To), ErrPruned)
		}
	}
	res, err := s.git(ctx, []byte(in.String()), "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--name-status")
	if err != nil {
		return nil, fmt.Errorf("checkpoint diffs: %w", err)
	}
	// Each record starts with a header line (no NUL before its newline)
	// or a status (a letter and a NUL, then the path and a NUL); a path
	// may hold a newline, a status never does.
	var cur []int
	for b := string(res); b != ""; {
		nl, nul := strings.IndexByte(b, '\n'), strings.IndexByte(b, 0)
		if nl >= 0 && (nul < 0 || nl < nul) {
			cur = byHeader[b[:nl]]
			for _, i := range cur {
				out[i].Err = nil
			}
			b = b[nl+1:]
			continue
		}
		if nul < 0 {
			return nil, fmt.Errorf("checkpoint diffs: unexpected output %q", b)
		}
		status, rest := b[:nul], b[nul+1:]
		end := strings.IndexByte(rest, 0)
		if end < 0 {
			return nil, fmt.Errorf("checkpoint diffs: unexpected output %q", b)
		}
		c := Change{Path: rest[:end], Op: opOf(status)}
		for _, i := range cur {
			out[i].Changes = append(out[i].Changes, c)
		}
		b = rest[end+1:]
	}
	return out, nil
}

// Kept says which checkpoints of ids are still kept (not pruned), as
// DiffPairs finds them: a pair it can compare is a pair of kept ones. A
// checkpoint is a loose commit (Prune drops them by age, and a kept
// commit keeps the trees it reaches), so a look at its object file
// answers without git; one not there as a file is asked of git (`cat-file
// --batch-check`: packed by hand, or gone).
func (s *Store) Kept(ctx context.Context, ids []string) (map[string]bool, error) {
	kept := map[string]bool{}
	var ask []string
	for _, id := range ids {
		if _, ok := kept[id]; ok {
			continue
		}
		if !isHex(id) || len(id) < 3 {
			kept[id] = false
			continue
		}
		_, err := os.Stat(filepath.Join(s.gitDir, "objects", id[:2], id[2:]))
		kept[id] = err == nil
		if err != nil {
			ask = append(ask, id)
		}
	}
	if len(ask) > 0 {
		tree, err := s.trees(ctx, ask)
		if err != nil {
			return nil, err
		}
		for _, id := range ask {
			kept[id] = tree[id] != ""
		}
	}
	return kept, nil
}

// trees says, for each checkpoint in ids, the ID of its tree, "" when it
// is no longer kept (pruned, or not a checkpoint): one `cat-file
// --batch-check`. A pair of checkpoints DiffPairs can compare is a pair
// whose trees are both here.
func (s *Store) trees(ctx context.Context, ids []string) (map[string]string, error) {
	tree := map[string]string{}
	var ask []string
	for _, id := range ids {
		if _, ok := tree[id]; !ok {
			tree[id] = ""
			if isHex(id) {
				ask = append(ask, id)
			}
		}
	}
	if len(ask) == 0 {
		return tree, nil
	}
	var in strings.Builder
	for _, id := range ask {
		in.WriteString(id + "^{tree}\n")
	}
	res, err := s.git(ctx, []byte(in.String()), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("checkpoint trees: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(res), "\n"), "\n")
	if len(lines) != len(ask) {
		return nil, fmt.Errorf("checkpoint trees: %d answers to %d checkpoints", len(lines), len(ask))
	}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "tree" {
			tree[ask[i]] = f[0]
		}
	}
	return tree, nil
}

func isHex(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// opOf is the Change.Op for a diff-tree status letter.
func opOf(status string) string {
	switch status {
	case "A":
		return "create"
	case "D":
		return "delete"
	}
	return "modify"
}

// Differ says which paths a checkpoint holds otherwise than snap does:
// for each path in at, the checkpoint to compare it in (by ID). A path
// differs in content, mode or kind, or is in one and not the other. Its
// cost follows the number of paths and the size of the directories
// holding them, not what else differs between the checkpoints: one `cat-file
// --batch` reads each path's directory in both. A path whose checkpoint
// is gone (pruned) is in neither list but gone: nothing to compare with.
func (s *Store) Differ(ctx context.Context, snap Snapshot, at map[string]string) (differ, gone []string, err error) {
	// The directories to read, as "<checkpoint>:<dir>" (the root as
	// "<checkpoint>^{tree}"), and each checkpoint's commit ("<checkpoint>",
	// a few lines), which says whether it is kept: a kept commit keeps
	// its trees (pruning keeps what recent objects reach).
	var reqs []string
	asked := map[string]int{}
	ask := func(id, dir string) {
		r := reqOf(id, dir)
		if _, ok := asked[r]; !ok {
			asked[r] = len(reqs)
			reqs = append(reqs, r)
		}
	}
	type lookup struct{ path, id string }
	var looks []lookup
	odd := map[string][]string{} // paths a request line cannot carry, by checkpoint
	for p, id := range at {
		if strings.Contains(p, "\n") {
			odd[id] = append(odd[id], p)
			continue
		}
		ask(id, ".")
		ask(snap.ID, ".")
		ask(id, parentDir(p))
		ask(snap.ID, parentDir(p))
		looks = append(looks, lookup{p, id})
	}
	trees := make([]map[string]entry, len(reqs)) // nil: no such directory there
	kept := make([]bool, len(reqs))
	if len(reqs) > 0 {
		out, err := s.git(ctx, []byte(strings.Join(reqs, "\n")+"\n"), "cat-file", "--batch")
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint directories: %w", err)
		}
		r := bufio.NewReader(bytes.NewReader(out))
		for i := range reqs {
			head, err := r.ReadString('\n')
			if err != nil {
				return nil, nil, fmt.Errorf("checkpoint directories: %w", err)
			}
			// "<what was asked> missing": the name may hold spaces
			// ("id:my docs"); a found object's "<oid> <type> <size>"
			// never ends in that word.
			if strings.HasSuffix(strings.TrimRight(head, "\n"), " missing") {
				continue
			}
			f := strings.Fields(head)
			if len(f) != 3 {
				return nil, nil, fmt.Errorf("checkpoint directories: unexpected %q", head)
			}
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, nil, fmt.Errorf("checkpoint directories: unexpected %q", head)
			}
			body := make([]byte, n+1)
			if _, err := io.ReadFull(r, body); err != nil {
				return nil, nil, fmt.Errorf("checkpoint directories: %w", err)
			}
			kept[i] = true
			if f[1] != "tree" {
				continue // the commit, or a file where the path's directory would be
			}
			if trees[i], err = parseTree(body[:n]); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(looks) > 0 && !kept[asked[reqOf(snap.ID, ".")]] {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", short(snap.ID), ErrPruned)
	}
	for _, l := range looks {
		if !kept[asked[reqOf(l.id, ".")]] {
			gone = append(gone, l.path)
			continue
		}
		d, name := parentDir(l.path), path.Base(l.path)
		then, isThen := trees[asked[reqOf(l.id, d)]][name]
		now, isNow := trees[asked[reqOf(snap.ID, d)]][name]
		if isThen != isNow || then != now {
			differ = append(differ, l.path)
		}
	}
	// A path with a newline: the diff of its checkpoint and snap.
	var pairs []Pair
	var ids []string
	for id := range odd {
		pairs = append(pairs, Pair{From: id, To: snap.ID})
		ids = append(ids, id)
	}
	ds, err := s.DiffPairs(ctx, pairs)
	if err != nil {
		return nil, nil, err
	}
	for i, d := range ds {
		changed := map[string]bool{}
		for _, c := range d.Changes {
			changed[c.Path] = true
		}
		for _, p := range odd[ids[i]] {
			switch {
			case d.Err != nil:
				gone = append(gone, p)
			case changed[p]:
				differ = append(differ, p)
			}
		}
	}
	sort.Strings(differ)
	sort.Strings(gone)
	return differ, gone, nil
}

// reqOf is the `cat-file --batch` request for directory dir of
// checkpoint id ("" the root; "." the checkpoint's commit).
func reqOf(id, dir string) string {
	switch dir {
	case ".":
		return id
	case "":
		return id + "^{tree}"
	}
	return id + ":" + dir
}

// Changed lists the paths that differ between checkpoints from and to (by
// ID): the paths of Diff for their snapshots, or of DiffPairs for the
// pair (sorted). A call's checkpoints before and after are
// compared once, when the after one is taken, so that a rewind reads what
// each call changed from the session log rather than diffing every call
// again (rewind's known). When to is the snapshot the Store followed
// from from (the snapshot just before it), the paths are those it found
// rebuilding the trees on the way to the changes: no git. Otherwise it
// costs one `diff-tree` (none when the IDs are the same), which passes
// over a subtree both hold alike by its hash. An error wrapping ErrPruned
// says either checkpoint is gone.
func (s *Store) Changed(ctx context.Context, from, to string) ([]string, error) {
	if !isHex(from) || !isHex(to) {
		return nil, fmt.Errorf("checkpoint %s or %s: %w", short(from), short(to), ErrPruned)
	}
	if from == to {
		return []string{}, nil
	}
	s.mu.Lock()
	d := s.lastDiff
	s.mu.Unlock()
	if d.from == from && d.to == to {
		return slices.Clone(d.paths), nil
	}
	out, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s or %s: %w (%v)", short(from), short(to), ErrPruned, err)
	}
	paths := []string{}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, nil
}
