package shellfx

import (
	"regexp"
	"strings"
	"sync"
)

// FileOp is one file a diff or patch names, with what it does to it:
// Modify, Create, Delete, or Rename (Path to To).
type FileOp struct {
	Kind     Kind
	Path, To string
}

var (
	gitHeaderRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^diff --git ("?)a/(.+?)("?) ("?)b/(.+?)("?)\s*$`)
	})
	applyPatchRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\*\*\* (Update|Add|Delete) File: (.+?)\s*$`) })
	moveToRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\*\*\* Move to: (.+?)\s*$`) })
)

// DiffFiles lists the files a unified diff (git diff, git show, diff -u, a
// patch printed by a submit step) or a Codex apply_patch envelope touches,
// in order, each once. Git's a/ and b/ prefixes are removed.
func DiffFiles(text string) []FileOp {
	var out []FileOp
	seen := map[string]bool{}
	add := func(op FileOp) {
		key := op.Path + "\x00" + op.To
		if op.Path == "" || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, op)
	}
	if strings.Contains(text, "*** Begin Patch") || applyPatchRe().MatchString(text) {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			m := applyPatchRe().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			op := FileOp{Path: m[2]}
			switch m[1] {
			case "Add":
				op.Kind = Create
			case "Delete":
				op.Kind = Delete
			default:
				op.Kind = Modify
				if i+1 < len(lines) {
					if mv := moveToRe().FindStringSubmatch(lines[i+1]); mv != nil {
						op.Kind, op.To = Rename, mv[1]
					}
				}
			}
			add(op)
		}
		if len(out) > 0 {
			return out
		}
	}
	if !strings.Contains(text, "\n+++ ") && !strings.HasPrefix(text, "+++ ") && !strings.Contains(text, "diff --git ") {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := gitHeaderRe().FindStringSubmatch(l); m != nil {
			// A git section: its own headers say new, deleted, renamed.
			a, b := unquote(m[2]), unquote(m[5])
			op := FileOp{Kind: Modify, Path: b}
			for j := i + 1; j < len(lines) && j < i+8; j++ {
				h := lines[j]
				switch {
				case strings.HasPrefix(h, "new file mode"):
					op.Kind = Create
				case strings.HasPrefix(h, "deleted file mode"):
					op.Kind, op.Path = Delete, a
				case strings.HasPrefix(h, "rename from "):
					op.Kind, op.Path, op.To = Rename, a, b
				case strings.HasPrefix(h, "@@"), strings.HasPrefix(h, "diff --git "):
					j = len(lines)
				}
			}
			add(op)
			// Skip this section's ---/+++ lines.
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "@@") && !strings.HasPrefix(lines[i+1], "diff --git ") {
				i++
			}
			continue
		}
		if !strings.HasPrefix(l, "--- ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			continue
		}
		from, to := headerPath(l[4:]), headerPath(lines[i+1][4:])
		i++
		if (strings.HasPrefix(from, "a/") || from == "/dev/null") && (strings.HasPrefix(to, "b/") || to == "/dev/null") {
			from, to = strings.TrimPrefix(from, "a/"), strings.TrimPrefix(to, "b/")
		}
		switch {
		case from == "/dev/null":
			add(FileOp{Kind: Create, Path: to})
		case to == "/dev/null":
			add(FileOp{Kind: Delete, Path: from})
		default:
			add(FileOp{Kind: Modify, Path: to})
		}
	}
	return out
}

// headerPath is the path of a ---/+++ line, without the timestamp diff -u
// puts after a tab.
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return unquote(strings.TrimSpace(s))
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `\"`, `"`)
	}
	return s
}
