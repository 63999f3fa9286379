package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEdit(t *testing.T) {
	t.Parallel()
	const src = "package main\n\nfunc a() {\n\treturn\n}\n\nfunc b() {\n\treturn\n}\n"
	tests := []struct {
		name     string
		file     string // content before; "" means the file does not exist
		args     map[string]any
		want     string // file content after
		wantText string
		wantErr  string
	}{
		{
			name: "single replacement",
			file: src,
			args: map[string]any{"old_string": "func a() {\n\treturn\n}", "new_string": "func a() {\n\tprintln(\"a\")\n\treturn\n}"},
			want: "package main\n\nfunc a() {\n\tprintln(\"a\")\n\treturn\n}\n\nfunc b() {\n\treturn\n}\n",
			wantText: "Edited f.go: replaced 1 occurrence at line 3 (3 lines -> 4 lines).\n" +
				"     1\tpackage main\n     2\t\n     3\tfunc a() {\n     4\t\tprintln(\"a\")\n     5\t\treturn\n     6\t}\n     7\t\n     8\tfunc b() {",
		},
		{
			name:    "not found",
			file:    src,
			args:    map[string]any{"old_string": "func c()", "new_string": "func d()"},
			want:    src,
			wantErr: "old_string not found in f.go; it must match exactly",
		},
		{
			name:    "whitespace must match",
			file:    src,
			args:    map[string]any{"old_string": "func a() {\n    return", "new_string": "x"},
			want:    src,
			wantErr: "old_string not found in f.go",
		},
		{
			name:    "ambiguous",
			file:    src,
			args:    map[string]any{"old_string": "\treturn\n", "new_string": "\treturn nil\n"},
			want:    src,
			wantErr: "old_string found 2 times in f.go; add context or set replace_all",
		},
		{
			name:     "replace_all",
			file:     src,
			args:     map[string]any{"old_string": "\treturn\n", "new_string": "\treturn nil\n", "replace_all": true},
			want:     "package main\n\nfunc a() {\n\treturn nil\n}\n\nfunc b() {\n\treturn nil\n}\n",
			wantText: "Edited f.go: replaced 2 occurrences at lines 4, 8 (1 line -> 1 line each).\n     2\t\n     3\tfunc a() {\n     4\t\treturn nil\n     5\t}\n     6\t\n     7\tfunc b() {\n     8\t\treturn nil\n     9\t}",
		},
		{
			name:     "delete text",
			file:     "a\nb\nc\n",
			args:     map[string]any{"old_string": "b\n", "new_string": ""},
			want:     "a\nc\n",
			wantText: "Edited f.go: replaced 1 occurrence at line 2 (1 line -> 0 lines).\n     1\ta\n     2\tc",
		},
		{
			name:     "crlf file",
			file:     "one\r\ntwo\r\nthree\r\n",
			args:     map[string]any{"old_string": "one\ntwo", "new_string": "1\n2"},
			want:     "1\r\n2\r\nthree\r\n",
			wantText: "Edited f.go: replaced 1 occurrence at line 1",
		},
		{
			name:    "identical strings",
			file:    src,
			args:    map[string]any{"old_string": "func a", "new_string": "func a"},
			want:    src,
			wantErr: "old_string and new_string are identical; nothing to change",
		},
		{
			name:    "empty old_string",
			file:    src,
			args:    map[string]any{"old_string": "", "new_string": "x"},
			want:    src,
			wantErr: "old_string is empty; to create a file use Write",
		},
		{
			name:    "missing file",
			args:    map[string]any{"old_string": "a", "new_string": "b"},
			wantErr: "f.go does not exist; use Write to create it",
		},
		{
			name:    "binary file",
			file:    "a\x00b",
			args:    map[string]any{"old_string": "a", "new_string": "c"},
			want:    "a\x00b",
			wantErr: "f.go is a binary file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, dir := yoloSet(t)
			path := filepath.Join(dir, "f.go")
			if tt.file != "" {
				writeFile(t, path, tt.file)
			}
			tt.args["file_path"] = "f.go"
			r := run(t, s, ToolEdit, tt.args)
			if tt.wantErr != "" {
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, tt.wantErr)
			} else {
				require.False(t, r.IsError, r.Content)
				assert.Contains(t, r.Content, tt.wantText)
				assert.Contains(t, r.Meta.Diff, "+++ b/f.go", "the change made")
				r.Meta.Diff = ""
				assert.Equal(t, Meta{Tool: ToolEdit, FilePath: "f.go", Success: true}, r.Meta)
			}
			if tt.file == "" {
				return
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got), "file after Edit(%v)", tt.args)
		})
	}
}

// The user sees a diff before approving; if the file changes while the
// dialog is open, the edit is not applied on top of the new content.
func TestEditAsksWithDiffAndDetectsChanges(t *testing.T) {
	t.Parallel()
	asker := &fakeAsker{decision: AllowOnce}
	s, dir := newTestSet(t, Options{Asker: asker})
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "a\nb\nc\n")

	r := run(t, s, ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "b", "new_string": "B"})
	require.False(t, r.IsError, r.Content)
	reqs := asker.asked()
	require.Len(t, reqs, 1)
	assert.Equal(t, Request{
		Tool:    ToolEdit,
		Summary: "f.txt",
		Args:    `{"file_path":"f.txt","new_string":"B","old_string":"b"}`,
		Path:    path,
		Diff:    "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
	}, reqs[0])

	changing := &changingAsker{path: path}
	s2 := New(Options{WorkDir: dir, Asker: changing})
	r = run(t, s2, ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "B", "new_string": "b"})
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "f.txt changed while waiting for approval")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "changed by the user\nB\n", string(got))
}

// changingAsker edits the file while "the dialog is open", then allows.
type changingAsker struct{ path string }

func (c *changingAsker) Ask(context.Context, Request) (Decision, error) {
	if err := os.WriteFile(c.path, []byte("changed by the user\nB\n"), 0o644); err != nil {
		return Deny, err
	}
	return AllowOnce, nil
}

// TestChangesCarryTheirDiff: a Write or Edit that happened reports the
// change it made (the transcript shows it, as the dialog did); one that
// was refused or failed reports none.
func TestChangesCarryTheirDiff(t *testing.T) {
	t.Parallel()
	asker := &fakeAsker{decision: AllowOnce}
	s, dir := newTestSet(t, Options{Asker: asker})
	writeFile(t, filepath.Join(dir, "f.txt"), "a\nb\nc\n")

	r := run(t, s, ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "b", "new_string": "B"})
	require.False(t, r.IsError, r.Content)
	assert.Equal(t, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", r.Meta.Diff)
	r = run(t, s, ToolWrite, map[string]any{"file_path": "new.txt", "content": "x\ny\n"})
	require.False(t, r.IsError, r.Content)
	assert.Equal(t, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n", r.Meta.Diff)
	r = run(t, s, ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "nowhere", "new_string": "B"})
	require.True(t, r.IsError)
	assert.Empty(t, r.Meta.Diff)

	denied, _ := newTestSet(t, Options{Asker: &fakeAsker{decision: Deny}})
	r = run(t, denied, ToolWrite, map[string]any{"file_path": "new.txt", "content": "x\n"})
	require.True(t, r.Denied)
	assert.Empty(t, r.Meta.Diff)
}
