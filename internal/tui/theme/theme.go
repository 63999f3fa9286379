// Package theme is the TUI's one palette and the styles every part of it
// draws with (crush's internal/ui/styles is the model). A Theme is built
// from two values and nothing else: whether the background is dark, and
// the colour profile of the output (colorprofile.NoTTY: a pipe or a plain
// test, nothing but text). The background comes from the theme setting
// (theme = "dark" | "light" | "auto", env GENCODE_THEME), COLORFGBG, or
// Bubble Tea's tea.BackgroundColorMsg; nothing here asks the terminal.
// Lip Gloss v2 styles are pure values: colours are brought down to what
// the terminal shows where the text is written (Bubble Tea's renderer,
// or a colorprofile.Writer for reports printed outside the TUI).
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	gansi "github.com/gencode/gencode/third_party/glamour/ansi"
	"github.com/gencode/gencode/third_party/glamour/styles"
)

// Palette is every colour the TUI draws with (ANSI 256 numbers), for one
// background.
type Palette struct {
	Accent   color.Color // the prompt, titles, the spinner, the user's mark
	Muted    color.Color // secondary text: tool arguments and output, hints, borders of reports
	Faint    color.Color // the editor's placeholder
	Rule     color.Color // the line above the editor
	Positive color.Color // success, the assistant's mark, added lines
	Negative color.Color // failures, errors, removed lines
	Caution  color.Color // tools, the permission dialog, warnings
	Info     color.Color // diff hunk headers
}

// NewPalette returns the palette for a dark or a light background.
func NewPalette(dark bool) Palette {
	pick := func(light, onDark string) color.Color {
		if dark {
			return lipgloss.Color(onDark)
		}
		return lipgloss.Color(light)
	}
	return Palette{
		Accent:   pick("25", "75"),
		Muted:    pick("243", "245"),
		Faint:    pick("247", "240"),
		Rule:     pick("250", "238"),
		Positive: pick("28", "78"),
		Negative: pick("160", "203"),
		Caution:  pick("130", "221"),
		Info:     pick("30", "80"),
	}
}

// Theme is the palette and the styles of each part of the TUI.
type Theme struct {
	// Dark is the background the colours are for.
	Dark bool
	// Profile is the output's colour profile (colorprofile.NoTTY: plain
	// text, no escape sequences at all).
	Profile colorprofile.Profile
	Palette Palette

	Chat   Chat
	Dialog Dialog
	Input  Input
	Status Status
	Report Report
	Picker Picker
	// Markdown is glamour's style: dark or light by the background, its
	// ASCII style without colour; no document margin (chat indents
	// itself).
	Markdown gansi.StyleConfig
}

// Chat is the conversation's styles.
type Chat struct {
	UserMark, AssistantMark, ToolMark lipgloss.Style
	ToolName, ToolArg                 lipgloss.Style
	ToolOK, ToolFail                  lipgloss.Style
	Output, Dim, Error, Info          lipgloss.Style
	SummaryHead                       lipgloss.Style
	FooterKey                         lipgloss.Style // a key in the empty chat's hint
	DiffAdd, DiffDel, DiffHunk        lipgloss.Style // a Write's or Edit's change
}

// Dialog is the permission dialog's styles.
type Dialog struct {
	Border, Title, Text, Dim, Warn lipgloss.Style
	Add, Del, Hunk                 lipgloss.Style
	Key                            lipgloss.Style
}

// Input is the editor's styles.
type Input struct {
	Prompt, Hint, Border, Text lipgloss.Style
	Placeholder                lipgloss.Style
	// Cursor is drawn in reverse video, also without colour: NO_COLOR
	// removes colour, not the cursor.
	Cursor lipgloss.Style
}

// Status is the status bar's styles.
type Status struct {
	Key, Dim, Warn, Hot, Busy lipgloss.Style
	Spinner                   lipgloss.Style
}

// Report is the boxed reports' styles (/help, /context, /summarize ...).
type Report struct {
	Border, Title, Section, Text, Dim lipgloss.Style
}

// Picker is the styles of the lists /resume and /model open.
type Picker struct {
	Title, Item, Detail, Selected, SelectedDetail, Match, Dim lipgloss.Style
	Key                                                       lipgloss.Style // a key on the key line
}

