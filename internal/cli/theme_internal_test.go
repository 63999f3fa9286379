package cli

import (
	"testing"

	"github.com/gencode/gencode/internal/config"
)

func TestColorFGBG(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		dark, ok bool
	}{
		{"15;0", true, true},
		{"0;15", false, true},
		{"12;8", true, true},
		{"0;default;7", false, true},
		{"", false, false},
		{"15;x", false, false},
	}
	for _, tt := range tests {
		dark, ok := colorFGBG(tt.in)
		if dark != tt.dark || ok != tt.ok {
			t.Errorf("colorFGBG(%q) = %v, %v, want %v, %v", tt.in, dark, ok, tt.dark, tt.ok)
		}
	}
}

// TestThemeSettingDecides: theme dark or light (config or GENCODE_THEME)
// is used as is; auto with COLORFGBG reads it; nothing is asked (unknown:
// dark, and the TUI asks through Bubble Tea).
func TestThemeSettingDecides(t *testing.T) {
	t.Parallel()
	tests := []struct {
		theme, colorfgbg string
		dark, known      bool
	}{
		{config.ThemeDark, "0;15", true, true},
		{config.ThemeLight, "15;0", false, true},
		{config.ThemeAuto, "0;15", false, true},
		{config.ThemeAuto, "15;0", true, true},
		{config.ThemeAuto, "", true, false}, // unknown: dark until the terminal says
	}
	for _, tt := range tests {
		a := &app{cfg: config.Config{Theme: tt.theme}, env: Env{Getenv: func(k string) string {
			if k == "COLORFGBG" {
				return tt.colorfgbg
			}
			return ""
		}}}
		if dark, known := a.background(); dark != tt.dark || known != tt.known {
			t.Errorf("theme %q, COLORFGBG %q: background() = %v, %v, want %v, %v", tt.theme, tt.colorfgbg, dark, known, tt.dark, tt.known)
		}
	}
}
