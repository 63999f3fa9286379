// Package permstore keeps the permission rules a user saved for a project
// with "always for this project" in the permission dialog: one TOML file
// per project (the working directory), in the config directory under
// projects/<name>-<hash>/permissions.toml, 0600 in 0700 directories. It is
// the tools' ProjectRules: the file is read again whenever it changed, so
// a rule saved or revoked by another gencode counts at once. A file that
// cannot be read or parsed applies no rule and is never written over;
// its error says where it is and how to fix it.
package permstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/gencode/gencode/internal/tools"
)

// FileName is the name of a project's rules file.
const FileName = "permissions.toml"

// header opens every file the store writes.
const header = `# Permission rules saved with "always for this project" in gencode's
# permission dialog. /permissions lists them; /permissions revoke N
# removes one. A Bash rule allows exactly its command (exact = true), or,
# for a command that only reads or tests (cat, grep, ls, go test, git log
# ...), that command followed by paths inside the project and no options.
# A Write or Edit rule allows the tool inside the project. A rule the
# dialog would not save (a shell, an interpreter widened, a path outside
# the project) is ignored, and gencode says which.
`

// Store is one project's saved rules. It is safe for concurrent use.
type Store struct {
	path    string
	project string

	mu sync.Mutex
	// The file as last read: its identity, what it held, and the rules
	// of it that are ignored.
	seen    os.FileInfo
	rules   []tools.Rule
	ignored error
	readErr error
	// saveErr is the last Add's failure, kept for Problem (the tools
	// cannot show it).
	saveErr error
}

// file is the TOML document.
type file struct {
	Project string     `toml:"project"`
	Rules   []fileRule `toml:"rule"`
}

type fileRule struct {
	Tool    string   `toml:"tool"`
	Command []string `toml:"command,omitempty"`
	Exact   bool     `toml:"exact,omitempty"`
}

// Open returns the store of project (an absolute directory) under
// configDir. It reads nothing yet: a missing file is no rules.
func Open(configDir, project string) *Store {
	return &Store{path: Path(configDir, project), project: project}
}

// Path is where the rules of project live under configDir: a directory
// named after the project's base name and a hash of its whole path.
func Path(configDir, project string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(project)))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(project))
	if len(base) > 40 {
		base = base[:40]
	}
	if base == "" || base == "." || base == ".." || base == "_" {
		base = "root"
	}
	return filepath.Join(configDir, "projects", base+"-"+hex.EncodeToString(sum[:8]), FileName)
}

// Path is the rules file.
func (s *Store) Path() string { return s.path }

// Project is the project directory the rules are for.
func (s *Store) Project() string { return s.project }

// Rules returns the saved rules that apply, in the order they were
// saved. A missing file is none; a broken one is an error naming the file
// and the line. A rule the dialog would not have saved (tools.Rule's
// Validate) is left out, and Problem says which and why.
func (s *Store) Rules() ([]tools.Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return append([]tools.Rule(nil), s.rules...), s.readErr
}

// Problem is what keeps the rules from working as saved: the file's read
// error, else the rules of it that are ignored (an *IgnoredError) and
// the last rule that could not be saved. nil: none.
func (s *Store) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	if s.readErr != nil {
		return s.readErr
	}
	return errors.Join(s.ignored, s.saveErr)
}

// refresh reads the file again when it changed since it was last read.
func (s *Store) refresh() {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.seen, s.rules, s.ignored, s.readErr = nil, nil, nil, nil
		return
	}
	if err == nil && s.seen != nil && os.SameFile(fi, s.seen) && fi.ModTime().Equal(s.seen.ModTime()) && fi.Size() == s.seen.Size() {
		return
	}
	s.seen = nil
	entries, readErr := s.read()
	s.rules, s.ignored, s.readErr = applying(entries), s.ignoredError(entries), readErr
	if s.readErr == nil && err == nil {
		s.seen = fi
	}
}

// entry is one rule of the file: what it says, the line its table
// starts on (0: unknown), and why it is ignored (nil: it applies).
type entry struct {
	raw    fileRule
	rule   tools.Rule
	line   int
	reason error
}

// read parses the file; a missing one is no rules. Each rule is checked
// as the dialog checks the rule it saves; one that fails is kept (it is
// written back as it was) but ignored.
func (s *Store) read() ([]entry, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the project's permission rules: %w", err)
	}
	var f file
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, s.broken(err)
	}
	lines := ruleLines(data)
	if len(lines) != len(f.Rules) {
		lines = nil // rules not written as [[rule]] tables: say their number
	}
	out := make([]entry, len(f.Rules))
	for i, fr := range f.Rules {
		e := entry{raw: fr, rule: tools.Rule{Tool: fr.Tool, Command: fr.Command, Exact: fr.Exact}}
		if lines != nil {
			e.line = lines[i]
		}
		e.reason = e.rule.Validate(s.project)
		out[i] = e
	}
	return out, nil
}

// ruleLines are the lines (1-based) on which the file's [[rule]] tables
// start, in order.
func ruleLines(data []byte) []int {
	var out []int
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.NewReplacer(" ", "", "\t", "").Replace(l)
		if strings.HasPrefix(l, "[[rule]]") {
			out = append(out, i+1)
		}
	}
	return out
}

// applying are the rules of entries that are not ignored.
func applying(entries []entry) []tools.Rule {
	var out []tools.Rule
	for _, e := range entries {
		if e.reason == nil {
			out = append(out, e.rule)
		}
	}
	return out
}

// IgnoredError names the rules of a file that are ignored, and why: a
// hand-edited rule the permission dialog would never have saved (a
// shell or an interpreter, a path outside the project, a command
// widened that is only ever saved exactly). The other rules apply.
type IgnoredError struct {
	Path  string
	Rules []IgnoredRule
}

