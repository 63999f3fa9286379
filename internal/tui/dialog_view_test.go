package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/tools"
)

// editRequest is an Edit of one long line in the middle of a function,
// with three lines of context on each side, as the Edit tool asks.
func editRequest() tools.Request {
	return tools.Request{
		Tool: tools.ToolEdit, Summary: "internal/server/handler.go", Path: "/work/internal/server/handler.go",
		Args: `{"file_path":"internal/server/handler.go","old_string":"...","new_string":"..."}`,
		Diff: "--- a/internal/server/handler.go\n+++ b/internal/server/handler.go\n@@ -10,7 +10,7 @@\n" +
			" func handle(w http.ResponseWriter, r *http.Request) {\n" +
			" \tctx := r.Context()\n" +
			" \tuser := auth.FromContext(ctx)\n" +
			"-\tif err := store.Save(ctx, user.ID, r.FormValue(\"name\")); err != nil {\n" +
			"+\tif err := store.SaveWithAudit(ctx, user.ID, r.FormValue(\"name\"), audit.FromRequest(r)); err != nil {\n" +
			" \t\thttp.Error(w, err.Error(), http.StatusInternalServerError)\n" +
			" \t\treturn\n" +
			" \t}\n",
	}
}

// dialogBody is the text inside the dialog's border, one string per row.
func dialogBody(view string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		switch {
		case strings.HasPrefix(l, "╭"):
			in = true
		case strings.HasPrefix(l, "╰"):
			in = false
		case in && strings.HasPrefix(l, "│"):
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "│ "), " │"))
		}
	}
	return out
}

func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestDialogShowsTheChange: on a small terminal (60x20, and 40 columns)
// the dialog shows the change itself, whole: its body opens on the
// removed and added lines (the context follows them), and a line too long
// for the box wraps instead of being cut, so what is approved is what was
// read.
func TestDialogShowsTheChange(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{60, 20}, {40, 20}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, size[0], size[1])
			h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
			h.typ("rename the save call")
			h.key("enter")
			h.send(askMsg{ctx: context.Background(), req: editRequest(), reply: make(chan tools.Decision, 1)})
			view := h.view()
			require.Len(t, strings.Split(view, "\n"), size[1])
			body := dialogBody(view)
			require.NotEmpty(t, body, view)
			i := 0
			for i < len(body) && strings.TrimSpace(body[i]) != "" {
				i++ // the head: tool, path
			}
			require.Less(t, i+1, len(body), view)
			require.True(t, strings.HasPrefix(body[i+1], "-    if err"), "the body opens on the change, not on %q:\n%s", body[i+1], view)
			shown := squeeze(strings.Join(body, ""))
			for _, l := range []string{
				"-    if err := store.Save(ctx, user.ID, r.FormValue(\"name\")); err != nil {",
				"+    if err := store.SaveWithAudit(ctx, user.ID, r.FormValue(\"name\"), audit.FromRequest(r)); err != nil {",
			} {
				require.Contains(t, shown, squeeze(l), "the changed line is not shown whole:\n%s", view)
			}
			require.NotContains(t, view, "…)", "a line was cut")
		})
	}
}

// TestGoldenEditDialog is the dialog of an Edit at 40, 60, 80 and 120
// columns on a 20-line terminal.
func TestGoldenEditDialog(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 60, 80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w, 20)
			h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
			h.typ("rename the save call")
			h.key("enter")
			h.send(askMsg{ctx: context.Background(), req: editRequest(), reply: make(chan tools.Decision, 1)})
			view := h.view()
			for _, l := range strings.Split(view, "\n") {
				require.LessOrEqual(t, ansi.StringWidth(l), w, "%q", l)
			}
			golden.RequireEqual(t, view)
		})
	}
}