// New builds the theme for a dark or light background and the output's
// colour profile. With colorprofile.NoTTY every style is plain.
func New(dark bool, profile colorprofile.Profile) *Theme {
	p := NewPalette(dark)
	plain := profile == colorprofile.NoTTY
	fg := func(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	r := styler{plain: plain}
	t := &Theme{Dark: dark, Profile: profile, Palette: p}
	t.Chat = Chat{
		UserMark:      r.s(fg(p.Accent).Bold(true)),
		AssistantMark: r.s(fg(p.Positive)),
		ToolMark:      r.s(fg(p.Caution)),
		ToolName:      r.s(lipgloss.NewStyle().Bold(true)),
		ToolArg:       r.s(fg(p.Muted)),
		ToolOK:        r.s(fg(p.Positive)),
		ToolFail:      r.s(fg(p.Negative)),
		Output:        r.s(fg(p.Muted)),
		Dim:           r.s(fg(p.Muted)),
		Error:         r.s(fg(p.Negative).Bold(true)),
		Info:          r.s(fg(p.Muted).Italic(true)),
		SummaryHead:   r.s(fg(p.Accent).Bold(true)),
		FooterKey:     r.s(fg(p.Muted).Bold(true)),
		DiffAdd:       r.s(fg(p.Positive)),
		DiffDel:       r.s(fg(p.Negative)),
		DiffHunk:      r.s(fg(p.Info)),
	}
	t.Dialog = Dialog{
		Border: r.s(fg(p.Caution)),
		Title:  r.s(fg(p.Caution).Bold(true)),
		Text:   lipgloss.NewStyle(),
		Dim:    r.s(fg(p.Muted)),
		Warn:   r.s(fg(p.Negative).Bold(true)),
		Add:    r.s(fg(p.Positive)),
		Del:    r.s(fg(p.Negative)),
		Hunk:   r.s(fg(p.Info)),
		Key:    r.s(lipgloss.NewStyle().Bold(true)),
	}
	t.Input = Input{
		Prompt:      r.s(fg(p.Accent).Bold(true)),
		Hint:        r.s(fg(p.Muted)),
		Border:      r.s(fg(p.Rule)),
		Text:        lipgloss.NewStyle(),
		Placeholder: r.s(fg(p.Faint)),
		Cursor:      r.s(lipgloss.NewStyle().Reverse(true)),
	}
	t.Status = Status{
		Key:     r.s(lipgloss.NewStyle().Bold(true)),
		Dim:     r.s(fg(p.Muted)),
		Warn:    r.s(fg(p.Caution)),
		Hot:     r.s(fg(p.Negative)),
		Busy:    r.s(fg(p.Accent)),
		Spinner: r.s(fg(p.Accent)),
	}
	t.Report = Report{
		Border:  r.s(fg(p.Muted)),
		Title:   r.s(fg(p.Accent).Bold(true)),
		Section: r.s(lipgloss.NewStyle().Bold(true)),
		Text:    lipgloss.NewStyle(),
		Dim:     r.s(fg(p.Muted)),
	}
	t.Picker = Picker{
		Title:          r.s(fg(p.Accent).Bold(true)),
		Item:           lipgloss.NewStyle(),
		Detail:         r.s(fg(p.Muted)),
		Selected:       r.s(fg(p.Accent).Bold(true)),
		SelectedDetail: r.s(fg(p.Muted)),
		Match:          r.s(lipgloss.NewStyle().Underline(true)),
		Dim:            r.s(fg(p.Muted)),
		Key:            r.s(lipgloss.NewStyle().Bold(true)),
	}
	t.Markdown = styles.DarkStyleConfig
	switch {
	case profile <= colorprofile.Ascii:
		t.Markdown = styles.ASCIIStyleConfig
	case !dark:
		t.Markdown = styles.LightStyleConfig
	}
	zero := uint(0)
	t.Markdown.Document.Margin = &zero
	return t
}

// styler makes the styles of a theme: in a plain theme, attributes such
// as bold are dropped too, so the text carries no escape sequence.
type styler struct{ plain bool }

// s is st, or in a plain theme the empty style.
func (s styler) s(st lipgloss.Style) lipgloss.Style {
	if s.plain {
		return lipgloss.NewStyle()
	}
	return st
}
