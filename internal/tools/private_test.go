package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrivateDirsOutsideEveryProject: with the working directory at a
// home that holds gencode's config, data and state directories, Write and
// Edit into them are refused whatever the permissions (--allow, a project
// rule, --yolo), so a write cannot become a Bash permission; Read of them
// asks as outside the project does; Grep's walks skip them. The rest of
// the home is the project as before.
func TestPrivateDirsOutsideEveryProject(t *testing.T) {
	t.Parallel()
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf := filepath.Join(home, ".config", "gencode")
	rules := filepath.Join(conf, "projects", "home-0123", "permissions.toml")
	data := filepath.Join(home, ".local", "share", "gencode")
	writeFile(t, filepath.Join(conf, "config.toml"), "model = \"mine\" # needle\n")
	writeFile(t, rules, "project = \"x\" # needle\n")
	writeFile(t, filepath.Join(data, "sessions.db"), "db needle\n")
	writeFile(t, filepath.Join(home, ".config", "other", "rc"), "x needle\n")
	require.NoError(t, os.Symlink(".config/gencode", filepath.Join(home, "link")))
	private := []string{conf, data, filepath.Join(home, ".local", "state", "gencode")}

	for _, mode := range []struct {
		name string
		opts Options
	}{
		{"allowed", Options{Permissions: Permissions{ToolWrite: ModeAllow, ToolEdit: ModeAllow}}},
		{"project rules", Options{Project: &memRules{rules: []Rule{{Tool: ToolWrite}, {Tool: ToolEdit}}}}},
		{"yolo", Options{Yolo: true}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			opts := mode.opts
			opts.WorkDir, opts.Private = home, private
			s := New(opts)
			tests := []struct {
				tool string
				args map[string]any
			}{
				{ToolWrite, map[string]any{"file_path": ".config/gencode/config.toml", "content": "[tools]\nallow = [\"Bash\"]\n"}},
				{ToolWrite, map[string]any{"file_path": filepath.Join(conf, "config.toml"), "content": "x"}},
				{ToolWrite, map[string]any{"file_path": ".config/gencode/projects/home-0123/permissions.toml", "content": "[[rule]]\ntool = \"Bash\"\ncommand = [\"bash\"]\n"}},
				{ToolWrite, map[string]any{"file_path": ".config/gencode/projects/new-1/permissions.toml", "content": "x"}},
				{ToolWrite, map[string]any{"file_path": "link/config.toml", "content": "x"}},
				{ToolWrite, map[string]any{"file_path": ".local/share/gencode/sessions.db", "content": "x"}},
				{ToolWrite, map[string]any{"file_path": ".local/state/gencode/gencode.log", "content": "x"}},
				{ToolEdit, map[string]any{"file_path": ".config/gencode/config.toml", "old_string": "mine", "new_string": "evil"}},
				{ToolEdit, map[string]any{"file_path": "link/projects/home-0123/permissions.toml", "old_string": "x", "new_string": "y"}},
			}
			for _, tt := range tests {
				res := run(t, s, tt.tool, tt.args)
				assert.True(t, res.Denied, "%s %v ran: %s", tt.tool, tt.args, res.Content)
				assert.Contains(t, res.Content, "is in gencode's own directory", "%s %v", tt.tool, tt.args)
			}
			assert.Equal(t, "model = \"mine\" # needle\n", readFile(t, filepath.Join(conf, "config.toml")))
			assert.Equal(t, "project = \"x\" # needle\n", readFile(t, rules))
			assert.NoFileExists(t, filepath.Join(conf, "projects", "new-1", "permissions.toml"))
			assert.NoDirExists(t, filepath.Join(home, ".local", "state", "gencode"))

			// The rest of the home is the project.
			res := run(t, s, ToolWrite, map[string]any{"file_path": ".config/other/rc", "content": "y needle\n"})
			assert.False(t, res.IsError, res.Content)
		})
	}

	// Read asks as outside the project does: print mode denies it, and a
	// Grep of the project leaves gencode's files out.
	s := New(Options{WorkDir: home, Private: private})
	res := run(t, s, ToolRead, map[string]any{"file_path": ".config/gencode/projects/home-0123/permissions.toml"})
	assert.True(t, res.Denied, res.Content)
	assert.Contains(t, res.Content, "outside the working directory")
	res = run(t, s, ToolGrep, map[string]any{"pattern": "needle"})
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, filepath.Join(".config", "other", "rc"))
	assert.NotContains(t, res.Content, "gencode")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
