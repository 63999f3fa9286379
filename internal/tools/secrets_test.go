package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "sk-proj-TESTKEY0123456789abcdef"

// Commands do not inherit the provider keys or gencode's own settings.
func TestBashEnvHidesProviderKeys(t *testing.T) {
	t.Parallel()
	s, _ := newTestSet(t, Options{Yolo: true, Env: []string{
		"PATH=/usr/bin:/bin", "HOME=/tmp",
		"OPENAI_API_KEY=" + testKey, "ANTHROPIC_API_KEY=ant", "OPENROUTER_API_KEY=or",
		"GENCODE_MODEL=m", "GENCODE_HOME=/x", "MY_APP_TOKEN=kept", "OPENAI_BASE_URL=http://kept",
	}})
	r := run(t, s, ToolBash, map[string]any{"command": "env | sort"})
	require.False(t, r.IsError, r.Content)
	for _, gone := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GENCODE_MODEL", "GENCODE_HOME", testKey} {
		assert.NotContains(t, r.Content, gone)
	}
	for _, kept := range []string{"MY_APP_TOKEN=kept", "OPENAI_BASE_URL=http://kept", "PATH=/usr/bin:/bin"} {
		assert.Contains(t, r.Content, kept)
	}
}

// A provider endpoint's URL reached commands with its user name and
// password (OPENAI_BASE_URL=http://admin:PASS@host): `env` showed them to
// the model and the log. Now commands get the URL without them; other
// variables (a DATABASE_URL the user's commands need) stay as they are.
func TestBashEnvStripsEndpointCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "user and password", in: "OPENAI_BASE_URL=http://admin:S3cretPass@10.0.0.5:8000/v1", want: "OPENAI_BASE_URL=http://10.0.0.5:8000/v1"},
		{name: "token as user", in: "ANTHROPIC_BASE_URL=https://tok_0123456789abcdef@gw.example.com", want: "ANTHROPIC_BASE_URL=https://gw.example.com"},
		{name: "legacy name", in: "OPENAI_API_BASE=https://u:p@h/v1?q=a@b", want: "OPENAI_API_BASE=https://h/v1?q=a@b"},
		{name: "ollama", in: "OLLAMA_HOST=http://me:pw@127.0.0.1:11434", want: "OLLAMA_HOST=http://127.0.0.1:11434"},
		{name: "no credentials", in: "OPENAI_BASE_URL=http://127.0.0.1:1234/v1", want: "OPENAI_BASE_URL=http://127.0.0.1:1234/v1"},
		{name: "not an endpoint", in: "DATABASE_URL=postgres://app:pw@db/x", want: "DATABASE_URL=postgres://app:pw@db/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := toolEnv([]string{"PATH=/usr/bin:/bin", tt.in})
			require.Equal(t, []string{"PATH=/usr/bin:/bin", tt.want}, got)
		})
	}
	s, _ := newTestSet(t, Options{Yolo: true, Env: []string{"PATH=/usr/bin:/bin", "OPENAI_BASE_URL=http://admin:S3cretPass@10.0.0.5:8000/v1"}})
	r := run(t, s, ToolBash, map[string]any{"command": "env"})
	require.False(t, r.IsError, r.Content)
	assert.Contains(t, r.Content, "OPENAI_BASE_URL=http://10.0.0.5:8000/v1")
	assert.NotContains(t, r.Content, "S3cretPass")
	assert.NotContains(t, r.Content, "admin")
}

// The configured key is replaced wherever a result holds it: the text the
// model gets, the full text the log keeps, and the call's description.
func TestResultsRedactTheConfiguredKey(t *testing.T) {
	t.Parallel()
	s, dir := newTestSet(t, Options{Yolo: true, OutputCapTokens: 256, Secrets: []string{testKey, "none", ""}})
	writeFile(t, filepath.Join(dir, ".env"), "OPENAI_API_KEY="+testKey+"\nnone of this\n")
	long := strings.Repeat("filler line\n", 2000)
	writeFile(t, filepath.Join(dir, "big.txt"), testKey+"\n"+long+"sk-proj-TESTKEY\x1b[0m0123456789abcdef\n")

	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"read", ToolRead, map[string]any{"file_path": ".env"}, "OPENAI_API_KEY=[REDACTED:api-key]"},
		{"grep", ToolGrep, map[string]any{"pattern": "API_KEY"}, ".env:1:OPENAI_API_KEY=[REDACTED:api-key]"},
		{"bash", ToolBash, map[string]any{"command": "echo " + testKey}, "[REDACTED:api-key]\n[exit code 0]"},
		{"bash, capped, with an escape inside the key", ToolBash, map[string]any{"command": "cat big.txt"}, "[REDACTED:api-key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, tt.tool, tt.args)
			require.False(t, r.IsError, r.Content)
			assert.Contains(t, r.Content, tt.want)
			for _, text := range []string{r.Content, r.Full, r.Meta.Command, r.Meta.FilePath, r.Meta.Pattern} {
				assert.NotContains(t, text, testKey)
				assert.NotContains(t, text, "0123456789abcdef")
			}
		})
	}
	r := run(t, s, ToolRead, map[string]any{"file_path": ".env"})
	assert.Contains(t, r.Content, "none of this", "short placeholder values are not secrets")
}
