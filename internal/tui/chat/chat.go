// Package chat is the conversation view: user and assistant messages, tool
// calls, notes, errors and report boxes, with the answer streaming at the
// bottom.
//
// It stays fast in long sessions: each item's render is cached by (item,
// version, width) in a bounded LRU; markdown is rendered by glamour in
// background Cmds (a plain draft shows until it arrives, so no frame waits
// for glamour); only the items in the window are ever laid out, so the cost
// of a frame does not grow with the session; and a streaming answer
// re-renders only its unfinished tail, at most every flushInterval.
package chat

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/theme"
)

// cacheBytes bounds the render cache (rendered text, ANSI included).
const cacheBytes = 48 << 20

// wheelLines is how far one mouse wheel step scrolls.
const wheelLines = 3

// NeedOlderMsg asks the parent to load the messages before BeforeSeq and
// hand them to Prepend: the view scrolled near the top of what is loaded.
type NeedOlderMsg struct{ BeforeSeq int64 }

type renderedMsg struct {
	key   cacheKey
	lines []string
}

// Stats count the chat's render work, for tests and benchmarks.
type Stats struct {
	ItemRenders int // items rendered on the UI goroutine (drafts and cheap kinds)
	Layouts     int // frames laid out
}

// anchor is a line of an item: the first line of the window when the view
// does not follow the end.
type anchor struct{ idx, line int }

// Model is the chat view.
type Model struct {
	r     renderer
	md    *markdown.Renderer
	cache *renderCache
	stats *Stats

	items  []*item
	byCall map[string]*item
	nextID int

	width, height int
	follow        bool   // pinned to the end: new output scrolls into view
	top           anchor // first line of the window when !follow
	pinTop        bool   // Home was pressed: stay at the start as older pages arrive
	frame         []string
	frameIDs      []int // item id of each frame line
	dirty         bool

	stream       *stream
	streamGen    int
	flushPending bool

	pending map[cacheKey]bool // markdown renders in flight

	oldest       int64 // seq of the oldest loaded message (0: none)
	hasOlder     bool
	loadingOlder bool
}

// New returns an empty chat drawing with th's styles and md's markdown.
func New(th *theme.Theme, md *markdown.Renderer) Model {
	return Model{
		r:       renderer{st: th.Chat, rst: th.Report, md: md},
		md:      md,
		cache:   newRenderCache(cacheBytes),
		stats:   &Stats{},
		byCall:  map[string]*item{},
		follow:  true,
		dirty:   true,
		pending: map[cacheKey]bool{},
	}
}

// Stats returns the render counters.
func (m Model) Stats() Stats { return *m.stats }

// Idle reports whether no render or page of history is in flight.
func (m Model) Idle() bool { return len(m.pending) == 0 && !m.loadingOlder }

// Len is the number of items.
func (m Model) Len() int { return len(m.items) }

// SetSize sets the view's size; a new width reflows everything (lazily:
// only what becomes visible is rendered again).
func (m *Model) SetSize(width, height int) {
	if width != m.width || height != m.height {
		if width != m.width && m.stream != nil {
			m.stream.dirty = true // redrawn at the new width by the next flush
		}
		m.width, m.height = max(width, 20), max(height, 1)
		m.dirty = true
	}
}

// Following reports whether the view is pinned to the end.
func (m Model) Following() bool { return m.follow }

