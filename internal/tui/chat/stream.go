package chat

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/vlist"
)

// flushInterval throttles re-rendering the streaming answer: deltas are
// appended as they come, the tail is drawn at most this often.
const flushInterval = 40 * time.Millisecond

// maxHighlightTail is the size above which the unfinished tail is drawn as
// plain text until it is complete (a long code block still streaming).
const maxHighlightTail = 2 << 10

// stream is the answer being streamed. Its text is split into complete
// blocks, each rendered once (in the background), and the unfinished tail,
// the only part re-rendered as text arrives, in the background too: a
// flush draws the tail plain only when no markdown render of it is shown,
// and asks for one.
type stream struct {
	gen       int
	text      strings.Builder
	reasoning int // reasoning bytes seen
	calls     []string
	width     int

	done     int        // bytes of text covered by blocks
	blocks   [][]string // rendered complete blocks (plain until rendered)
	blockSrc []string
	tail     []string
	dirty    bool
	lines    []string // the assembled lines, rebuilt on flush

	// The tail's markdown render: tailSeq numbers the tail's states (one
	// per flush), tailShown is the state the shown render was made from
	// (0: plain), tailBusy says a render is in flight. A render is shown
	// only if it is of this stream, this width and this block split, and
	// newer than the one shown.
	tailSeq, tailShown int
	tailDone           int // s.done when the shown render was asked for
	tailBusy           bool
	tailCount          int // tail renders received (for tests)
}

type flushMsg struct{ gen int }

// tailRenderedMsg is a markdown render of the tail as it was at state seq.
type tailRenderedMsg struct {
	gen, seq, done, width int
	lines                 []string
}

type blockRenderedMsg struct {
	gen, index, width int
	lines             []string
}

func flushCmd(gen int) tea.Cmd {
	return tea.Tick(flushInterval, func(time.Time) tea.Msg { return flushMsg{gen: gen} })
}

// splitBlocks cuts s after its last complete block: blocks end at a blank
// line outside a code fence. It returns the complete blocks and how many
// bytes of s they (and the blank lines after them) take.
func splitBlocks(s string) (blocks []string, consumed int) {
	inFence := false
	start, pos := 0, 0
	for {
		i := strings.IndexByte(s[pos:], '\n')
		if i < 0 {
			return blocks, consumed
		}
		line := strings.TrimSpace(s[pos : pos+i])
		next := pos + i + 1
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
		}
		if line == "" && !inFence {
			if blk := s[start:pos]; strings.TrimSpace(blk) != "" {
				blocks = append(blocks, blk)
			}
			start, consumed = next, next
		}
		pos = next
	}
}

// openFence reports whether s ends inside a code fence.
func openFence(s string) bool {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			n++
		}
	}
	return n%2 == 1
}

// flush splits newly completed blocks off the tail and redraws the tail
// without glamour. It returns the new blocks to render in the background
// (first index), and the tail to render there ("" for none).
func (s *stream) flush(width int) (first int, srcs []string, tailSrc string) {
	if s.width != width {
		s.width, s.done, s.blocks, s.blockSrc = width, 0, nil, nil
		s.tailShown = 0
	}
	text := s.text.String()
	blocks, n := splitBlocks(text[s.done:])
	first = len(s.blocks)
	for _, b := range blocks {
		s.blocks = append(s.blocks, markdown.Plain(b, width))
		s.blockSrc = append(s.blockSrc, b)
	}
	s.done += n
	s.tailSeq++
	tail := text[s.done:]
	switch {
	case strings.TrimSpace(tail) == "":
		s.tail, s.tailShown = nil, 0
	case !highlighted(tail):
		s.tail, s.tailShown = markdown.Plain(tail, width), 0
	default:
		if s.tailShown == 0 || s.tailDone != s.done {
			// No render of this tail yet: plain until one arrives. A
			// render of an earlier state stays until the next one: it
			// lags the text by one render, and never flickers.
			s.tail, s.tailShown = markdown.Plain(tail, width), 0
		}
		tailSrc = tail
	}
	s.dirty = false
	return first, blocks, tailSrc
}

// renderTail asks for a markdown render of the tail src in the background,
// unless one is in flight (its arrival asks for the next).
func (s *stream) renderTail(md *markdown.Renderer, src string) tea.Cmd {
	if s.tailBusy || src == "" || md == nil {
		return nil
	}
	s.tailBusy = true
	gen, seq, done, width := s.gen, s.tailSeq, s.done, s.width
	return func() tea.Msg {
		return tailRenderedMsg{gen: gen, seq: seq, done: done, width: width, lines: md.Render(src, width)}
	}
}

// tailRendered shows a tail render if it is still of this stream's tail
// and newer than the one shown. It returns whether the tail changed, and
// the tail to render next when the text moved on meanwhile.
func (s *stream) tailRendered(msg tailRenderedMsg) (shown bool, next string) {
	s.tailBusy = false
	s.tailCount++
	tail := s.text.String()[s.done:]
	if !highlighted(tail) {
		return false, ""
	}
	if msg.width == s.width && msg.done == s.done && msg.seq > s.tailShown {
		s.tail, s.tailShown, s.tailDone = msg.lines, msg.seq, msg.done
		shown = true
	}
	if s.tailShown < s.tailSeq {
		next = tail
	}
	return shown, next
}

// highlighted reports whether a tail is drawn as markdown: not blank, not
// too long, not inside a code fence still open.
func highlighted(tail string) bool {
	return strings.TrimSpace(tail) != "" && len(tail) <= maxHighlightTail && !openFence(tail)
}

func renderBlocksCmd(md *markdown.Renderer, gen, first, width int, srcs []string) tea.Cmd {
	cmds := make([]tea.Cmd, len(srcs))
	for i, src := range srcs {
		idx := first + i
		cmds[i] = func() tea.Msg {
			return blockRenderedMsg{gen: gen, index: idx, width: width, lines: md.Render(src, width)}
		}
	}
	return tea.Sequence(cmds...)
}

// body is the stream's rendered markdown so far: blocks, then the tail.
func (s *stream) body() []string {
	var out []string
	for _, b := range s.blocks {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	if len(s.tail) > 0 {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, s.tail...)
	}
	return out
}

// assembleStream lays out the streaming answer: its blocks and tail in
// the assistant's gutter, then the tool calls it announced.
func (m *Model) assembleStream() {
	s := m.stream
	var out []string
	body := s.body()
	if len(body) > 0 {
		out = m.r.frame(&item{kind: KindAssistant}, body, m.width)
	} else if s.reasoning > 0 {
		out = append(out, m.r.st.Info.Render("✻ thinking…"))
	}
	for i, c := range s.calls {
		if i == 0 && len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, vlist.Fit(m.r.st.ToolMark.Render("⏺ ")+m.r.st.ToolName.Render(c)+" "+m.r.st.Dim.Render("…"), m.width))
	}
	s.lines = out
}
