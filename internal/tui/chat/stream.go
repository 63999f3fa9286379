package chat

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

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
//
// A flush costs what arrived since the last one, not the answer so far:
// the text is scanned for block ends once; a plain tail (one long
// paragraph, a code block still open) keeps the lines later text cannot
// change and wraps only the rest; and the laid-out lines keep everything
// before the first part that changed.
type stream struct {
	gen       int
	text      strings.Builder
	reasoning int // reasoning bytes seen
	calls     []string
	width     int

	split  splitter
	done   int        // bytes of text covered by blocks
	blocks [][]string // rendered complete blocks (plain until rendered)
	tail   []string   // the tail's lines; tail[:frozen] are final
	dirty  bool

	// A plain tail: its first frozen lines, covering frozenAt bytes of
	// it, no longer change as text arrives (0 when the tail is markdown).
	frozen, frozenAt int

	// lines is the stream laid out: blocks, then the tail, in the
	// assistant's gutter, then the announced tool calls. lines[:tailAt]
	// are the blocks (and the blank line after them); the first `framed`
	// tail lines are laid out for good.
	lines          []string
	blockAt        []int // where each block starts in lines
	tailAt, framed int

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

// splitter finds where blocks end in text that grows: at a blank line
// outside a code fence. Each byte is looked at once.
type splitter struct {
	start   int // where the unfinished block starts
	line    int // where the unfinished line starts
	seen    int // bytes of the unfinished line already searched for its end
	inFence bool
}

// next returns the blocks completed in text since the last call, and
// where the unfinished tail starts (blocks and the blank lines after them
// end there).
func (p *splitter) next(text string) (blocks []string, done int) {
	for {
		from := max(p.line, p.seen)
		i := strings.IndexByte(text[from:], '\n')
		if i < 0 {
			p.seen = len(text)
			return blocks, p.start
		}
		end := from + i
		line := strings.TrimSpace(text[p.line:end])
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			p.inFence = !p.inFence
		}
		if line == "" && !p.inFence {
			if blk := text[p.start:p.line]; strings.TrimSpace(blk) != "" {
				blocks = append(blocks, blk)
			}
			p.start = end + 1
		}
		p.line = end + 1
	}
}

// splitBlocks cuts s after its last complete block. It returns the
// complete blocks and how many bytes of s they (and the blank lines after
// them) take.
func splitBlocks(s string) (blocks []string, consumed int) {
	var p splitter
	return p.next(s)
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
		s.width, s.done, s.blocks, s.split = width, 0, nil, splitter{}
		s.blockAt, s.lines, s.tailAt, s.framed = nil, nil, 0, 0
		s.resetTail()
	}
	text := s.text.String()
	blocks, done := s.split.next(text)
	first = len(s.blocks)
	for _, b := range blocks {
		s.blocks = append(s.blocks, markdown.Plain(b, width))
	}
	if done != s.done {
		s.done = done
		s.resetTail()
	}
	s.tailSeq++
	tail := text[s.done:]
	switch {
	case strings.TrimSpace(tail) == "":
		s.resetTail()
	case !highlighted(tail):
		if s.tailShown != 0 {
			s.resetTail() // was markdown: plain from here on
		}
		s.plainTail(tail, width)
	default:
		if s.tailShown == 0 || s.tailDone != s.done {
			// No render of this tail yet: plain until one arrives. A
			// render of an earlier state stays until the next one: it
			// lags the text by one render, and never flickers.
			s.resetTail()
			s.tail = markdown.Plain(tail, width)
		}
		tailSrc = tail
	}
	s.dirty = false
	return first, blocks, tailSrc
}

// resetTail forgets the tail's lines: the tail starts again (a block
// ended, the width changed) or changes how it is drawn.
func (s *stream) resetTail() {
	s.tail, s.frozen, s.frozenAt, s.tailShown = nil, 0, 0, 0
	s.framed = 0
}

