package chat

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gencode/gencode/internal/tui/markdown"
)

// flushInterval throttles re-rendering the streaming answer: deltas are
// appended as they come, the tail is drawn at most this often.
const flushInterval = 40 * time.Millisecond

// maxHighlightTail is the size above which the unfinished tail is drawn as
// plain text until it is complete (a long code block still streaming).
const maxHighlightTail = 2 << 10

// stream is the answer being streamed. Its text is split into complete
// blocks, each rendered once (in the background), and the unfinished tail,
// the only part re-rendered as text arrives.
type stream struct {
	gen       int
	text      strings.Builder
	reasoning int // reasoning bytes seen
	calls     []string
	width     int

	done      int        // bytes of text covered by blocks
	blocks    [][]string // rendered complete blocks (plain until rendered)
	blockSrc  []string
	tail      []string
	dirty     bool
	lines     []string // the assembled lines, rebuilt on flush
	tailCount int      // tail renders (for tests)
}

type flushMsg struct{ gen int }

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

// flush splits newly completed blocks off the tail and redraws the tail.
// It returns the new blocks to render in the background (first index).
func (s *stream) flush(md *markdown.Renderer, width int) (first int, srcs []string) {
	if s.width != width {
		s.width, s.done, s.blocks, s.blockSrc = width, 0, nil, nil
	}
	text := s.text.String()
	blocks, n := splitBlocks(text[s.done:])
	first = len(s.blocks)
	for _, b := range blocks {
		s.blocks = append(s.blocks, markdown.Plain(b, width))
		s.blockSrc = append(s.blockSrc, b)
	}
	s.done += n
	tail := text[s.done:]
	switch {
	case strings.TrimSpace(tail) == "":
		s.tail = nil
	case len(tail) > maxHighlightTail || openFence(tail):
		s.tail = markdown.Plain(tail, width)
	default:
		s.tail = md.Render(tail, width)
		s.tailCount++
	}
	s.dirty = false
	return first, blocks
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
