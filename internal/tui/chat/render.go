package chat

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/internal/tui/vlist"
)

// Display bounds: a message is never wrapped or drawn whole when it is
// huge; the log keeps everything.
const (
	gutter          = 2   // "❯ ", "● " before each item
	previewLines    = 4   // tool output lines shown collapsed
	expandedLines   = 400 // tool output lines shown expanded
	maxMessageLines = 300 // user/assistant/note lines drawn
	maxDisplayBytes = ShownBytes
	summaryPreview  = 8 // summary lines shown collapsed
	diffPreview     = 6 // lines of a Write's or Edit's change shown collapsed
	liveLines       = 5 // lines of a running command's output shown
)

// ShownBytes is the most of a message's text the chat draws: the loader
// reads no more of it (session.Store.TailShown).
const ShownBytes = 64 << 10

// renderer draws items; markdown may be nil in draft-only contexts.
type renderer struct {
	st     theme.Chat
	rst    theme.Report
	md     *markdown.Renderer
	expand bool // ctrl+o: every tool output expanded
}

// body is the text of an item that goes through markdown, cut to a size
// that renders quickly.
func (it *item) body() string {
	return clip(it.text, maxDisplayBytes, maxMessageLines, it.clipped)
}

// clip cuts s to at most maxBytes and maxLines, saying what it left out;
// clipped: s is already the head of a longer text.
func clip(s string, maxBytes, maxLines int, clipped bool) string {
	cut := clipped
	if len(s) > maxBytes {
		s = strings.ToValidUTF8(s[:maxBytes], "")
		cut = true
	}
	if n := strings.Count(s, "\n"); n >= maxLines {
		i := 0
		for k := 0; k < maxLines; k++ {
			i += strings.IndexByte(s[i:], '\n') + 1
		}
		s = s[:i]
		cut = true
	}
	if cut {
		s = strings.TrimRight(s, "\n") + "\n\n… (cut for display; the session log has it all)"
	}
	return s
}

// draft renders an item without glamour: plain wrapped text for markdown
// kinds, the final form for the others.
func (r *renderer) draft(it *item, width int) []string {
	if it.kind.markdown() {
		return r.frame(it, markdown.Plain(it.body(), max(width-gutter, 10)), width)
	}
	return r.final(it, nil, width)
}

// final renders an item; md holds the markdown lines of markdown kinds.
func (r *renderer) final(it *item, md []string, width int) []string {
	inner := max(width-gutter, 10)
	switch it.kind {
	case KindUser:
		lines := wrapLines(clip(it.text, maxDisplayBytes, maxMessageLines, it.clipped), inner)
		return prefixed(lines, r.st.UserMark.Render("❯ "), "  ", nil, width)
	case KindTool:
		return r.tool(it, width)
	case KindError:
		lines := prefixed(wrapLines(it.text, inner), r.st.Error.Render("✗ "), "  ", &r.st.Error, width)
		if it.hint != "" {
			lines = append(lines, vlist.Fit(r.st.Dim.Render("  "+it.hint), width))
		}
		return lines
	case KindInfo:
		return prefixed(wrapLines(it.text, inner), r.st.Info.Render("⎿ "), "  ", &r.st.Info, width)
	case KindReport:
		if it.report == nil {
			return nil
		}
		return report.Render(*it.report, width, r.rst)
	}
	return r.frame(it, md, width)
}

// frame puts a markdown kind's rendered lines in their gutter.
func (r *renderer) frame(it *item, md []string, width int) []string {
	switch it.kind {
	case KindSummary:
		head := r.st.SummaryHead.Render("▌ " + it.arg)
		lines := md
		more := 0
		if !it.expanded && !r.expand && len(lines) > summaryPreview {
			more = len(lines) - summaryPreview
			lines = lines[:summaryPreview]
		}
		out := []string{vlist.Fit(head, width)}
		out = append(out, prefixed(lines, r.st.SummaryHead.Render("▌ "), r.st.SummaryHead.Render("▌ "), nil, width)...)
		if more > 0 {
			out = append(out, vlist.Fit(r.st.Dim.Render(fmt.Sprintf("  … +%d lines (click or ctrl+o to expand)", more)), width))
		}
		return out
	case KindNote:
		return prefixed(md, r.st.Dim.Render("· "), "  ", nil, width)
	}
	out := prefixed(md, r.st.AssistantMark.Render("● "), "  ", nil, width)
	if it.interrupted {
		out = append(out, vlist.Fit(r.st.Info.Render("  ⎿ interrupted"), width))
	}
	return out
}