// plainTail wraps the part of a plain tail after its frozen lines, and
// freezes all of it but the last two lines: a greedy wrap never changes
// an earlier line when text is added at the end. The split is checked
// (the two parts wrap as the whole did) and not taken when it does not.
func (s *stream) plainTail(tail string, width int) {
	rest := tail[s.frozenAt:]
	live := markdown.Plain(rest, width)
	if keep := len(live) - 2; keep > 0 {
		if end, next, ok := lineEnd(rest, live[:keep]); ok &&
			slices.Equal(markdown.Plain(rest[:end], width), live[:keep]) &&
			slices.Equal(markdown.Plain(rest[next:], width), live[keep:]) {
			s.tail = append(append(s.tail[:s.frozen], live[:keep]...), live[keep:]...)
			s.frozen += keep
			s.frozenAt += next
			return
		}
	}
	s.tail = append(s.tail[:s.frozen], live...)
}

// lineEnd finds lines, the wrap of the start of src, in src: it returns
// where the last of them ends and where the text after it starts (past
// the spaces or the line break the wrap dropped there).
func lineEnd(src string, lines []string) (end, next int, ok bool) {
	pos := 0
	for _, l := range lines {
		i := strings.Index(src[pos:], l)
		if i < 0 || strings.TrimSpace(src[pos:pos+i]) != "" {
			return 0, 0, false
		}
		pos += i + len(l)
	}
	end, next = pos, pos
	for next < len(src) && src[next] == ' ' {
		next++
	}
	if next < len(src) && src[next] == '\n' {
		next++
	}
	return end, next, true
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
		s.resetTail()
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

// frameLine puts line k of the answer's body in the assistant's gutter,
// as frame does for a finished answer.
func (m *Model) frameLine(k int, l string) string {
	switch {
	case k == 0:
		return vlist.Fit(m.r.st.AssistantMark.Render("● ")+l, m.width)
	case l == "":
		return ""
	}
	return vlist.Fit("  "+l, m.width)
}

// layStream lays out the streaming answer from block `from` on (len
// blocks: the tail); the lines before it are kept, and so are the tail's
// lines laid out for good.
func (m *Model) layStream(from int) {
	s := m.stream
	if from < len(s.blockAt) || len(s.blockAt) < len(s.blocks) {
		from = min(from, len(s.blockAt))
		cut := s.tailAt
		if from < len(s.blockAt) {
			cut = s.blockAt[from]
			if from > 0 {
				cut-- // the blank line before it
			}
		}
		s.lines, s.blockAt, s.framed = s.lines[:cut], s.blockAt[:from], 0
		for i := from; i < len(s.blocks); i++ {
			if i > 0 {
				s.lines = append(s.lines, "")
			}
			s.blockAt = append(s.blockAt, len(s.lines))
			for _, l := range s.blocks[i] {
				s.lines = append(s.lines, m.frameLine(len(s.lines), l))
			}
		}
		s.tailAt = len(s.lines)
	}
	// The tail, after a blank line when blocks come before it. Lines kept
	// from the last layout sit where they were: nothing before them
	// changed since (a change of blocks or of the tail resets framed).
	start := s.tailAt
	if len(s.blocks) > 0 && len(s.tail) > 0 {
		start++
	}
	keep := min(s.framed, s.frozen)
	if keep == 0 {
		s.lines = s.lines[:s.tailAt]
		if start > s.tailAt {
			s.lines = append(s.lines, "")
		}
	} else {
		s.lines = s.lines[:start+keep]
	}
	for k := keep; k < len(s.tail); k++ {
		s.lines = append(s.lines, m.frameLine(start+k, s.tail[k]))
	}
	s.framed = s.frozen
	if len(s.lines) == 0 && s.reasoning > 0 {
		s.lines = append(s.lines, m.r.st.Info.Render("✻ thinking…"))
	}
	for i, c := range s.calls {
		if i == 0 && len(s.lines) > 0 {
			s.lines = append(s.lines, "")
		}
		s.lines = append(s.lines, vlist.Fit(m.r.st.ToolMark.Render("⏺ ")+m.r.st.ToolName.Render(c)+" "+m.r.st.Dim.Render("…"), m.width))
	}
}