// Reset empties the chat (a new session).
func (m *Model) Reset() {
	m.items, m.byCall = nil, map[string]*item{}
	m.stream, m.follow, m.top, m.pinTop = nil, true, anchor{}, false
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
	if !m.follow && m.pinTop {
		m.top = anchor{}
	} else if !m.follow {
		if m.top.idx < head {
			// A leading summary moved in among the older messages: keep
			// the first message where it was instead.
			m.top = anchor{idx: head}
		}
		m.top.idx += len(merged) - head
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
	m.follow = true
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

// inner is the width of an item's text, right of the gutter.
func (m *Model) inner() int { return max(m.width-gutter, 10) }

// FlushMsg is the message the stream's throttle tick delivers; benchmarks
// send it to redraw the tail without waiting.
func (m Model) FlushMsg() tea.Msg {
	if m.stream == nil {
		return nil
	}
	return flushMsg{gen: m.stream.gen}
}

// TailRenders counts markdown renders of the streaming tail (for tests).
func (m Model) TailRenders() int64 {
	if m.stream == nil {
		return 0
	}
	return int64(m.stream.tailCount)
}

// Streaming reports whether an answer is streaming.
func (m Model) Streaming() bool { return m.stream != nil }

// HandleEvent shows one event of a running turn.
func (m *Model) HandleEvent(ev agent.Event) tea.Cmd {
	switch ev.Kind {
	case agent.EventTextDelta, agent.EventReasoningDelta, agent.EventToolCallStart:
		s := m.ensureStream()
		switch ev.Kind {
		case agent.EventTextDelta:
			s.text.WriteString(termtext.Display(ev.Text))
		case agent.EventReasoningDelta:
			s.reasoning += len(ev.Text)
		default:
			s.calls = append(s.calls, termtext.Label(ev.Text))
		}
		s.dirty = true
		if m.flushPending {
			return nil
		}
		m.flushPending = true
		return flushCmd(s.gen)
	case agent.EventMessage:
		if ev.Message != nil {
			m.message(*ev.Message)
		}
	case agent.EventToolRun:
		if ev.Call != nil {
			if it, ok := m.byCall[ev.Call.ID]; ok {
				it.state = toolRunning
				it.version++
				m.dirty = true
			}
		}
	case agent.EventRetry:
		m.endStream()
		m.AddInfo("↻ " + ev.Text)
	case agent.EventDone:
		m.endStream()
	case agent.EventError:
		m.endStream()
	}
	return nil
}

// AddCompaction notes a finished or failed compaction in the chat.
func (m *Model) AddCompaction(r summarize.Report) {
	if s := compactionNote(r); s != "" {
		m.AddInfo(s)
	}
}

// compactionNote is the chat's line about a finished or failed compaction.
func compactionNote(r summarize.Report) string {
	switch r.Phase {
	case summarize.Finished:
		return commands.AutoNotice(r)
	case summarize.Failed:
		msg := "compaction failed; the originals are kept"
		if r.Err != nil {
			msg += ": " + r.Err.Error()
		}
		return msg
	}
	return ""
}

func (m *Model) ensureStream() *stream {
	if m.stream == nil {
		m.streamGen++
		m.stream = &stream{gen: m.streamGen}
	}
	m.dirty = true
	return m.stream
}

// endStream drops the streaming answer: its text arrived as a message, or
// the turn ended without one.
func (m *Model) endStream() {
	if m.stream != nil {
		m.stream = nil
		m.dirty = true
	}
}

// message shows a message the agent appended to the log.
func (m *Model) message(msg session.Message) {
	m.dirty = true
	switch msg.Role {
	case session.RoleUser:
		// Shown when sent; learn its place in the log.
		for i := len(m.items) - 1; i >= 0; i-- {
			if it := m.items[i]; it.unlogged {
				it.seq, it.unlogged = msg.Seq, false
				return
			}
		}
		m.items = append(m.items, m.build([]session.Message{msg}, nil)...)
	case session.RoleAssistant:
		s := m.stream
		m.stream = nil
		added := m.build([]session.Message{msg}, nil)
		if s != nil && len(added) > 0 && added[0].kind == KindAssistant && s.width == m.inner() && len(s.lines) > 0 {
			// Show the streamed rendering until the full one is ready.
			m.cache.put(cacheKey{added[0].id, added[0].version, m.width}, m.r.frame(added[0], s.body(), m.width), true)
		}
		m.items = append(m.items, added...)
	case session.RoleTool:
		m.items = append(m.items, m.build([]session.Message{msg}, nil)...)
	}
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
		out = append(out, fit(m.r.st.ToolMark.Render("⏺ ")+m.r.st.ToolName.Render(c)+" "+m.r.st.Dim.Render("…"), m.width))
	}
	s.lines = out
}

// Update handles the chat's own messages (stream flushes, finished
// renders) and scrolling input routed to it by the parent.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case flushMsg:
		m.flushPending = false
		s := m.stream
		if s == nil || s.gen != msg.gen || !s.dirty {
			return m, nil
		}
		first, srcs := s.flush(m.md, m.inner())
		m.assembleStream()
		m.dirty = true
		if len(srcs) > 0 {
			return m, renderBlocksCmd(m.md, s.gen, first, s.width, srcs)
		}
	case blockRenderedMsg:
		s := m.stream
		if s == nil || s.gen != msg.gen || s.width != msg.width || msg.index >= len(s.blocks) {
			return m, nil
		}
		s.blocks[msg.index] = msg.lines
		m.assembleStream()
		m.dirty = true
	case renderedMsg:
		delete(m.pending, msg.key)
		if msg.key.width == m.width {
			m.cache.put(msg.key, msg.lines, false)
			m.dirty = true
		}
	case tea.MouseMsg:
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			m.ScrollUp(wheelLines)
		case msg.Button == tea.MouseButtonWheelDown:
			m.ScrollDown(wheelLines)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
			m.click(msg.Y)
		}
	case tea.KeyMsg:
		km := keys.Default().Chat
		switch {
		case key.Matches(msg, km.PageUp):
			m.ScrollUp(max(m.height-2, 1))
		case key.Matches(msg, km.PageDown):
			m.ScrollDown(max(m.height-2, 1))
		case key.Matches(msg, km.Top, km.Home):
			m.ScrollTop()
		case key.Matches(msg, km.Bottom, km.End):
			m.ScrollBottom()
		case key.Matches(msg, km.LineUp):
			m.ScrollUp(1)
		case key.Matches(msg, km.LineDown):
			m.ScrollDown(1)
		case key.Matches(msg, km.Expand):
			m.ToggleExpandAll()
		}
	}
	return m, nil
}

