package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Describe reads each of gencode's tools, and other agents' as imported
// sessions hold them, the one way the chat, history, import and
// summarizer show and record them.
func TestDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		call Call
		want Description
		file string
	}{
		{"Read", Call{Name: ToolRead, Arguments: `{"file_path":"src/a.go","offset":10}`},
			Description{Kind: CallRead, Paths: []string{"src/a.go"}, Summary: "src/a.go"}, "src/a.go"},
		{"Write", Call{Name: ToolWrite, Arguments: `{"file_path":"b.txt","content":"hello\n"}`},
			Description{Kind: CallModify, Paths: []string{"b.txt"}, Summary: "b.txt"}, "b.txt"},
		{"Edit", Call{Name: ToolEdit, Arguments: `{"file_path":"c.go","old_string":"x","new_string":"y"}`},
			Description{Kind: CallModify, Paths: []string{"c.go"}, Summary: "c.go"}, "c.go"},
		{"Bash", Call{Name: ToolBash, Arguments: `{"command":"  go test ./...  ","timeout":60}`},
			Description{Kind: CallCommand, Command: "go test ./...", Summary: "  go test ./...  "}, ""},
		{"Glob with a path", Call{Name: ToolGlob, Arguments: `{"pattern":"**/*.go","path":"internal"}`},
			Description{Kind: CallOther, Paths: []string{"internal"}, Pattern: "**/*.go", Summary: "**/*.go in internal"}, ""},
		{"Glob without", Call{Name: ToolGlob, Arguments: `{"pattern":"*.md"}`},
			Description{Kind: CallOther, Pattern: "*.md", Summary: "*.md"}, ""},
		{"Grep", Call{Name: ToolGrep, Arguments: `{"pattern":"func main","path":"cmd","glob":"*.go"}`},
			Description{Kind: CallOther, Paths: []string{"cmd"}, Pattern: "func main", Summary: "func main in cmd"}, ""},
		{"LS", Call{Name: ToolLS, Arguments: `{"path":"docs"}`},
			Description{Kind: CallOther, Paths: []string{"docs"}, Summary: "docs"}, ""},
		{"LS of the work dir", Call{Name: ToolLS, Arguments: `{}`},
			Description{Kind: CallOther}, ""},
		// Other agents' tools, from imported sessions.
		{"an editor viewing", Call{Name: "str_replace_editor", Arguments: `{"command":"view","path":"/repo/x.py"}`},
			Description{Kind: CallRead, Paths: []string{"/repo/x.py"}, Summary: "view"}, "/repo/x.py"},
		{"an editor creating", Call{Name: "str_replace_editor", Arguments: `{"command":"create","path":"y.py","file_text":"1"}`},
			Description{Kind: CallModify, Paths: []string{"y.py"}, Summary: "create"}, "y.py"},
		{"a shell tool", Call{Name: "run_shell_command", Arguments: `{"cmd":"ls -la"}`},
			Description{Kind: CallCommand, Command: "ls -la", Summary: "ls -la"}, ""},
		{"apply_patch", Call{Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** Update File: a.go\n*** Add File: b.go\n*** End Patch"}`},
			Description{Kind: CallModify, Paths: []string{"a.go", "b.go"}, Summary: "*** Begin Patch\n*** Update File: a.go\n*** Add File: b.go\n*** End Patch"}, "a.go"},
		{"a search tool", Call{Name: "search_history", Arguments: `{"query":"quokka","limit":5}`},
			Description{Kind: CallOther, Summary: "quokka"}, ""},
		{"no known key: the first text argument by name", Call{Name: "fetch", Arguments: `{"z":"last","b":"first","a":3}`},
			Description{Kind: CallOther, Summary: "first"}, ""},
		// Broken arguments: the path and command found in the text, the
		// text itself as the summary.
		{"cut JSON", Call{Name: ToolWrite, Arguments: `{"file_path":"cut.go","content":"pack`},
			Description{Kind: CallModify, Paths: []string{"cut.go"}, Summary: `{"file_path":"cut.go","content":"pack`}, "cut.go"},
		{"not JSON", Call{Name: ToolBash, Arguments: `ls`},
			Description{Kind: CallCommand, Summary: "ls"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Describe(tt.call)
			got.Args = nil // the parsed arguments; checked below
			tt.want.Name = tt.call.Name
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.file, got.File())
		})
	}
	args := Describe(Call{Name: ToolRead, Arguments: `{"file_path":"a","limit":3}`}).Args
	assert.Equal(t, map[string]any{"file_path": "a", "limit": float64(3)}, args)
}

// A write outside the working directory is never granted for the session:
// its request offers only once or no; every other request offers all three.
func TestRequestChoices(t *testing.T) {
	t.Parallel()
	all := []Decision{AllowOnce, AllowSession, Deny}
	for _, tool := range Names() {
		assert.Equal(t, all, Request{Tool: tool}.Choices(), tool)
		want := all
		if tool == ToolWrite || tool == ToolEdit {
			want = []Decision{AllowOnce, Deny}
		}
		r := Request{Tool: tool, OutsideWorkDir: true}
		assert.Equal(t, want, r.Choices(), tool+" outside")
		assert.Equal(t, len(want) == 3, r.Allows(AllowSession), tool+" outside")
	}
}

func TestSortArgKeys(t *testing.T) {
	t.Parallel()
	keys := []string{"zeta", "command", "alpha", "path"}
	SortArgKeys(keys)
	assert.Equal(t, []string{"path", "command", "alpha", "zeta"}, keys)
}