func (r *renderer) tool(it *item, width int) []string {
	var mark string
	switch it.state {
	case toolDone:
		mark = r.st.ToolOK.Render("✓")
	case toolFailed:
		mark = r.st.ToolFail.Render("✗")
	case toolDenied:
		mark = r.st.ToolFail.Render("✗ denied")
	case toolInterrupted:
		mark = r.st.ToolFail.Render("⎿ interrupted")
	case toolRunning:
		mark = r.st.Dim.Render("… running")
	default:
		mark = r.st.Dim.Render("…")
	}
	out := []string{r.toolHead(it, mark, width)}
	if it.state < toolDone {
		return out
	}
	text := it.output
	if it.expanded || r.expand {
		if it.full != "" {
			text = it.full
		}
	}
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return out
	}
	limit := previewLines
	if it.expanded || r.expand {
		limit = expandedLines
	}
	total := strings.Count(text, "\n") + 1
	lines := splitN(text, limit)
	for i, l := range lines {
		p := "  ⎿ "
		if i > 0 {
			p = "    "
		}
		out = append(out, vlist.Fit(r.st.Output.Render(p+l), width))
	}
	if more := total - len(lines); more > 0 {
		out = append(out, r.moreLines(it, more, width))
	}
	if it.diff != "" {
		out = append(out, r.diff(it, width)...)
	}
	return out
}

// toolHead is a tool call's first line: its name and key argument, then
// mark (its state).
func (r *renderer) toolHead(it *item, mark string, width int) string {
	head := r.st.ToolMark.Render("⏺ ") + r.st.ToolName.Render(it.tool)
	if it.arg != "" {
		head += r.st.ToolArg.Render("(" + it.arg + ")")
	}
	// Keep the status visible: cut the argument, not the mark.
	room := width - ansi.StringWidth(mark) - 1
	if ansi.StringWidth(head) > room {
		head = ansi.Truncate(head, max(room, 4), "…")
	}
	return head + " " + mark
}

// running draws a tool call while it runs: what it does, a spinner and
// the time since it started, then the last lines of its output so far
// (Bash). Its result replaces all of it.
func (r *renderer) running(it *item, width int, spin string, elapsed time.Duration) []string {
	out := []string{r.toolHead(it, spin+" "+r.st.Dim.Render(elapsedText(elapsed)), width)}
	tail := strings.TrimRight(it.live, "\n")
	if tail == "" {
		return out
	}
	lines := strings.Split(tail, "\n")
	lines = lines[max(len(lines)-liveLines, 0):]
	for i, l := range lines {
		p := "  ⎿ "
		if i > 0 {
			p = "    "
		}
		out = append(out, vlist.Fit(r.st.Output.Render(p+l), width))
	}
	return out
}

// elapsedText is a running call's time: "0.4s", "12.0s", "2m05s".
func elapsedText(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Truncate(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// moreLines says how many lines of a tool's result are not shown.
func (r *renderer) moreLines(it *item, more, width int) string {
	hint := "click or ctrl+o to expand"
	if it.expanded || r.expand {
		hint = "the session log has all of it"
	}
	return vlist.Fit(r.st.Dim.Render(fmt.Sprintf("    … +%d lines (%s)", more, hint)), width)
}

// diff draws the change a Write or Edit made, as the permission dialog
// does: added lines green, removed lines red, a few of them until
// expanded. The file names of the diff's header are the call's own.
func (r *renderer) diff(it *item, width int) []string {
	lines := strings.Split(strings.TrimRight(it.diff, "\n"), "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "--- ") || strings.HasPrefix(lines[0], "+++ ")) {
		lines = lines[1:]
	}
	limit := diffPreview
	if it.expanded || r.expand {
		limit = expandedLines
	}
	var out []string
	for _, l := range lines[:min(limit, len(lines))] {
		st := r.st.Output
		switch {
		case strings.HasPrefix(l, "+"):
			st = r.st.DiffAdd
		case strings.HasPrefix(l, "-"):
			st = r.st.DiffDel
		case strings.HasPrefix(l, "@@"):
			st = r.st.DiffHunk
		}
		out = append(out, vlist.Fit("    "+st.Render(l), width))
	}
	if more := len(lines) - min(limit, len(lines)); more > 0 {
		out = append(out, r.moreLines(it, more, width))
	}
	return out
}

// splitN returns the first n lines of s without splitting all of it.
func splitN(s string, n int) []string {
	out := make([]string, 0, min(n, 16))
	for len(out) < n {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
	return out
}

// wrapLines wraps plain text at width cells.
func wrapLines(s string, width int) []string {
	return markdown.Plain(s, width)
}

// prefixed puts first before the first line and rest before the others,
// styles the lines with st (nil: as they are) and fits them to width.
func prefixed(lines []string, first, rest string, st *lipgloss.Style, width int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" && i > 0 && strings.TrimSpace(rest) == "" {
			continue // no trailing blanks on empty lines
		}
		if l != "" && st != nil {
			l = st.Render(l)
		}
		out[i] = vlist.Fit(p+l, width)
	}
	if len(out) == 0 {
		out = []string{vlist.Fit(first, width)}
	}
	return out
}
