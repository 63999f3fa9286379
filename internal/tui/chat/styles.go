package chat

import "github.com/charmbracelet/lipgloss"

// Styles are the chat's styles, built from the program's renderer so that
// NO_COLOR and the terminal's background are honoured and tests can force a
// plain profile.
type Styles struct {
	UserMark      lipgloss.Style
	AssistantMark lipgloss.Style
	ToolMark      lipgloss.Style
	ToolName      lipgloss.Style
	ToolArg       lipgloss.Style
	ToolOK        lipgloss.Style
	ToolFail      lipgloss.Style
	Output        lipgloss.Style
	Dim           lipgloss.Style
	Error         lipgloss.Style
	Info          lipgloss.Style
	SummaryHead   lipgloss.Style
}

// NewStyles builds the chat styles with r.
func NewStyles(r *lipgloss.Renderer) Styles {
	accent := lipgloss.AdaptiveColor{Light: "25", Dark: "75"}
	dim := lipgloss.AdaptiveColor{Light: "243", Dark: "245"}
	green := lipgloss.AdaptiveColor{Light: "28", Dark: "78"}
	red := lipgloss.AdaptiveColor{Light: "160", Dark: "203"}
	yellow := lipgloss.AdaptiveColor{Light: "130", Dark: "221"}
	return Styles{
		UserMark:      r.NewStyle().Foreground(accent).Bold(true),
		AssistantMark: r.NewStyle().Foreground(green),
		ToolMark:      r.NewStyle().Foreground(yellow),
		ToolName:      r.NewStyle().Bold(true),
		ToolArg:       r.NewStyle().Foreground(dim),
		ToolOK:        r.NewStyle().Foreground(green),
		ToolFail:      r.NewStyle().Foreground(red),
		Output:        r.NewStyle().Foreground(dim),
		Dim:           r.NewStyle().Foreground(dim),
		Error:         r.NewStyle().Foreground(red).Bold(true),
		Info:          r.NewStyle().Foreground(dim).Italic(true),
		SummaryHead:   r.NewStyle().Foreground(accent).Bold(true),
	}
}
