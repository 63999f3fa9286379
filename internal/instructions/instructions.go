// Package instructions finds the user's standing instructions for a
// project: the AGENTS.md files (the cross-tool convention; CLAUDE.md where a
// directory has no AGENTS.md) from the git root down to the working
// directory, and a user-level AGENTS.md in gencode's config directory. It
// reads them once and renders them as one block for the system prompt.
package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds what is read of all instruction files together (as
// Codex CLI's project_doc_max_bytes does): they are sent with every
// request. A file past the bound is cut there, and the cut is said both
// to the model and to the user.
const MaxBytes = 32 << 10

// Names are the file names looked for in each directory, in order of
// preference: the first one present is read, the others are not.
var Names = []string{"AGENTS.md", "CLAUDE.md"}

// File is one instruction file as read.
type File struct {
	// Path is the file's absolute path; Shown is how the prompt and the
	// front ends name it: relative to the git root (or to the working
	// directory outside a repository), the user's file by its path.
	Path, Shown string
	// User marks the user-level file of the config directory.
	User bool
	// Content is what was read, valid UTF-8, at most the share of
	// MaxBytes left when the file was reached.
	Content string
	// Size is the file's size on disk; Cut says Content holds less.
	Size int64
	Cut  bool
}

// Set is the instructions of one working directory.
type Set struct {
	// Files are in prompt order: the user's first, then from the git root
	// down to the working directory (the most specific last).
	Files []File
	// Problems are files that exist but could not be read, and cuts, said
	// for the user; the files that could be read are still used.
	Problems []string
}

// Load reads the instruction files for workDir. configDir is gencode's
// config directory ($XDG_CONFIG_HOME/gencode), "" for none. Without a git
// repository only workDir itself is looked at. A missing file is not a
// problem; one that cannot be read is reported in Problems and skipped.
func Load(workDir, configDir string) Set {
	var s Set
	left := MaxBytes
	add := func(dir string, user bool, shown func(string) string) {
		if left <= 0 {
			// Even an empty budget notes a file it leaves out.
			if p, ok := find(dir); ok {
				s.Problems = append(s.Problems, fmt.Sprintf("%s left out: the instruction files before it already take the %d KB gencode reads", shown(p), MaxBytes>>10))
			}
			return
		}
		p, ok := find(dir)
		if !ok {
			return
		}
		f, err := read(p, left)
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("%s not read: %v", shown(p), err))
			return
		}
		f.User, f.Shown = user, shown(p)
		left -= len(f.Content)
		if f.Cut {
			left = 0 // the budget is spent: what follows is left out
			s.Problems = append(s.Problems, fmt.Sprintf("%s is %s; only its first %s are used (gencode reads at most %d KB of instructions: shorten it)",
				f.Shown, kb(f.Size), kb(int64(len(f.Content))), MaxBytes>>10))
		}
		s.Files = append(s.Files, f)
	}
	if configDir != "" {
		// The user-level file has no CLAUDE.md fallback: Claude Code's
		// user file lives elsewhere (~/.claude).
		if p := filepath.Join(configDir, Names[0]); isFile(p) {
			add(configDir, true, func(p string) string { return p })
		}
	}
	root := gitRoot(workDir)
	dirs := []string{workDir}
	if root != "" {
		dirs = between(root, workDir)
	} else {
		root = workDir
	}
	for _, d := range dirs {
		add(d, false, func(p string) string {
			if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
			return p
		})
	}
	return s
}

// Bytes is the size of what was read of every file.
func (s Set) Bytes() int {
	n := 0
	for _, f := range s.Files {
		n += len(f.Content)
	}
	return n
}

// Header starts the block Render writes.
const Header = "# Instructions from the user and the project"

// Render is the block the system prompt carries: each file's content
// under its name, the user's first. "" when there are none. It depends
// only on what was read, so that the prompt stays byte-identical.
func (s Set) Render() string {
	if len(s.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(Header + "\n")
	b.WriteString("The user wrote these instructions for working in this project (AGENTS.md files; the later, more specific ones win where they differ). Follow them unless the user says otherwise in the conversation.\n")
	for _, f := range s.Files {
		who := "project"
		if f.User {
			who = "user, all projects"
		}
		fmt.Fprintf(&b, "\n## %s (%s)\n", f.Shown, who)
		b.WriteString(strings.TrimRight(f.Content, "\n"))
		b.WriteString("\n")
		if f.Cut {
			fmt.Fprintf(&b, "[... cut here: the file is %s and gencode reads at most %d KB of instructions]\n", kb(f.Size), MaxBytes>>10)
		}
	}
	return b.String()
}

// find returns the instruction file of dir: AGENTS.md, else CLAUDE.md.
func find(dir string) (string, bool) {
	for _, n := range Names {
		if p := filepath.Join(dir, n); isFile(p) {
			return p, true
		}
	}
	return "", false
}

// isFile reports whether p is a regular file (after symlinks): a FIFO or a
// device named AGENTS.md is never opened.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// read reads at most limit bytes of p, cut at a line end (or a rune) and
// made valid UTF-8.
func read(p string, limit int) (File, error) {
	f, err := os.Open(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said by the caller
		}
		return File{}, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return File{}, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return File{}, fmt.Errorf("read: %w", err)
	}
	out := File{Path: p, Size: max(fi.Size(), int64(len(b)))}
	if len(b) > limit {
		out.Cut = true
		b = b[:limit]
		if i := strings.LastIndexByte(string(b), '\n'); i > limit/2 {
			b = b[:i+1]
		}
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1] // a rune cut in half
		}
	}
	out.Content = strings.ToValidUTF8(string(b), "\uFFFD")
	return out, nil
}

// gitRoot is the nearest directory at or above dir holding .git (a
// directory, or a file in a worktree or submodule); "" when there is none.
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// between lists root and every directory under it down to dir, in order.
func between(root, dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func kb(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}
