package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/view"
)

// cards runs /help, /context and /config through the real registry (with
// the TUI's keys, as the CLI wires it), on a real store holding a short
// session, with a config file that set a few keys.
func cards(t *testing.T) map[string]commands.Report {
	t.Helper()
	ctx := context.Background()
	st := sessiontest.Open(t)
	sess, err := st.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	code := 0
	_, err = st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "make the tests pass", Tokens: 6},
		session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: "c1", Name: "Bash", Arguments: `{"command":"go test ./..."}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "c1", Name: "Bash", Content: strings.Repeat("ok  \tgithub.com/x/y\t0.3s\n", 40), Tokens: 400,
			Meta: session.Meta{Tool: "Bash", Command: "go test ./...", ExitCode: &code}},
		session.Message{Role: session.RoleAssistant, Content: "They pass.", Tokens: 4},
	)
	require.NoError(t, err)

	cfg := config.Default()
	cfg.File = "/home/someone/.config/gencode/config.toml"
	cfg.Sources = map[string]string{"model": cfg.File, "summarize.soft_ratio": cfg.File, "base_url": "env OPENAI_BASE_URL"}
	cfg.Lines = map[string]int{"model": 1, "summarize.soft_ratio": 4}
	cfg.Model, cfg.BaseURL, cfg.Summarize.SoftRatio = "gpt-4o-mini", "http://127.0.0.1:11434/v1", 0.5
	// Two rules saved with "always for this project": /config lists them.
	perms := permstore.Open(t.TempDir(), t.TempDir())
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolBash, Command: []string{"go", "test"}}))
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolWrite}))
	reg := commands.New(commands.Deps{Store: st, Config: cfg, Window: func(string) int { return 8192 }, Keys: tui.KeyHelp(),
		Permissions: perms})
	state := commands.State{SessionID: sess.ID, Model: "gpt-4o-mini",
		View: view.NewPolicy(view.Config{Window: 8192, Overhead: 1500, MaskAfter: 10})}
	out := map[string]commands.Report{}
	for _, c := range []string{"help", "context", "config"} {
		res, err := reg.Run(ctx, state, "/"+c)
		require.NoError(t, err)
		require.NotNil(t, res.Report, "/%s", c)
		out[c] = *res.Report
	}
	return out
}

// words is the text of a report, in reading order, without white space:
// what a box must show whatever its width.
func words(rep commands.Report) string {
	var b strings.Builder
	b.WriteString(rep.Title)
	for _, s := range rep.Sections {
		b.WriteString(s.Title)
		for _, l := range s.Lines {
			b.WriteString(l)
		}
		for _, r := range s.Rows {
			b.WriteString(strings.Join(r, ""))
		}
		if s.More > 0 {
			b.WriteString(fmt.Sprintf("+%d more", s.More))
		}
	}
	b.WriteString(rep.Footer)
	return noSpace(b.String())
}

func hasRows(rep commands.Report) bool {
	for _, s := range rep.Sections {
		if len(s.Rows) > 0 {
			return true
		}
	}
	return false
}

// shown is the text a box shows, borders and white space left out.
func shown(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.Trim(ansi.Strip(l), "╭╮╰╯│─ "))
	}
	return noSpace(b.String())
}

func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestGoldenCards: /help, /context and /config at 40, 80 and 120 columns
// wrap what does not fit and cut nothing: every character of the report
// is in the box, in order, and every line of the box is as wide as its
// top border (colours on too).
func TestGoldenCards(t *testing.T) {
	t.Parallel()
	plain, color := styles(colorprofile.NoTTY), styles(colorprofile.TrueColor)
	for name, rep := range cards(t) {
		for _, w := range []int{40, 80, 120} {
			t.Run(fmt.Sprintf("%s/%d", name, w), func(t *testing.T) {
				t.Parallel()
				lines := report.Render(rep, w, plain)
				golden.RequireEqual(t, strings.Join(lines, "\n"))
				if hasRows(rep) {
					// A wrapped value continues below its row's source:
					// every character is there, the order is the table's.
					require.ElementsMatch(t, []rune(words(rep)), []rune(shown(lines)), "the box lost text")
				} else {
					require.Equal(t, words(rep), shown(lines), "the box lost text")
				}
				colored := report.Render(rep, w, color)
				w0 := ansi.StringWidth(colored[0])
				require.LessOrEqual(t, w0, w)
				for i, l := range colored {
					require.Equal(t, w0, ansi.StringWidth(l), "line %d: %q", i, ansi.Strip(l))
				}
			})
		}
	}
}
