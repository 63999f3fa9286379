package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// target is a path argument after resolution.
type target struct {
	abs     string // absolute, cleaned, symlinks resolved along the longest existing prefix
	display string // how results name it: relative to WorkDir when inside, else abs
	outside bool   // abs is not WorkDir or below it, or is private
	// privateTo is the gencode directory (Options.Private) abs is in; ""
	// for none.
	privateTo string
	// gitDir is the git directory an inside abs is in ("" for none): a
	// Write or Edit there is treated as one outside WorkDir (see
	// gitGuard).
	gitDir string
}

// private returns the directory of Options.Private that abs (absolute,
// clean, symlinks resolved) is, or is beneath; "" for none.
func (s *Set) private(abs string) string {
	for _, d := range s.privDirs {
		if within(d, abs) {
			return d
		}
	}
	return ""
}

// refusePrivate is the result of a Write or Edit into one of gencode's
// own directories: refused, whatever the permissions, since a permission
// rule or a config written there would grant the model what the user
// did not.
func refusePrivate(tool string, t target) output {
	msg := fmt.Sprintf("permission denied: %s %s is refused: it is in gencode's own directory %s (settings, permission rules, sessions, logs), which only the user changes, outside gencode. Do not retry; tell the user what to change", tool, t.display, t.privateTo)
	return denied(msg, Meta{})
}

// writeGuard is why a Write or Edit of t is treated as one outside the
// working directory although t is inside it (Request.Guard); "" when it
// is not.
func (t target) writeGuard() string {
	if t.outside || t.gitDir == "" {
		return ""
	}
	return gitGuard
}

// resolve turns a path argument into a target: relative paths are joined to
// WorkDir, "~" is the home directory, and every symlink along the existing
// part of the path is followed (a dangling one too, so that a link pointing
// out is caught even when its target does not exist yet).
func (s *Set) resolve(p string) (target, error) {
	if strings.TrimSpace(p) == "" {
		return target{}, errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return target{}, errors.New("path contains a NUL byte")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return target{}, fmt.Errorf("expand ~: %w", err)
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = s.workDir + string(filepath.Separator) + p
	}
	// Symlinks are followed before ".." is applied, as the kernel does:
	// cleaning first would turn linkdir/../x into x.
	abs, err := evalSymlinksPrefix(p)
	if err != nil {
		return target{}, err
	}
	t := target{abs: abs, display: abs, outside: !within(s.workDir, abs)}
	if t.privateTo = s.private(abs); t.privateTo != "" {
		t.outside = true // outside every project, also beneath WorkDir
	}
	if t.outside {
		return t, nil
	}
	t.gitDir = s.gitDirOf(p, abs)
	// Name the path as the model wrote it (relative when it is inside), so
	// that results match its arguments; abs is what is touched. A ".."
	// may undo a symlink, so such a path is named by where it leads.
	t.display, _ = relInside(s.workDir, abs)
	if !slices.Contains(splitPath(p), "..") {
		if rel, ok := relInside(s.workDir, filepath.Clean(p)); ok {
			t.display = rel
		}
	}
	return t, nil
}

// resolveArg resolves the path argument arg of tool, or returns the
// failure to report.
func (s *Set) resolveArg(tool, arg, p string) (target, *output) {
	if strings.TrimSpace(p) == "" {
		o := failf("invalid arguments for %s: %s is empty", tool, arg)
		return target{}, &o
	}
	t, err := s.resolve(p)
	if err != nil {
		o := failf("%s %s: %v", tool, p, err)
		return target{}, &o
	}
	return t, nil
}

// displayPath names an absolute path found while walking (Glob, Grep, LS).
func (s *Set) displayPath(abs string) string {
	if rel, ok := relInside(s.workDir, abs); ok {
		return rel
	}
	return abs
}

// within reports whether p is root or below it. Both must be clean and absolute.
func within(root, p string) bool {
	_, ok := relInside(root, p)
	return ok
}

func relInside(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// maxSymlinkHops bounds symlink chains, as the kernel's ELOOP does.
const maxSymlinkHops = 40

// evalSymlinksPrefix resolves the symlinks of the longest existing prefix
// of the clean absolute path p and appends the rest unchanged. Unlike
// filepath.EvalSymlinks it succeeds for paths that do not exist yet, and it
// follows a dangling symlink to where it would create the file.
func evalSymlinksPrefix(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	rest := splitPath(p[len(vol):])
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		missing := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		if err != nil && !missing {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if missing || !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
			if !slices.Contains(rest, "..") {
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			// A later ".." leads back to existing directories whose
			// symlinks must still be followed.
			resolved = next
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			hops++
			if hops > maxSymlinkHops {
				return "", fmt.Errorf("resolve %s: too many levels of symbolic links", p)
			}
			link, err := os.Readlink(next)
			if err != nil {
				return "", fmt.Errorf("resolve %s: %w", p, err)
			}
			if filepath.IsAbs(link) {
				lv := filepath.VolumeName(link)
				resolved = lv + string(filepath.Separator)
				link = link[len(lv):]
			}
			rest = append(splitPath(link), rest...)
			continue
		}
		resolved = next
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}
