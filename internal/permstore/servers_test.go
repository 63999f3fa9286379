package permstore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServerApprovals(t *testing.T) {
	s := Open(t.TempDir(), filepath.Join(t.TempDir(), "proj"))
	tests := []struct {
		name   string
		do     func() error
		server string
		fp     string
		want   bool
	}{
		{"none at first", nil, "fs", "v1", false},
		{"approved", func() error { return s.ApproveServer("fs", "v1") }, "fs", "v1", true},
		{"a changed server asks again", nil, "fs", "v2", false},
		{"re-approved replaces", func() error { return s.ApproveServer("fs", "v2") }, "fs", "v2", true},
		{"the old one is gone", nil, "fs", "v1", false},
		{"revoked", func() error { return s.RevokeServer("fs") }, "fs", "v2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.do != nil {
				require.NoError(t, tt.do())
			}
			if got := s.ServerApproved(tt.server, tt.fp); got != tt.want {
				t.Errorf("ServerApproved(%q, %q) = %v, want %v", tt.server, tt.fp, got, tt.want)
			}
		})
	}
	require.ErrorContains(t, s.RevokeServer("nope"), "not approved")
	rules, err := s.Rules()
	require.NoError(t, err)
	require.Empty(t, rules, "the rules file is untouched")
}