// click toggles the tool output or summary under row y of the view.
func (m *Model) click(y int) {
	if y < 0 || y >= len(m.frameIDs) {
		return
	}
	id := m.frameIDs[y]
	for i := len(m.items) - 1; i >= 0; i-- {
		it := m.items[i]
		if it.id != id {
			continue
		}
		if it.kind == KindTool || it.kind == KindSummary {
			it.expanded = !it.expanded
			it.version++
			m.dirty = true
		}
		return
	}
}

// count is the number of laid-out rows of items: the items and the stream.
func (m *Model) count() int {
	if m.stream != nil && len(m.stream.lines) > 0 {
		return len(m.items) + 1
	}
	return len(m.items)
}

// lines returns the rendered lines of row i, a blank separator first
// (except for the first row). want collects markdown items whose render
// is still a draft.
func (m *Model) lines(i int, want *[]*item) []string {
	var ls []string
	if i == len(m.items) {
		ls = m.stream.lines
	} else {
		it := m.items[i]
		key := cacheKey{it.id, it.version, m.width}
		e, ok := m.cache.get(key)
		if !ok {
			m.stats.ItemRenders++
			e = m.cache.put(key, m.r.draft(it, m.width), it.kind.markdown())
		}
		if e.draft && want != nil && !m.pending[key] {
			*want = append(*want, it)
		}
		ls = e.lines
	}
	if i == 0 {
		return ls
	}
	return append([]string{""}, ls...)
}

// ScrollUp moves the window n lines toward the start.
func (m *Model) ScrollUp(n int) {
	m.pinTop = false
	if m.follow {
		m.top = m.frameTop()
		m.follow = false
	}
	a := m.top
	for n > 0 {
		if a.line > 0 {
			d := min(n, a.line)
			a.line -= d
			n -= d
			continue
		}
		if a.idx == 0 {
			break
		}
		a.idx--
		a.line = len(m.lines(a.idx, nil))
	}
	m.top = a
	m.dirty = true
}

// ScrollDown moves the window n lines toward the end; reaching it pins the
// view to the end again.
func (m *Model) ScrollDown(n int) {
	m.pinTop = false
	if m.follow {
		return
	}
	a := m.top
	for n > 0 && a.idx < m.count() {
		h := len(m.lines(a.idx, nil))
		if a.line+n < h {
			a.line += n
			break
		}
		n -= h - a.line
		a.idx++
		a.line = 0
	}
	m.top = a
	m.dirty = true
}

// ScrollTop shows the start of the session: what is loaded now, and the
// older pages as they arrive.
func (m *Model) ScrollTop() {
	m.follow, m.top, m.pinTop, m.dirty = false, anchor{}, true, true
}

// ScrollBottom pins the view to the end.
func (m *Model) ScrollBottom() {
	m.follow, m.pinTop, m.dirty = true, false, true
}

// frameTop is the anchor of the window's first line in follow mode.
func (m *Model) frameTop() anchor {
	need := m.height
	for i := m.count() - 1; i >= 0; i-- {
		h := len(m.lines(i, nil))
		if h >= need {
			return anchor{idx: i, line: h - need}
		}
		need -= h
	}
	return anchor{}
}

