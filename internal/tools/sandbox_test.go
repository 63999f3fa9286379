package tools

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/sandbox"
)

// TestAutoAllowThatCannotApplySaysWhy: with [sandbox] auto_allow set but
// not applicable, Bash asks, and the question says why it was not spared;
// without auto_allow the question carries no note.
func TestAutoAllowThatCannotApplySaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		auto     bool
		sup      sandbox.Support
		wantNote string
	}{
		{"kernel without network restriction", true, sandbox.Support{ABI: 3}, "cannot take the network away (ABI 4 can)"},
		{"no sandbox", true, sandbox.Support{Why: "not Linux"}, "auto_allow does nothing: no sandbox is in force (not Linux)"},
		{"auto_allow not set", false, sandbox.Support{ABI: 3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			asker := &fakeAsker{decision: Deny}
			s, dir := newTestSet(t, Options{Asker: asker})
			s.sandbox = sandbox.New(sandbox.Config{Enabled: true, AutoAllow: tt.auto, WorkDir: dir, TempDir: dir, Executable: "/nonexistent"}, tt.sup)
			r := s.Run(context.Background(), Call{ID: "c", Name: ToolBash, Arguments: `{"command":"true"}`})
			assert.True(t, r.Denied)
			asked := asker.asked()
			require.Len(t, asked, 1, "Bash did not ask")
			if tt.wantNote == "" {
				assert.Empty(t, asked[0].Note)
				return
			}
			assert.Contains(t, asked[0].Note, tt.wantNote)
		})
	}
}
