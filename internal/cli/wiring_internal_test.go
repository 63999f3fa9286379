package cli

import (
	"io"
	"testing"

	"github.com/muesli/termenv"
)

func TestRendererHonoursNoColor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want termenv.Profile
	}{
		{"forced colour", map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, termenv.ANSI},
		{"NO_COLOR wins", map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, termenv.Ascii},
		{"not a terminal", map[string]string{"TERM": "xterm-256color"}, termenv.Ascii},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRenderer(Env{Stdout: io.Discard, Getenv: func(k string) string { return tt.env[k] }})
			if got := r.ColorProfile(); got != tt.want {
				t.Errorf("ColorProfile() = %v, want %v", got, tt.want)
			}
		})
	}
}
