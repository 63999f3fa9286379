package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/gencode/gencode/internal/commands"
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
			r := (&app{env: Env{Stdout: io.Discard, Getenv: func(k string) string { return tt.env[k] }}}).renderer()
			if got := r.ColorProfile(); got != tt.want {
				t.Errorf("ColorProfile() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRenderReportBoxedOnlyOnAColourTerminal(t *testing.T) {
	t.Parallel()
	rep := &commands.Report{Title: "History", Sections: []commands.Section{{Lines: []string{"#1 messages 1-40"}}}}
	tests := []struct {
		name     string
		terminal bool
		env      map[string]string
		boxed    bool
	}{
		{"terminal", true, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, true},
		{"NO_COLOR", true, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, false},
		{"piped", false, map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &app{env: Env{Stdout: io.Discard, Getenv: func(k string) string { return tt.env[k] },
				IsTerminal: func() bool { return tt.terminal }}}
			out := ansi.Strip(a.renderReport(rep))
			if got := strings.Contains(out, "╭─ History"); got != tt.boxed {
				t.Errorf("renderReport boxed = %v, want %v:\n%s", got, tt.boxed, out)
			}
			if !strings.Contains(out, "#1 messages 1-40") {
				t.Errorf("renderReport lost a line:\n%s", out)
			}
		})
	}
}
