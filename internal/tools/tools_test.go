package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/termtext/termtexttest"
)

// fakeAsker answers every request with decision and records the requests.
type fakeAsker struct {
	decision Decision
	err      error

	mu       sync.Mutex
	requests []Request
}

func (f *fakeAsker) Ask(_ context.Context, r Request) (Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	return f.decision, f.err
}

func (f *fakeAsker) asked() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// newTestSet returns a Set working in a fresh temporary directory, which it
// returns too (symlinks resolved).
func newTestSet(t *testing.T, opts Options) (*Set, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	opts.WorkDir = dir
	return New(opts), dir
}

// yoloSet is a Set that never asks: for tests of what the tools do.
func yoloSet(t *testing.T) (*Set, string) {
	t.Helper()
	return newTestSet(t, Options{Yolo: true})
}

func run(t *testing.T, s *Set, name string, args any) Result {
	t.Helper()
	var raw string
	switch a := args.(type) {
	case string:
		raw = a
	default:
		b, err := json.Marshal(a)
		require.NoError(t, err)
		raw = string(b)
	}
	return s.Run(context.Background(), Call{ID: "call_1", Name: name, Arguments: raw})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestDefinitionsOrderAndSchemas(t *testing.T) {
	s, _ := yoloSet(t)
	defs := s.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	require.Equal(t, []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"}, names)

	wantArgs := map[string][]string{
		"Read":  {"file_path", "offset", "limit"},
		"Write": {"file_path", "content"},
		"Edit":  {"file_path", "old_string", "new_string", "replace_all"},
		"Bash":  {"command", "timeout"},
		"Glob":  {"pattern", "path"},
		"Grep":  {"pattern", "path", "include"},
		"LS":    {"path"},
	}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			var schema struct {
				Type       string                       `json:"type"`
				Properties map[string]map[string]string `json:"properties"`
				Required   []string                     `json:"required"`
			}
			require.NoError(t, json.Unmarshal(d.Parameters, &schema), "schema of %s", d.Name)
			assert.Equal(t, "object", schema.Type)
			var props []string
			for name, p := range schema.Properties {
				props = append(props, name)
				assert.Contains(t, []string{"string", "integer", "boolean"}, p["type"], "type of %s.%s", d.Name, name)
			}
			assert.ElementsMatch(t, wantArgs[d.Name], props)
			for _, r := range schema.Required {
				assert.Contains(t, props, r, "required %s is a property", r)
			}
			assert.NotEmpty(t, d.Description)
			assert.NotContains(t, d.Description, "\n")
		})
	}
}

// The fixed prompt (system prompt + tool schemas) must fit 3,000 tokens so
// that gencode works in 8k windows; the schemas get at most 1,400.
func TestDefinitionsTokenBudget(t *testing.T) {
	s, _ := yoloSet(t)
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type wireTool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var wire []wireTool
	for _, d := range s.Definitions() {
		wire = append(wire, wireTool{"function", function(d)})
	}
	b, err := json.Marshal(wire)
	require.NoError(t, err)
	tokens := len(b) / 4
	t.Logf("tool schemas: %d bytes, ~%d tokens", len(b), tokens)
	assert.LessOrEqual(t, tokens, 1400)
}

func TestDefinitionsOmitDeniedTools(t *testing.T) {
	s, _ := newTestSet(t, Options{Permissions: Permissions{ToolBash: ModeDeny}})
	for _, d := range s.Definitions() {
		assert.NotEqual(t, ToolBash, d.Name)
	}
	r := run(t, s, ToolBash, map[string]any{"command": "echo hi"})
	assert.True(t, r.Denied)
	assert.Contains(t, r.Content, "disabled by configuration")
}

