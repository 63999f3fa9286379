package cli

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/gencode/gencode/internal/config"
)

// backgroundTimeout bounds the wait for the terminal's answer to the
// background query. A terminal answers in a few milliseconds, a remote one
// in a round trip; one that never answers (script, some CI ptys) costs
// this once, at the start of a run that draws on it.
const backgroundTimeout = 300 * time.Millisecond

// renderer builds the renderer every style is made with, on the program's
// output and environment: NO_COLOR (and CLICOLOR=0) turn colour off. The
// background it draws for is set explicitly (darkBackground), so lipgloss
// and glamour never ask the terminal themselves.
func (a *app) renderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(a.env.Stdout, termenv.WithEnvironment(environ(a.env.Getenv)))
	if r.ColorProfile() == termenv.Ascii {
		// No colour is drawn: the background does not matter.
		r.SetHasDarkBackground(true)
		return r
	}
	r.SetHasDarkBackground(a.darkBackground())
	return r
}

// darkBackground reports whether the terminal's background is dark: the
// theme setting (config theme, env GENCODE_THEME) when it is dark or
// light; with auto, COLORFGBG when the terminal sets it, else the
// terminal's answer to one query, asked at most once per run and only
// when both stdin and stdout are that terminal (the answer comes on
// stdin). Unknown: dark.
func (a *app) darkBackground() bool {
	a.themeOnce.Do(func() {
		a.dark = true
		switch a.cfg.Theme {
		case config.ThemeDark:
			return
		case config.ThemeLight:
			a.dark = false
			return
		}
		if dark, ok := colorFGBG(a.env.Getenv("COLORFGBG")); ok {
			a.dark = dark
			return
		}
		in, okIn := a.env.Stdin.(*os.File)
		out, okOut := a.env.Stdout.(*os.File)
		if !okIn || !okOut {
			return
		}
		if dark, ok := queryBackground(in, out, backgroundTimeout); ok {
			a.dark = dark
		}
	})
	return a.dark
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

// Terminal answers: OSC 11 (the background colour) and DA1 (primary
// device attributes), which every terminal answers, and after OSC 11 when
// it answers that too.
const (
	queryBackgroundSeq = "\x1b]11;?\x1b\\"
	queryAttributesSeq = "\x1b[c"
)

// parseAnswers reads the terminal's answers to the two queries. done is
// set once the DA1 answer came: the OSC 11 answer, if any, came before it.
func parseAnswers(b []byte) (dark, known, done bool) {
	s := string(b)
	if i := strings.Index(s, "\x1b]11;"); i >= 0 {
		rest := s[i+len("\x1b]11;"):]
		if end := strings.IndexAny(rest, "\x07\x1b"); end >= 0 {
			dark, known = rgbDark(rest[:end])
			s = s[:i] + rest[end:]
		}
	}
	if i := strings.Index(s, "\x1b[?"); i >= 0 && strings.IndexByte(s[i:], 'c') >= 0 {
		done = true
	}
	return dark, known, done
}

// rgbDark reads an X11 colour "rgb:RRRR/GGGG/BBBB" (1 to 4 hex digits a
// component) and reports whether it is dark (relative luminance below
// one half).
func rgbDark(spec string) (dark, ok bool) {
	spec, found := strings.CutPrefix(spec, "rgb:")
	if !found {
		spec, found = strings.CutPrefix(spec, "rgba:")
	}
	parts := strings.Split(spec, "/")
	if !found || len(parts) < 3 {
		return false, false
	}
	var c [3]float64
	for i := range c {
		p := parts[i]
		if len(p) == 0 || len(p) > 4 {
			return false, false
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return false, false
		}
		c[i] = float64(v) / float64(uint64(1)<<(4*len(p))-1)
	}
	return 0.2126*c[0]+0.7152*c[1]+0.0722*c[2] < 0.5, true
}