// Sync lays out the window if anything changed and returns the Cmds it
// needs: background markdown renders of drafts in (and just above) the
// window, and older history when the window nears the top.
func (m *Model) Sync() tea.Cmd {
	if !m.dirty || m.width == 0 {
		return nil
	}
	m.dirty = false
	m.stats.Layouts++
	var want []*item
	if !m.follow {
		m.layoutFrom(m.top, &want)
	}
	if m.follow {
		m.layoutEnd(&want)
	}
	var cmds []tea.Cmd
	if c := m.renderCmd(want); c != nil {
		cmds = append(cmds, c)
	}
	// Prefetch a screen above the window, so PgUp shows rendered text.
	var above []*item
	top := m.top
	if m.follow {
		top = m.frameTop()
	}
	for i, seen := top.idx-1, 0; i >= 0 && seen < m.height; i-- {
		seen += len(m.lines(i, &above))
	}
	if c := m.renderCmd(above); c != nil {
		cmds = append(cmds, c)
	}
	if s := m.stream; s != nil && s.dirty && !m.flushPending {
		m.flushPending = true
		cmds = append(cmds, flushCmd(s.gen))
	}
	if m.hasOlder && !m.loadingOlder && top.idx <= 10 && m.oldest > 1 {
		m.loadingOlder = true
		before := m.oldest
		cmds = append(cmds, func() tea.Msg { return NeedOlderMsg{BeforeSeq: before} })
	}
	return tea.Batch(cmds...)
}

func (m *Model) renderCmd(items []*item) tea.Cmd {
	if len(items) == 0 || m.md == nil {
		return nil
	}
	type job struct {
		key cacheKey
		it  item
	}
	jobs := make([]job, 0, len(items))
	for _, it := range items {
		k := cacheKey{it.id, it.version, m.width}
		if m.pending[k] {
			continue
		}
		m.pending[k] = true
		jobs = append(jobs, job{key: k, it: *it})
	}
	md, r, width := m.md, m.r, m.width
	cmds := make([]tea.Cmd, len(jobs))
	for i, j := range jobs {
		cmds[i] = func() tea.Msg {
			lines := r.frame(&j.it, md.Render(j.it.body(), max(width-gutter, 10)), width)
			return renderedMsg{key: j.key, lines: lines}
		}
	}
	return tea.Sequence(cmds...)
}

// footer is the key help an empty chat shows, drawn by bubbles/help from
// the key map.
func (m *Model) footer() string {
	h := help.New()
	h.ShortSeparator = " · "
	h.Styles = help.Styles{ShortKey: m.r.st.Dim.Bold(true), ShortDesc: m.r.st.Dim, ShortSeparator: m.r.st.Dim}
	return h.ShortHelpView(keys.Default().Editor.Footer())
}

// layoutEnd fills the window from the end upward.
func (m *Model) layoutEnd(want *[]*item) {
	if m.count() == 0 {
		m.setFrame([]string{fit(m.r.st.Dim.Render("Type a message to start · / lists the commands · ")+m.footer(), m.width)}, []int{0})
		return
	}
	var rows [][]string
	var ids []int
	need := m.height
	for i := m.count() - 1; i >= 0 && need > 0; i-- {
		ls := m.lines(i, want)
		rows = append(rows, ls)
		ids = append(ids, m.rowID(i))
		need -= len(ls)
	}
	frame := make([]string, 0, m.height+8)
	fids := make([]int, 0, m.height+8)
	for k := len(rows) - 1; k >= 0; k-- {
		frame = append(frame, rows[k]...)
		for range rows[k] {
			fids = append(fids, ids[k])
		}
	}
	if len(frame) > m.height {
		cut := len(frame) - m.height
		frame, fids = frame[cut:], fids[cut:]
	}
	m.setFrame(frame, fids)
}

// layoutFrom fills the window downward from a; when the end comes into
// view it pins the view to the end instead.
func (m *Model) layoutFrom(a anchor, want *[]*item) {
	frame := make([]string, 0, m.height+8)
	fids := make([]int, 0, m.height+8)
	for i := a.idx; i < m.count() && len(frame) < m.height; i++ {
		ls := m.lines(i, want)
		if i == a.idx {
			ls = ls[min(a.line, len(ls)):]
		}
		frame = append(frame, ls...)
		for range ls {
			fids = append(fids, m.rowID(i))
		}
	}
	if len(frame) < m.height && !(a.idx == 0 && a.line == 0) {
		m.follow = true
		return
	}
	if len(frame) > m.height {
		frame, fids = frame[:m.height], fids[:m.height]
	}
	m.setFrame(frame, fids)
}

func (m *Model) rowID(i int) int {
	if i < len(m.items) {
		return m.items[i].id
	}
	return 0
}

func (m *Model) setFrame(frame []string, ids []int) {
	for i, l := range frame {
		// Lines drawn at another width (the stream before its redraw).
		frame[i] = fit(l, m.width)
	}
	for len(frame) < m.height {
		frame = append(frame, "")
		ids = append(ids, 0)
	}
	m.frame, m.frameIDs = frame, ids
}

// View draws the window laid out by the last Sync: exactly height lines.
func (m Model) View() string {
	return strings.Join(m.frame, "\n")
}
