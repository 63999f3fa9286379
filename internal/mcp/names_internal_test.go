package mcp

import (
	"regexp"
	"testing"
)

// TestHashedNamesStayApart: two tool names that sanitise alike get
// different, valid names.
func TestHashedNamesStayApart(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	tests := []struct{ a, b string }{
		{"a.b", "a_b"},
		{"get issue", "get/issue"},
	}
	for _, tt := range tests {
		t.Run(tt.a, func(t *testing.T) {
			na, nb := ToolName("s", tt.a), ToolName("s", tt.b)
			if na != nb {
				t.Fatalf("ToolName(%q) = %q, ToolName(%q) = %q: the case needs names that collide", tt.a, na, tt.b, nb)
			}
			ha, hb := hashed(na, "s\x00"+tt.a), hashed(nb, "s\x00"+tt.b)
			if ha == hb || !valid.MatchString(ha) || !valid.MatchString(hb) {
				t.Errorf("hashed = %q, %q, want two different valid names", ha, hb)
			}
		})
	}
}
