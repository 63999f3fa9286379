// Package markdown renders assistant markdown for the terminal with glamour
// (code blocks highlighted) at a given width. A Renderer is safe for
// concurrent use: chat renders finished messages in background Cmds while
// the streaming tail renders on the UI goroutine.
package markdown

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/third_party/glamour"
	gansi "github.com/gencode/gencode/third_party/glamour/ansi"
)

// maxIdle bounds the idle glamour renderers kept per width.
const maxIdle = 2

// Renderer renders markdown at any width. glamour's TermRenderer is not
// safe for concurrent use, so idle ones are pooled per width and a busy one
// is never shared.
type Renderer struct {
	style   gansi.StyleConfig
	profile colorprofile.Profile

	mu   sync.Mutex
	idle map[int][]*glamour.TermRenderer

	renders atomic.Int64
}

// New returns a Renderer drawing with th's markdown style and colour
// profile.
func New(th *theme.Theme) *Renderer {
	return &Renderer{style: th.Markdown, profile: th.Profile, idle: map[int][]*glamour.TermRenderer{}}
}

// Renders counts the glamour renders done so far (for tests and benchmarks).
func (r *Renderer) Renders() int64 { return r.renders.Load() }

// Render renders src to lines no wider than width cells. Trailing padding
// and blank lines at either end are cut. On a glamour error it falls back
// to Plain.
func (r *Renderer) Render(src string, width int) []string {
	r.renders.Add(1)
	width = max(width, 10)
	tr, err := r.get(width)
	if err != nil {
		return Plain(src, width)
	}
	out, err := tr.Render(src)
	r.put(width, tr)
	if err != nil {
		return Plain(src, width)
	}
	if r.profile == colorprofile.NoTTY {
		// Glamour v2 always styles; plain output carries no sequence.
		out = ansi.Strip(out)
	}
	return Tidy(out)
}

func (r *Renderer) get(width int) (*glamour.TermRenderer, error) {
	r.mu.Lock()
	if l := r.idle[width]; len(l) > 0 {
		tr := l[len(l)-1]
		r.idle[width] = l[:len(l)-1]
		r.mu.Unlock()
		return tr, nil
	}
	r.mu.Unlock()
	return glamour.NewTermRenderer(
		glamour.WithStyles(r.style),
		glamour.WithWordWrap(width),
	)
}

func (r *Renderer) put(width int, tr *glamour.TermRenderer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.idle[width]) >= maxIdle {
		return
	}
	if _, ok := r.idle[width]; !ok && len(r.idle) >= 4 {
		// The terminal was resized: forget renderers of old widths.
		clear(r.idle)
	}
	r.idle[width] = append(r.idle[width], tr)
}

var (
	// trailingPad matches the styled spaces glamour pads each line with.
	trailingPad = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`) })
	// emptyStyle matches a style set and reset with nothing between.
	emptyStyle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:\x1b\[[0-9;]*m\x1b\[0m)+`) })
)

// Tidy splits glamour output into lines, drops the padding glamour adds to
// the right of each line (most of its bytes), and trims blank lines at the
// start and end.
func Tidy(out string) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		t := trailingPad().ReplaceAllString(l, "")
		if strings.IndexByte(t, '\x1b') >= 0 {
			t = emptyStyle().ReplaceAllString(t, "\x1b[0m") + "\x1b[0m"
		}
		lines[i] = t
	}
	for len(lines) > 0 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func isBlank(l string) bool {
	return strings.TrimSpace(trailingPad().ReplaceAllString(l, "")) == ""
}

// Plain wraps src as plain text at width: the cheap stand-in shown until
// the markdown render is ready, and for text too large to highlight while
// it streams.
func Plain(src string, width int) []string {
	width = max(width, 10)
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, strings.Split(wrap(l, width), "\n")...)
	}
	return out
}

// wrap word-wraps one line and hard-wraps words longer than width.
func wrap(l string, width int) string {
	if lipgloss.Width(l) <= width {
		return l
	}
	return strings.TrimRight(ansi.Wrap(l, width, ""), " ")
}
