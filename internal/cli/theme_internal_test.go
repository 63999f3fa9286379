package cli

import (
	"testing"

	"github.com/gencode/gencode/internal/config"
)

func TestParseAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		in                string
		dark, known, done bool
	}{
		{"xterm black, ST", "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?64;1;2c", true, true, true},
		{"white, BEL", "\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?1;2c", false, true, true},
		{"solarized light, 2 digits", "\x1b]11;rgb:fd/f6/e3\x07\x1b[?6c", false, true, true},
		{"dark grey", "\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\\x1b[?62c", true, true, true},
		{"no OSC 11 support", "\x1b[?1;2c", false, false, true},
		{"OSC answer only so far", "\x1b]11;rgb:ffff/ffff/ffff\x07", false, true, false},
		{"nothing yet", "", false, false, false},
		{"garbage colour", "\x1b]11;cmyk:1/2/3/4\x07\x1b[?1c", false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dark, known, done := parseAnswers([]byte(tt.in))
			if dark != tt.dark || known != tt.known || done != tt.done {
				t.Errorf("parseAnswers(%q) = %v, %v, %v, want %v, %v, %v", tt.in, dark, known, done, tt.dark, tt.known, tt.done)
			}
		})
	}
}

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
// is used as is; auto with COLORFGBG reads it; nothing is asked.
func TestThemeSettingDecides(t *testing.T) {
	t.Parallel()
	tests := []struct {
		theme, colorfgbg string
		dark             bool
	}{
		{config.ThemeDark, "0;15", true},
		{config.ThemeLight, "15;0", false},
		{config.ThemeAuto, "0;15", false},
		{config.ThemeAuto, "15;0", true},
		{config.ThemeAuto, "", true}, // not a terminal: dark
	}
	for _, tt := range tests {
		a := &app{cfg: config.Config{Theme: tt.theme}, env: Env{Getenv: func(k string) string {
			if k == "COLORFGBG" {
				return tt.colorfgbg
			}
			return ""
		}}}
		if got := a.darkBackground(); got != tt.dark {
			t.Errorf("theme %q, COLORFGBG %q: dark = %v, want %v", tt.theme, tt.colorfgbg, got, tt.dark)
		}
	}
}
