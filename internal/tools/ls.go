package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

const (
	lsDescription = "List a directory as an indented tree; directories end with /. Shows at most 200 entries, breadth first, then says what was left out; .git and node_modules are not expanded; entries ignored by .gitignore are left out. path default: the working directory."
	lsSchema      = `{"type":"object","properties":{"path":{"type":"string"}}}`

	lsMaxEntries = 200
)

type lsArgs struct {
	Path string `json:"path"`
}

type lsNode struct {
	name     string
	rel      string // slash-separated, below the listed directory
	dir      bool
	link     string // symlink target
	skipped  bool   // a dir LS does not expand
	listed   bool   // its entries were read
	err      error
	hidden   int // entries not shown for lack of room
	children []*lsNode
}

func runLS(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a lsArgs
	if msg, ok := decodeArgs(ToolLS, raw, &a); !ok {
		return failf("%s", msg)
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	t, bad := s.resolveArg(ToolLS, "path", p)
	if bad != nil {
		return *bad
	}
	if d := s.authorize(ctx, Request{Tool: ToolLS, Summary: t.display, Args: string(raw), Path: t.abs, OutsideWorkDir: t.outside}); d != nil {
		return d.output(Meta{})
	}
	dir, fi, err := s.openRoot(t)
	switch {
	case errors.Is(err, errNotDir):
		return output{text: fmt.Sprintf("%s is a file (%s); use Read to see it", t.display, termtext.Size(fi.Size()))}
	case err != nil:
		return fileError(t.display, err)
	}
	defer dir.Close()
	fsys := dir.FS()

	ig := s.newIgnorer(t)
	root := &lsNode{name: t.abs, rel: ".", dir: true}
	queue := []*lsNode{root}
	shown := 0
	for len(queue) > 0 && shown < lsMaxEntries {
		if ctx.Err() != nil {
			return failf("LS canceled: %v", ctx.Err())
		}
		n := queue[0]
		queue = queue[1:]
		ig.enter(dir, n.rel)
		entries, err := fs.ReadDir(fsys, n.rel)
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return ig.ignored(path.Join(n.rel, e.Name()), e.IsDir()) })
		n.listed, n.err = true, err
		for i, e := range entries {
			if shown == lsMaxEntries {
				n.hidden = len(entries) - i
				break
			}
			shown++
			c := &lsNode{name: e.Name(), rel: path.Join(n.rel, e.Name()), dir: e.IsDir()}
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				c.link, _ = fs.ReadLink(fsys, c.rel)
			case c.dir && skippedDir(c.name):
				c.skipped = true
			case c.dir:
				queue = append(queue, c)
			}
			n.children = append(n.children, c)
		}
	}

	var b strings.Builder
	hidden, unexpanded := 0, 0
	var walk func(n *lsNode, depth int)
	walk = func(n *lsNode, depth int) {
		indent := strings.Repeat("  ", depth)
		switch {
		case n.link != "":
			fmt.Fprintf(&b, "%s%s -> %s\n", indent, n.name, n.link)
		case !n.dir:
			fmt.Fprintf(&b, "%s%s\n", indent, n.name)
		case n.skipped:
			fmt.Fprintf(&b, "%s%s/ (not expanded)\n", indent, n.name)
		case !n.listed:
			unexpanded++
			fmt.Fprintf(&b, "%s%s/ …\n", indent, n.name)
		case n.err != nil:
			fmt.Fprintf(&b, "%s%s/ (unreadable: %v)\n", indent, n.name, unwrapPath(n.err))
		case depth > 0 && len(n.children) == 0 && n.hidden == 0:
			fmt.Fprintf(&b, "%s%s/ (empty)\n", indent, n.name)
		default:
			fmt.Fprintf(&b, "%s%s/\n", indent, strings.TrimSuffix(n.name, "/"))
		}
		for _, c := range n.children {
			walk(c, depth+1)
		}
		if n.hidden > 0 {
			fmt.Fprintf(&b, "%s  … %d more\n", indent, n.hidden)
		}
		hidden += n.hidden
	}
	walk(root, 0)
	if hidden > 0 || unexpanded > 0 {
		fmt.Fprintf(&b, "[capped at %d entries: %d more entries in listed directories, %d directories (…) not listed; LS a subdirectory to see more]\n", lsMaxEntries, hidden, unexpanded)
	} else if shown == 0 {
		b.WriteString("(empty directory)\n")
	}
	if ig.skipped > 0 {
		fmt.Fprintf(&b, "[%d ignored by .gitignore not shown]", ig.skipped)
	}
	return output{text: strings.TrimSuffix(b.String(), "\n")}
}
