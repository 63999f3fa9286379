package cli

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"

	"github.com/gencode/gencode/internal/config"
)

// colourEnv are the variables colour detection reads (colorprofile and
// Bubble Tea): the injected environment passes them on, and only them.
const colourEnv = "TERM COLORTERM NO_COLOR CLICOLOR CLICOLOR_FORCE TERM_PROGRAM TMUX WT_SESSION " +
	"GOOGLE_CLOUD_SHELL COLORFGBG SSH_TTY TERMINFO LANG LC_ALL LC_CTYPE"

// environ is the injected environment's colour variables as KEY=VALUE,
// what colorprofile.Detect and tea.WithEnvironment take.
func (a *app) environ() []string {
	var env []string
	for _, k := range strings.Fields(colourEnv) {
		if v := a.env.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// profile is the colour profile of the program's output: NO_COLOR,
// CLICOLOR=0 and a pipe take colour away (a pipe: every escape sequence),
// CLICOLOR_FORCE puts it back. Nothing is asked of the terminal.
func (a *app) profile() colorprofile.Profile {
	p := colorprofile.Detect(a.env.Stdout, a.environ())
	if a.env.Getenv("NO_COLOR") != "" && p > colorprofile.Ascii {
		// NO_COLOR wins over CLICOLOR_FORCE, as it did with termenv.
		p = colorprofile.Ascii
	}
	return p
}

// background says whether the background is dark, and whether anything
// said so: the theme setting (config theme, env GENCODE_THEME) when it
// is dark or light; with auto, COLORFGBG when the terminal sets it.
// Unknown is dark; the TUI then asks the terminal through Bubble Tea
// (tea.RequestBackgroundColor), and a report printed outside it never
// asks: it draws for a dark background.
func (a *app) background() (dark, known bool) {
	switch a.cfg.Theme {
	case config.ThemeDark:
		return true, true
	case config.ThemeLight:
		return false, true
	}
	if dark, ok := colorFGBG(a.env.Getenv("COLORFGBG")); ok {
		return dark, true
	}
	return true, false
}

// colorFGBG reads COLORFGBG ("15;0": foreground;background, ANSI colour
// numbers), which rxvt and Konsole set.
func colorFGBG(v string) (dark, ok bool) {
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	bg, err := strconv.Atoi(v[i+1:])
	if err != nil || bg < 0 || bg > 15 {
		return false, false
	}
	// 7 (light grey) and 9-15 are light; 0-6 and 8 dark.
	return bg <= 6 || bg == 8, true
}
