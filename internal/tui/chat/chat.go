// Package chat is the conversation view: user and assistant messages, tool
// calls, notes, errors and report boxes, with the answer streaming at the
// bottom.
//
// It stays fast in long sessions: each item's render is cached by (item,
// version, width) in a bounded LRU; markdown is rendered by glamour in
// background Cmds (a plain draft shows until it arrives, so no frame waits
// for glamour); only the items in the window are ever laid out, so the cost
// of a frame does not grow with the session; and a streaming answer
// re-renders only its unfinished tail, at most every flushInterval, in a
// background Cmd like the finished blocks.
//
// The window, scrolling and layout are a vlist; this package says what
// each row draws (items, cached; the streaming answer last) and pages
// older history in.
package chat

import (
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/internal/tui/vlist"
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
	list          vlist.Model // the window: rows are the items, then the stream
	dirty         bool

	stream       *stream
	streamGen    int
	flushPending bool

	pending map[cacheKey]bool // markdown renders in flight

	oldest       int64 // seq of the oldest loaded message (0: none)
	hasOlder     bool
	loadingOlder bool

	// The tool calls running now, by call id: drawn each frame (not
	// cached) with a spinner, the time since they started and the tail of
	// their output, while the spinner's tick is in flight.
	running map[string]*item
	spin    spinner.Model
	ticking bool
	now     func() time.Time
}

// New returns an empty chat drawing with th's styles and md's markdown.
func New(th *theme.Theme, md *markdown.Renderer) Model {
	st := th.Chat
	sp := spinner.New(spinner.WithSpinner(spinner.Spinner{Frames: spinner.MiniDot.Frames, FPS: liveFrame}))
	sp.Style = st.ToolMark
	return Model{
		running: map[string]*item{},
		spin:    sp,
		now:     time.Now,
		r:       renderer{st: st, rst: th.Report, md: md},
		md:      md,
		cache:   newRenderCache(cacheBytes),
		stats:   &Stats{},
		byCall:  map[string]*item{},
		list:    vlist.New(emptyLine(st)),
		dirty:   true,
		pending: map[cacheKey]bool{},
	}
}

// emptyLine is what an empty chat shows.
func emptyLine(st theme.Chat) string {
	return st.Dim.Render("Type a message to start · / lists the commands · ") + footer(st)
}

// SetTheme draws with th and md from now on (the terminal said its
// background): every render cached or in flight is dropped and made again
// as the view needs it.
func (m *Model) SetTheme(th *theme.Theme, md *markdown.Renderer) {
	st := th.Chat
	m.spin.Style = st.ToolMark
	m.r = renderer{st: st, rst: th.Report, md: md}
	m.md = md
	m.cache = newRenderCache(cacheBytes)
	m.pending = map[cacheKey]bool{}
	m.list.SetEmpty(emptyLine(st))
	if m.stream != nil {
		m.stream.width = 0 // its blocks are rendered again, as after a resize
		m.stream.dirty = true
	}
	m.dirty = true
}

// liveFrame is how often a running tool call is redrawn: its spinner
// turns, its timer counts tenths of a second.
const liveFrame = 100 * time.Millisecond

// SetClock sets the clock the timers of running tool calls read (tests
// inject theirs).
func (m *Model) SetClock(now func() time.Time) {
	if now != nil {
		m.now = now
	}
}

// TickMsg is the message the running tools' spinner ticks with; tests send
// it to redraw them without waiting.
func (m Model) TickMsg() tea.Msg { return spinner.TickMsg{ID: m.spin.ID(), Time: m.now()} }

// Ticking reports whether the running tools' spinner ticks.
func (m Model) Ticking() bool { return m.ticking }

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
		m.list.SetSize(m.width, m.height)
		m.dirty = true
	}
}

// Following reports whether the view is pinned to the end.
func (m Model) Following() bool { return m.list.Following() }

// inner is the width of an item's text, right of the gutter.
func (m *Model) inner() int { return max(m.width-gutter, 10) }

