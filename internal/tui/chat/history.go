package chat

import (
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/vlist"
)

// Reset empties the chat (a new session).
func (m *Model) Reset() {
	m.items, m.byCall = nil, map[string]*item{}
	clear(m.running)
	m.stream = nil
	m.list.Reset()
	m.oldest, m.hasOlder, m.loadingOlder = 0, false, false
	m.dirty = true
}

// SetHistory shows a session's history: the loaded tail of its log and
// its active summaries. hasOlder says older messages can be paged in.
func (m *Model) SetHistory(msgs []session.Message, sums []session.Summary, hasOlder bool) {
	m.Reset()
	m.items = m.build(msgs, sums)
	m.hasOlder = hasOlder
	if len(msgs) > 0 {
		m.oldest = msgs[0].Seq
	}
}

// Prepend adds older messages before what is loaded, keeping the window
// where it is.
func (m *Model) Prepend(msgs []session.Message, hasOlder bool) {
	m.loadingOlder = false
	m.hasOlder = hasOlder
	if len(msgs) == 0 {
		return
	}
	m.oldest = msgs[0].Seq
	older := m.build(msgs, nil)
	// Summaries shown first may cover part of the older messages: merge.
	head := 0
	for head < len(m.items) && m.items[head].kind == KindSummary {
		head++
	}
	merged := append(older, m.items[:head]...)
	slices.SortStableFunc(merged, func(a, b *item) int { return cmpKey(a, b) })
	m.items = append(merged, m.items[head:]...)
	switch {
	case m.list.Following():
	case m.list.PinnedTop():
		m.list.SetTop(vlist.Anchor{})
	default:
		top := m.list.Top()
		if top.Row < head {
			// A leading summary moved in among the older messages: keep
			// the first message where it was instead.
			top = vlist.Anchor{Row: head}
		}
		top.Row += len(merged) - head
		m.list.SetTop(top)
	}
	m.dirty = true
}

// sortKey orders items by log position; a summary sorts after the last
// message it covers.
func sortKey(it *item) float64 {
	if it.kind == KindSummary {
		return float64(it.seq) + 0.5
	}
	return float64(it.seq)
}

func cmpKey(a, b *item) int {
	ka, kb := sortKey(a), sortKey(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

func (m *Model) build(msgs []session.Message, sums []session.Summary) []*item {
	b := builder{next: &m.nextID, calls: m.byCall}
	var out []*item
	for _, msg := range msgs {
		out = append(out, b.add(msg)...)
	}
	for _, s := range sums {
		out = append(out, summaryItem(&b, s))
	}
	if len(sums) > 0 {
		slices.SortStableFunc(out, cmpKey)
	}
	return out
}

func (m *Model) push(it *item) *item {
	m.nextID++
	it.id = m.nextID
	if it.seq == 0 && len(m.items) > 0 {
		it.seq = m.items[len(m.items)-1].seq
	}
	m.items = append(m.items, it)
	m.dirty = true
	return it
}

// AddUser shows a message the user sent, and scrolls to the end.
func (m *Model) AddUser(text string) {
	m.push(&item{kind: KindUser, text: termtext.Display(text), unlogged: true})
	m.list.ScrollBottom()
}

// Fence puts text in a markdown code block no line of it can close.
func Fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + text + "\n" + f
}

// ShellBlocks is how the output of "!commands" ($ command, then what it
// printed) reaches the model, after a message or kept alone in the log.
func ShellBlocks(outs []string) string {
	blocks := make([]string, len(outs))
	for i, out := range outs {
		blocks[i] = "<shell-output>\n" + out + "\n</shell-output>"
	}
	return strings.Join(blocks, "\n\n")
}

// shellOutput is what ShellBlocks framed, each output's frame taken off.
func shellOutput(blocks string) string {
	s := strings.TrimSuffix(strings.TrimPrefix(blocks, "<shell-output>\n"), "\n</shell-output>")
	return strings.ReplaceAll(s, "\n</shell-output>\n\n<shell-output>\n", "\n\n")
}

// AddNote shows a command's text output (markdown).
func (m *Model) AddNote(text string) {
	m.push(&item{kind: KindNote, text: termtext.Display(text)})
}

// AddInfo shows a one-line notice.
func (m *Model) AddInfo(text string) {
	m.push(&item{kind: KindInfo, text: termtext.Display(text)})
}

// AddError shows an error line and what the user can do about it.
func (m *Model) AddError(text, hint string) {
	m.push(&item{kind: KindError, text: termtext.Display(text), hint: termtext.Label(hint)})
}

// AddReport shows a command's boxed report.
func (m *Model) AddReport(rep commands.Report) {
	r := rep
	m.push(&item{kind: KindReport, report: &r})
}

// ToggleExpandAll expands or collapses every tool output and summary.
func (m *Model) ToggleExpandAll() {
	m.r.expand = !m.r.expand
	for _, it := range m.items {
		if it.kind == KindTool || it.kind == KindSummary {
			it.version++
		}
	}
	m.dirty = true
}
