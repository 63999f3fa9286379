package theme_test

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/third_party/glamour/styles"
)

func build(p colorprofile.Profile, dark bool) *theme.Theme {
	return theme.New(dark, p)
}

// each calls f with the name of every style of every part of th.
func each(th *theme.Theme, f func(name string, st lipgloss.Style)) {
	v := reflect.ValueOf(th).Elem()
	for i := range v.NumField() {
		part := v.Field(i)
		if part.Kind() != reflect.Struct || part.Type().PkgPath() != v.Type().PkgPath() || part.Type().Name() == "Palette" {
			continue
		}
		for j := range part.NumField() {
			if st, ok := part.Field(j).Interface().(lipgloss.Style); ok {
				f(v.Type().Field(i).Name+"."+part.Type().Field(j).Name, st)
			}
		}
	}
}

// fg finds a 256-colour foreground in SGR output.
var fg = regexp.MustCompile(`38;5;(\d+)`)

// colours are the colour numbers of a palette.
func colours(p theme.Palette) map[string]bool {
	out := map[string]bool{}
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		out[fmt.Sprint(v.Field(i).Interface())] = true
	}
	return out
}

// TestBackgroundReachesEveryPart: the background the CLI decides (the
// theme setting, or the terminal's answer) picks the colours of every
// part: no style keeps a colour of the other background, and the markdown
// follows too.
func TestBackgroundReachesEveryPart(t *testing.T) {
	t.Parallel()
	for _, dark := range []bool{true, false} {
		th := build(colorprofile.ANSI256, dark)
		own := colours(theme.NewPalette(dark))
		coloured := 0
		each(th, func(name string, st lipgloss.Style) {
			m := fg.FindStringSubmatch(st.Render("x"))
			if m == nil {
				return
			}
			coloured++
			require.Truef(t, own[m[1]], "dark=%v: %s draws colour %s, not one of its background's palette", dark, name, m[1])
		})
		require.Greater(t, coloured, 20, "the parts' styles draw in colour")
		want := styles.DarkStyleConfig.Document.Color
		if !dark {
			want = styles.LightStyleConfig.Document.Color
		}
		require.Equal(t, want, th.Markdown.Document.Color, "dark=%v: markdown style", dark)
	}
}

// TestNoColourDrawsNone: with no colour (NO_COLOR, a pipe) no style draws
// a colour and the markdown is glamour's ASCII style.
func TestNoColourDrawsNone(t *testing.T) {
	t.Parallel()
	th := build(colorprofile.NoTTY, true)
	each(th, func(name string, st lipgloss.Style) {
		require.Equalf(t, "x", st.Render("x"), "%s draws an escape sequence without colour", name)
	})
	require.Equal(t, styles.ASCIIStyleConfig.Document.Color, th.Markdown.Document.Color)
	require.NotNil(t, th.Markdown.Document.Margin)
	require.Zero(t, *th.Markdown.Document.Margin, "chat indents itself: no document margin")
}