// Update handles the chat's own messages (stream flushes, finished
// renders) and scrolling input routed to it by the parent.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		if msg.ID != m.spin.ID() {
			return m, nil
		}
		if len(m.running) == 0 {
			m.ticking = false
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		m.dirty = true
		return m, cmd
	case flushMsg:
		m.flushPending = false
		s := m.stream
		if s == nil || s.gen != msg.gen || !s.dirty {
			return m, nil
		}
		first, srcs, tail := s.flush(m.inner())
		m.layStream(first)
		m.dirty = true
		var cmds []tea.Cmd
		if len(srcs) > 0 {
			cmds = append(cmds, renderBlocksCmd(m.md, s.gen, first, s.width, srcs))
		}
		cmds = append(cmds, s.renderTail(m.md, tail))
		return m, tea.Batch(cmds...)
	case tailRenderedMsg:
		s := m.stream
		if s == nil || s.gen != msg.gen {
			return m, nil // an answer that has ended
		}
		shown, next := s.tailRendered(msg)
		if shown {
			m.layStream(len(s.blocks))
			m.dirty = true
		}
		return m, s.renderTail(m.md, next)
	case blockRenderedMsg:
		s := m.stream
		if s == nil || s.gen != msg.gen || s.width != msg.width || msg.index >= len(s.blocks) {
			return m, nil
		}
		s.blocks[msg.index] = msg.lines
		m.layStream(msg.index)
		m.dirty = true
	case renderedMsg:
		inFlight := m.pending[msg.key]
		delete(m.pending, msg.key)
		if inFlight && msg.key.width == m.width {
			m.cache.put(msg.key, msg.lines, false)
			m.dirty = true
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.ScrollUp(wheelLines)
		case tea.MouseWheelDown:
			m.ScrollDown(wheelLines)
		}
	case tea.MouseClickMsg:
		if msg.Button == tea.MouseLeft {
			m.click(msg.Y)
		}
	case tea.KeyPressMsg:
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
	id := m.list.IDAt(y)
	if id == 0 {
		return
	}
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

// rows is the chat as the list sees it: the items, then the streaming
// answer. want, when set, collects markdown items whose render is still a
// draft.
type rows struct {
	m    *Model
	want *[]*item
}

func (r rows) Len() int {
	if r.m.stream != nil && len(r.m.stream.lines) > 0 {
		return len(r.m.items) + 1
	}
	return len(r.m.items)
}

func (r rows) ID(i int) int {
	if i < len(r.m.items) {
		return r.m.items[i].id
	}
	return 0
}

// Lines is row i rendered: from the cache, else a draft (cached too).
func (r rows) Lines(i int) []string {
	m := r.m
	if i == len(m.items) {
		return m.stream.lines
	}
	it := m.items[i]
	if it.kind == KindTool && it.state == toolRunning && m.running[it.callID] == it {
		// Changes every frame: drawn, not cached.
		m.stats.ItemRenders++
		return m.r.running(it, m.width, m.spin.View(), m.now().Sub(it.started))
	}
	key := cacheKey{it.id, it.version, m.width}
	e, ok := m.cache.get(key)
	if !ok {
		m.stats.ItemRenders++
		e = m.cache.put(key, m.r.draft(it, m.width), it.kind.markdown())
	}
	if e.draft && r.want != nil && !m.pending[key] {
		*r.want = append(*r.want, it)
	}
	return e.lines
}

// ScrollUp moves the window n lines toward the start.
func (m *Model) ScrollUp(n int) {
	m.list.ScrollUp(rows{m: m}, n)
	m.dirty = true
}

// ScrollDown moves the window n lines toward the end; reaching it pins the
// view to the end again.
func (m *Model) ScrollDown(n int) {
	m.list.ScrollDown(rows{m: m}, n)
	m.dirty = true
}

// ScrollTop shows the start of the session: what is loaded now, and the
// older pages as they arrive.
func (m *Model) ScrollTop() {
	m.list.ScrollTop()
	m.dirty = true
}

// ScrollBottom pins the view to the end.
func (m *Model) ScrollBottom() {
	m.list.ScrollBottom()
	m.dirty = true
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
	m.list.Layout(rows{m: m, want: &want})
	var cmds []tea.Cmd
	if c := m.renderCmd(want); c != nil {
		cmds = append(cmds, c)
	}
	// Prefetch a screen above the window, so PgUp shows rendered text.
	var above []*item
	top := m.list.FirstLine(rows{m: m})
	for i, seen := top.Row-1, 0; i >= 0 && seen < m.height; i-- {
		seen += 1 + len(rows{m: m, want: &above}.Lines(i))
	}
	if c := m.renderCmd(above); c != nil {
		cmds = append(cmds, c)
	}
	if s := m.stream; s != nil && s.dirty && !m.flushPending {
		m.flushPending = true
		cmds = append(cmds, flushCmd(s.gen))
	}
	if m.hasOlder && !m.loadingOlder && top.Row <= 10 && m.oldest > 1 {
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

// View draws the window laid out by the last Sync: exactly height lines.
func (m Model) View() string {
	return m.list.View()
}

// footer is the key help an empty chat shows, drawn by bubbles/help from
// the key map.
func footer(st theme.Chat) string {
	h := help.New()
	h.ShortSeparator = " · "
	h.Styles = help.Styles{ShortKey: st.FooterKey, ShortDesc: st.Dim, ShortSeparator: st.Dim}
	return h.ShortHelpView(keys.Default().Editor.Footer())
}
