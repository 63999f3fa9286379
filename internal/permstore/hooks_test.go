package permstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/permstore"
)

func TestApproveHooks(t *testing.T) {
	t.Parallel()
	cfg, project := t.TempDir(), t.TempDir()
	s := permstore.Open(cfg, project)
	require.False(t, s.HookApproved("abc"), "nothing approved yet")
	require.NoError(t, s.ApproveHooks("abc", "def"))
	require.NoError(t, s.ApproveHooks("abc"))
	other := permstore.Open(cfg, t.TempDir())
	tests := []struct {
		name  string
		store *permstore.Store
		id    string
		want  bool
	}{
		{"approved", s, "abc", true},
		{"approved too", s, "def", true},
		{"another hook", s, "xyz", false},
		{"another project", other, "abc", false},
		{"read afresh", permstore.Open(cfg, project), "def", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.store.HookApproved(tt.id), "HookApproved(%q)", tt.id)
		})
	}
	_, err := s.Rules()
	require.NoError(t, err, "the rules file is untouched")
}
