// Package theme is the TUI's one palette and the styles every part of it
// draws with (crush's internal/ui/styles is the model). A Theme is built
// from the program's *lipgloss.Renderer and nothing else: the renderer's
// colour profile says whether there is colour at all (NO_COLOR, a pipe, a
// plain profile in tests), its background which colours are used. The CLI
// sets that background from the theme setting (theme = "dark" | "light" |
// "auto", env GENCODE_THEME), so the setting reaches every style here,
// the markdown included.
package theme

import (
	"io"

	gansi "github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Palette is every colour the TUI draws with (ANSI 256 numbers), for one
// background.
type Palette struct {
	Accent   lipgloss.Color // the prompt, titles, the spinner, the user's mark
	Muted    lipgloss.Color // secondary text: tool arguments and output, hints, borders of reports
	Faint    lipgloss.Color // the editor's placeholder
	Rule     lipgloss.Color // the line above the editor
	Positive lipgloss.Color // success, the assistant's mark, added lines
	Negative lipgloss.Color // failures, errors, removed lines
	Caution  lipgloss.Color // tools, the permission dialog, warnings
	Info     lipgloss.Color // diff hunk headers
}

// NewPalette returns the palette for a dark or a light background.
func NewPalette(dark bool) Palette {
	pick := func(light, onDark string) lipgloss.Color {
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
	// Profile is the renderer's colour profile (termenv.Ascii: no colour).
	Profile termenv.Profile
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
}

// New builds the theme with r.
func New(r *lipgloss.Renderer) *Theme {
	dark := r.HasDarkBackground()
	p := NewPalette(dark)
	fg := func(c lipgloss.Color) lipgloss.Style { return r.NewStyle().Foreground(c) }
	t := &Theme{Dark: dark, Profile: r.ColorProfile(), Palette: p}
	t.Chat = Chat{
		UserMark:      fg(p.Accent).Bold(true),
		AssistantMark: fg(p.Positive),
		ToolMark:      fg(p.Caution),
		ToolName:      r.NewStyle().Bold(true),
		ToolArg:       fg(p.Muted),
		ToolOK:        fg(p.Positive),
		ToolFail:      fg(p.Negative),
		Output:        fg(p.Muted),
		Dim:           fg(p.Muted),
		Error:         fg(p.Negative).Bold(true),
		Info:          fg(p.Muted).Italic(true),
		SummaryHead:   fg(p.Accent).Bold(true),
		DiffAdd:       fg(p.Positive),
		DiffDel:       fg(p.Negative),
		DiffHunk:      fg(p.Info),
	}
	t.Dialog = Dialog{
		Border: fg(p.Caution),
		Title:  fg(p.Caution).Bold(true),
		Text:   r.NewStyle(),
		Dim:    fg(p.Muted),
		Warn:   fg(p.Negative).Bold(true),
		Add:    fg(p.Positive),
		Del:    fg(p.Negative),
		Hunk:   fg(p.Info),
		Key:    r.NewStyle().Bold(true),
	}
	t.Input = Input{
		Prompt:      fg(p.Accent).Bold(true),
		Hint:        fg(p.Muted),
		Border:      fg(p.Rule),
		Text:        r.NewStyle(),
		Placeholder: fg(p.Faint),
		Cursor:      cursorRenderer(r).NewStyle().Reverse(true),
	}
	t.Status = Status{
		Key:     r.NewStyle().Bold(true),
		Dim:     fg(p.Muted),
		Warn:    fg(p.Caution),
		Hot:     fg(p.Negative),
		Busy:    fg(p.Accent),
		Spinner: fg(p.Accent),
	}
	t.Report = Report{
		Border:  fg(p.Muted),
		Title:   fg(p.Accent).Bold(true),
		Section: r.NewStyle().Bold(true),
		Text:    r.NewStyle(),
		Dim:     fg(p.Muted),
	}
	t.Picker = Picker{
		Title:          fg(p.Accent).Bold(true),
		Item:           r.NewStyle(),
		Detail:         fg(p.Muted),
		Selected:       fg(p.Accent).Bold(true),
		SelectedDetail: fg(p.Muted),
		Match:          r.NewStyle().Underline(true),
		Dim:            fg(p.Muted),
	}
	t.Markdown = styles.DarkStyleConfig
	switch {
	case t.Profile == termenv.Ascii:
		t.Markdown = styles.ASCIIStyleConfig
	case !dark:
		t.Markdown = styles.LightStyleConfig
	}
	zero := uint(0)
	t.Markdown.Document.Margin = &zero
	return t
}

// cursorRenderer draws the cursor: r, except without colours on a
// terminal, where it still draws reverse video.
func cursorRenderer(r *lipgloss.Renderer) *lipgloss.Renderer {
	//lint:ignore SA1019 TTY tells a terminal from a writer; Writer() does not (Bubble Tea v2 replaces termenv here)
	if r.ColorProfile() != termenv.Ascii || r.Output().TTY() == nil {
		return r
	}
	c := lipgloss.NewRenderer(io.Discard)
	c.SetColorProfile(termenv.ANSI)
	return c
}