func TestRunBadArguments(t *testing.T) {
	s, _ := yoloSet(t)
	tests := []struct {
		name    string
		tool    string
		args    string
		wantErr string
	}{
		{"unknown tool", "Delete", `{}`, `unknown tool "Delete"; available tools: Read, Write, Edit, Bash, Glob, Grep, LS`},
		{"not json", ToolRead, `{"file_path": "a`, `invalid arguments for Read: not a JSON object; expected arguments: {"file_path": string, "offset"?: integer, "limit"?: integer}`},
		{"array", ToolRead, `["a"]`, "invalid arguments for Read: not a JSON object"},
		{"missing required", ToolRead, `{"path": "a"}`, "invalid arguments for Read: missing file_path; expected arguments"},
		{"null required", ToolWrite, `{"file_path": "a", "content": null}`, "invalid arguments for Write: missing content"},
		{"several missing", ToolEdit, `{"file_path": "a"}`, "missing old_string, new_string"},
		{"wrong type", ToolRead, `{"file_path": 3}`, "invalid arguments for Read: file_path must be a string, not number"},
		{"bad integer", ToolRead, `{"file_path": "a", "limit": "ten"}`, `invalid arguments for Read: limit must be an integer, not "ten"`},
		{"fractional integer", ToolBash, `{"command": "true", "timeout": 2.5}`, "timeout must be an integer, not 2.5"},
		{"bad boolean", ToolEdit, `{"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}`, `replace_all must be true or false, not "yes"`},
		{"empty arguments for a tool with required ones", ToolGlob, ``, "invalid arguments for Glob: missing pattern"},
		{"empty path", ToolRead, `{"file_path": ""}`, "invalid arguments for Read: file_path is empty"},
		{"negative offset", ToolRead, `{"file_path": "a", "offset": -1}`, "offset must be 1 or more"},
		{"negative timeout", ToolBash, `{"command": "true", "timeout": -5}`, "timeout must be 1-600 seconds"},
		{"empty command", ToolBash, `{"command": "  "}`, "command is empty"},
		{"bad regexp", ToolGrep, `{"pattern": "a(b"}`, "invalid regular expression"},
		{"bad glob", ToolGlob, `{"pattern": "a[b"}`, `invalid glob pattern "a[b"`},
		{"bad include", ToolGrep, `{"pattern": "a", "include": "{a"}`, `invalid include pattern "{a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, tt.tool, tt.args)
			assert.True(t, r.IsError, "IsError")
			assert.False(t, r.Denied)
			assert.False(t, r.Meta.Success)
			assert.Equal(t, tt.tool, r.Meta.Tool)
			assert.Contains(t, r.Content, tt.wantErr)
		})
	}
}

func TestRunAcceptsLenientArguments(t *testing.T) {
	s, dir := yoloSet(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	tests := []struct {
		name string
		args string
		want string
	}{
		{"numeric string", `{"file_path": "a.txt", "offset": "2", "limit": "1"}`, "     2\ttwo"},
		{"integral float", `{"file_path": "a.txt", "offset": 3.0}`, "     3\tthree"},
		{"unknown fields ignored", `{"file_path": "a.txt", "color": "red", "limit": 1}`, "     1\tone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, ToolRead, tt.args)
			require.False(t, r.IsError, r.Content)
			assert.True(t, strings.HasPrefix(r.Content, tt.want), "Read(%s) = %q, want prefix %q", tt.args, r.Content, tt.want)
		})
	}
}

func TestRunCanceledContext(t *testing.T) {
	s, _ := yoloSet(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := s.Run(ctx, Call{Name: ToolLS, Arguments: `{}`})
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "context canceled")
}

// TestOutputSanitizedHostileCorpus: whatever a command prints, the
// model, the log and the chat get it inert: each case of the corpus every
// surface is tested with, printed by Bash, comes back as the sanitizer
// leaves it.
func TestOutputSanitizedHostileCorpus(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	for i, tt := range termtexttest.Corpus() {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("case%d.txt", i)
			writeFile(t, filepath.Join(dir, name), tt.In)
			r := run(t, s, ToolBash, map[string]any{"command": "cat " + name})
			want := strings.TrimSuffix(tt.Want, "\n")
			if want == "" {
				want = "(no output)"
			}
			assert.Equal(t, want+"\n[exit code 0]", r.Content, "Bash(cat %q)", tt.In)
			assert.Empty(t, termtexttest.Raw(r.Content))
		})
	}
}

func TestCapText(t *testing.T) {
	var lines []string
	for i := range 5000 {
		lines = append(lines, strings.Repeat("x", 20)+" line "+strconv.Itoa(i))
	}
	big := strings.Join(lines, "\n")
	tests := []struct {
		name      string
		opts      Options
		in        string
		wantCap   bool
		maxTokens int
	}{
		{"small passes", Options{}, "hello", false, 0},
		{"default cap", Options{}, big, true, DefaultOutputCapTokens},
		{"custom cap", Options{OutputCapTokens: 100}, big, true, 100},
		{"custom counter", Options{OutputCapTokens: 500, CountTokens: func(s string) int { return len(s) / 2 }}, big, true, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.opts)
			got, capped := s.capText(tt.in, 0, 0)
			assert.Equal(t, tt.wantCap, capped)
			if !tt.wantCap {
				assert.Equal(t, tt.in, got)
				return
			}
			assert.LessOrEqual(t, s.count(got), tt.maxTokens)
			assert.True(t, strings.HasPrefix(got, lines[0]+"\n"), "head kept")
			assert.True(t, strings.HasSuffix(got, "\n"+lines[len(lines)-1]), "tail kept")
			assert.Regexp(t, `\n\.\.\. \[\d+ lines \(\d+ bytes\) elided\] \.\.\.\n`, got)
		})
	}
}