// IgnoredRule is one ignored rule: its line (0: unknown), its number in
// the file (1-based), and why.
type IgnoredRule struct {
	Line, N int
	Reason  error
}

func (e *IgnoredError) Error() string {
	parts := make([]string, len(e.Rules))
	for i, r := range e.Rules {
		at := fmt.Sprintf("%s:%d", e.Path, r.Line)
		if r.Line == 0 {
			at = fmt.Sprintf("%s rule %d", e.Path, r.N)
		}
		parts[i] = fmt.Sprintf("%s: ignored: %v", at, r.Reason)
	}
	return "project permission rules " + strings.Join(parts, "; ") + " (the other rules apply; fix or remove the line)"
}

// ignoredError is the IgnoredError of entries, nil when every rule applies.
func (s *Store) ignoredError(entries []entry) error {
	var bad []IgnoredRule
	for i, e := range entries {
		if e.reason != nil {
			bad = append(bad, IgnoredRule{Line: e.line, N: i + 1, Reason: e.reason})
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &IgnoredError{Path: s.path, Rules: bad}
}

// BrokenError is a rules file that does not parse: no rule of it applies
// until it is fixed or removed, and nothing is saved over it.
type BrokenError struct {
	Path string
	Line int // 0: unknown
	Msg  string
	Err  error
}

func (e *BrokenError) Error() string {
	at := e.Path
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	return fmt.Sprintf("project permission rules %s: %s (no saved rule applies until the file is fixed or removed)", at, e.Msg)
}

func (e *BrokenError) Unwrap() error { return e.Err }

func (s *Store) broken(err error) error {
	var (
		strict *toml.StrictMissingError
		de     *toml.DecodeError
	)
	switch {
	case errors.As(err, &strict) && len(strict.Errors) > 0:
		line, _ := strict.Errors[0].Position()
		return &BrokenError{Path: s.path, Line: line, Msg: "unknown key " + strings.Join(strict.Errors[0].Key(), "."), Err: err}
	case errors.As(err, &de):
		line, _ := de.Position()
		return &BrokenError{Path: s.path, Line: line, Msg: strings.TrimPrefix(de.Error(), "toml: "), Err: err}
	}
	return &BrokenError{Path: s.path, Msg: strings.TrimPrefix(err.Error(), "toml: "), Err: err}
}

// Add saves r, unless an equal rule is saved already. The file is read
// afresh first (another gencode may have changed it) and replaced whole;
// a broken file is left as it is and Add fails.
func (s *Store) Add(r tools.Rule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.add(r)
	s.saveErr = err
	return err
}

func (s *Store) add(r tools.Rule) error {
	if err := r.Validate(s.project); err != nil {
		return fmt.Errorf("save permission rule: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return fmt.Errorf("save permission rule %s: %w", r, err)
	}
	defer unlock()
	entries, err := s.read()
	if err != nil {
		return fmt.Errorf("save permission rule %s: %w", r, err)
	}
	for _, have := range applying(entries) {
		if have.Equal(r) {
			return nil
		}
	}
	entries = append(entries, entry{raw: fileRule{Tool: r.Tool, Command: r.Command, Exact: r.Exact}, rule: r})
	if err := s.write(entries); err != nil {
		return fmt.Errorf("save permission rule %s: %w", r, err)
	}
	return nil
}

// Revoke removes rule n (1-based, as Rules lists them) and returns it.
func (s *Store) Revoke(n int) (tools.Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return tools.Rule{}, fmt.Errorf("revoke permission rule %d: %w", n, err)
	}
	defer unlock()
	entries, err := s.read()
	if err != nil {
		return tools.Rule{}, fmt.Errorf("revoke permission rule %d: %w", n, err)
	}
	// n counts the rules that apply, as Rules lists them.
	at, count := -1, 0
	for i, e := range entries {
		if e.reason == nil {
			if count++; count == n {
				at = i
			}
		}
	}
	if at < 0 {
		return tools.Rule{}, fmt.Errorf("revoke permission rule %d: %w", n, &RangeError{N: n, Count: count})
	}
	gone := entries[at].rule
	if err := s.write(append(entries[:at:at], entries[at+1:]...)); err != nil {
		return tools.Rule{}, fmt.Errorf("revoke permission rule %d: %w", n, err)
	}
	s.saveErr = nil
	return gone, nil
}

// RangeError is a rule number that is not in the list.
type RangeError struct{ N, Count int }

func (e *RangeError) Error() string {
	if e.Count == 0 {
		return "no rules are saved for this project"
	}
	return fmt.Sprintf("no rule %d: the rules are numbered 1 to %d", e.N, e.Count)
}

// lock makes a change of the file one gencode's at a time: a change reads
// the rules, adds or removes one and renames a new file over the old, so
// two at once would each drop what the other saved. The lock is an
// exclusive lock on a file beside the rules, released by unlock.
func (s *Store) lock() (unlock func(), err error) {
	dir := filepath.Dir(s.path)
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", s.path, err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", s.path, err)
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}

// makeDir makes the project's directory, private to the user.
func (s *Store) makeDir() error {
	dir := filepath.Dir(s.path)
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("make %s: %w", d, err)
		}
	}
	return nil
}

// write replaces the file with entries, the ignored ones as they were
// read: a new file renamed over the old, so a reader never sees half of
// it. It runs under lock, which made the directory.
func (s *Store) write(entries []entry) error {
	f := file{Project: s.project, Rules: make([]fileRule, len(entries))}
	for i, e := range entries {
		f.Rules[i] = e.raw
	}
	if err := writeTOML(s.path, header, f); err != nil {
		return err
	}
	s.seen = nil // read again next time
	return nil
}
