package tui

import (
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// Frame pacing. Bubble Tea v2.1.1 draws from a ticker that runs at its
// frame rate (60 Hz) for the program's whole life, changed view or not:
// idle, those wake-ups were most of the TUI's CPU (4-7 ms a second). It
// has no option to stop it (upstream pull requests #1776 and #1796 would
// make it tick only while there is a frame to draw: once one is released,
// delete this file). Until then the pacer reaches Bubble Tea's ticker and
// slows it right down once no message has come for a while, and gives it
// its rate back at the next message, before the model sees it: a key, a
// stream's chunk, a spinner's tick (the spinners tick only while
// something runs, so a turn is always drawn at the full rate).
const (
	// idleAfter is how long no message must come before the ticker slows.
	idleAfter = 500 * time.Millisecond
	// idleSettle is how long it still runs after that: the last message's
	// frame was made just before the check, and is drawn meanwhile.
	idleSettle = 100 * time.Millisecond
	// idleFrame is the ticker's period while idle. It is not stopped: a
	// frame Bubble Tea has not drawn yet (a starved renderer) is drawn
	// this late at worst, and it costs nothing worth measuring.
	idleFrame = 2 * time.Second
)

// FramePacer slows Bubble Tea's frame ticker while the program is idle.
// Give its Filter to tea.NewProgram (tea.WithFilter) and the program to
// Attach before Run; Close it once Run has returned:
//
//	fp := tui.NewFramePacer()
//	p := tea.NewProgram(m, tea.WithFilter(fp.Filter))
//	fp.Attach(p)
//	defer fp.Close()
//
// Filter runs on Bubble Tea's event loop only; the pacer's timer only
// sends it a message.
type FramePacer struct {
	p          *tea.Program
	idleAfter  time.Duration
	idleSettle time.Duration

	looked  bool
	ticker  *time.Ticker // Bubble Tea's; nil: not found, Bubble Tea paces its frames
	frame   time.Duration
	last    time.Time   // when the last message that was not the pacer's came
	timer   *time.Timer // sends idleCheckMsg
	armed   bool
	settled bool // a check found the program idle; the next one slows the ticker
	idle    atomic.Bool
}

// idleCheckMsg is the pacer's own message: time to see whether the
// program is idle. The model never sees it.
type idleCheckMsg struct{}

// NewFramePacer returns a pacer to Attach to a program.
func NewFramePacer() *FramePacer {
	return &FramePacer{idleAfter: idleAfter, idleSettle: idleSettle}
}

// Attach gives the pacer the program whose Filter it is.
func (f *FramePacer) Attach(p *tea.Program) { f.p = p }

// Close stops the pacer's timer.
func (f *FramePacer) Close() {
	if f.timer != nil {
		f.timer.Stop()
	}
}

// Idle reports whether the ticker runs at its idle rate now.
func (f *FramePacer) Idle() bool { return f.idle.Load() }

// Filter sees every message before the model does (tea.WithFilter): any
// message but its own gives the ticker its rate back; its own checks
// whether the program has been idle long enough to slow it.
func (f *FramePacer) Filter(_ tea.Model, msg tea.Msg) tea.Msg {
	if !f.looked {
		f.looked = true // Run has started the renderer: the ticker exists
		if f.p != nil {
			f.ticker, f.frame = frameTicker(f.p)
		}
	}
	if f.ticker == nil {
		return msg
	}
	now := time.Now()
	if _, ok := msg.(idleCheckMsg); ok {
		f.armed = false
		switch quiet := now.Sub(f.last); {
		case quiet < f.idleAfter:
			f.arm(f.idleAfter - quiet)
		case !f.settled:
			f.settled = true
			f.arm(f.idleSettle)
		default:
			f.ticker.Reset(idleFrame)
			f.idle.Store(true)
		}
		return nil
	}
	f.last, f.settled = now, false
	if f.idle.Load() {
		f.ticker.Reset(f.frame)
		f.idle.Store(false)
	}
	if !f.armed {
		f.arm(f.idleAfter)
	}
	return msg
}

// arm has the timer send an idleCheckMsg after d.
func (f *FramePacer) arm(d time.Duration) {
	f.armed = true
	if f.timer == nil {
		p := f.p
		f.timer = time.AfterFunc(d, func() { p.Send(idleCheckMsg{}) })
		return
	}
	f.timer.Reset(d)
}

// frameTicker is the ticker p's renderer draws on and its period, read
// from p's unexported fields (Bubble Tea v2.1.1: ticker *time.Ticker, fps
// int); nil when they are not there (TestFramePacerSlowsBubbleTeasTicker
// fails then: see this file's comment).
func frameTicker(p *tea.Program) (*time.Ticker, time.Duration) {
	v := reflect.ValueOf(p).Elem()
	t, fps := v.FieldByName("ticker"), v.FieldByName("fps")
	if !t.IsValid() || t.Type() != reflect.TypeFor[*time.Ticker]() || !fps.IsValid() || fps.Kind() != reflect.Int {
		return nil, 0
	}
	ticker := *(**time.Ticker)(unsafe.Pointer(t.UnsafeAddr()))
	if ticker == nil || fps.Int() < 1 {
		return nil, 0
	}
	return ticker, time.Second / time.Duration(fps.Int())
}
