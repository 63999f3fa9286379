package tools

import (
	"context"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/gencode/gencode/internal/termtext"
)

// FuzzRun feeds arbitrary arguments to every tool. With the print-mode
// defaults Write, Edit and Bash are denied after their arguments are
// checked, so fuzzing never runs commands or writes files. Whatever the
// input, Run returns a sanitized result and does not panic.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"file_path": null}`, `{"file_path": 1}`,
		`{"file_path": "a.txt", "offset": 1e308, "limit": -1e308}`,
		`{"file_path": "../../etc/passwd"}`, `{"file_path": "\u0000"}`,
		`{"pattern": "**/*", "path": "/"}`, `{"pattern": "(", "include": "[["}`,
		`{"path": "~"}`, `{"command": "rm -rf /", "timeout": "9e9"}`,
		`{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "maybe"}`,
	} {
		for _, name := range Names() {
			f.Add(name, seed)
		}
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		dir := t.TempDir()
		s := New(Options{WorkDir: dir})
		writeFile(t, filepath.Join(dir, "a.txt"), "a\nb\n")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := s.Run(ctx, Call{Name: name, Arguments: args})
		if !utf8.ValidString(r.Content) || termtext.Sanitize(r.Content) != r.Content {
			t.Fatalf("Run(%q, %q) content not sanitized: %q", name, args, r.Content)
		}
		if r.Content == "" {
			t.Fatalf("Run(%q, %q) returned no content", name, args)
		}
		if (name == ToolWrite || name == ToolEdit || name == ToolBash) && !r.IsError {
			t.Fatalf("Run(%q, %q) ran without permission: %q", name, args, r.Content)
		}
	})
}
