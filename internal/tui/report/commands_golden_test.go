package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/view"
)

// summaryReport is what /summarize shows after a compaction.
func summaryReport() commands.Report {
	files := []string{"internal/auth/jwt.go", "internal/auth/refresh.go", "cmd/server/main.go", "internal/db/schema.sql",
		"internal/db/migrate.go", "web/login.tsx", "web/認証.tsx", "docs/auth.md", "internal/auth/jwt_test.go", "Makefile"}
	return *commands.SummaryReport(summarize.Report{Summary: &session.Summary{
		FromSeq: 1, ToSeq: 55, MessagesBefore: 78, MessagesAfter: 23, TokensBefore: 31_204, TokensAfter: 16_010,
		Topics:        []string{"Authentication system design", "Database schema updates 🚀", "Test coverage improvements"},
		FilesModified: files,
		Commands:      []string{"go test ./internal/auth/...", "make migrate", "npm run build --prefix web"},
		KeyDecisions:  []string{"JWT access tokens with a rotating refresh token", "keep sessions in Postgres, not Redis"},
		Model:         "gpt-4o-mini", Duration: 4200 * time.Millisecond,
	}})
}

// historyReport is what /history --full shows for a session with one
// summary and a few recent messages, built from a real store.
func historyReport(t *testing.T) commands.Report {
	t.Helper()
	ctx := context.Background()
	st := sessiontest.Open(t)
	sess, err := st.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	code := 0
	var msgs []session.Message
	for i := 0; i < 10; i++ {
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("step %d: ユーザーの依頼 with emoji 🎉", i), Tokens: 12},
			session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: fmt.Sprint("c", i), Name: "Bash", Arguments: `{"command":"go test ./..."}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: fmt.Sprint("c", i), Name: "Bash", Content: "ok  \tgithub.com/x/y\t0.3s", Tokens: 30,
				Meta: session.Meta{Tool: "Bash", Command: "go test ./...", ExitCode: &code}},
		)
	}
	_, err = st.Append(ctx, sess.ID, msgs...)
	require.NoError(t, err)
	_, err = st.ApplySummary(ctx, session.Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 24, Goal: "Make the auth tests pass",
		Content:         "## Goal\nMake the auth tests pass\n## Current state\n- the refresh token test fails on expiry\n## Key decisions\n- use table tests",
		UserConstraints: []string{"never commit to main"},
		KeyDecisions:    []string{"use table tests"}, FilesModified: []string{"internal/auth/jwt.go"}, Commands: []string{"go test ./..."},
		Model: "gpt-4o-mini", TokensBefore: 496, TokensAfter: 80, GeneratedAt: time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)}, nil, false)
	require.NoError(t, err)
	rep, err := commands.History(ctx, st, nil, sess.ID, commands.HistoryOptions{Full: true})
	require.NoError(t, err)
	rep.Title = strings.Replace(rep.Title, sess.ID, "SESSIONID", 1) // ids are random
	return *rep
}

// contextReport is what /context shows for a session with a summary,
// masked tool outputs and a window the server named, built from a real
// store and the view policy.
func contextReport(t *testing.T) commands.Report {
	t.Helper()
	ctx := context.Background()
	st := sessiontest.Open(t)
	sess, err := st.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	var msgs []session.Message
	for i := 0; i < 18; i++ {
		id := fmt.Sprint("c", i)
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("step %d", i), Tokens: 12},
			session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: `{"command":"go test ./..."}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: strings.Repeat("ok  github.com/x/y 0.3s\n", 10), Tokens: 90,
				Meta: session.Meta{Tool: "Bash", Command: "go test ./..."}},
		)
	}
	_, err = st.Append(ctx, sess.ID, msgs...)
	require.NoError(t, err)
	_, err = st.ApplySummary(ctx, session.Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 6, Goal: "Make the tests pass", Content: "## Goal\n- make the tests pass",
		TokenCount: 30, GeneratedAt: time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)}, nil, false)
	require.NoError(t, err)
	policy := view.NewPolicy(view.Config{Window: 128000, SystemPrompt: "You are gencode.", Overhead: 1800, MaskAfter: 10})
	policy.Learn(8192)
	cfg := config.Default()
	reg := commands.New(commands.Deps{Store: st, Config: cfg})
	res, err := reg.Run(ctx, commands.State{SessionID: sess.ID, Model: "qwen2.5-coder", View: policy}, "/context")
	require.NoError(t, err)
	return *res.Report
}

func TestGoldenCommandReports(t *testing.T) {
	t.Parallel()
	st := styles(colorprofile.NoTTY)
	color := styles(colorprofile.TrueColor)
	reports := map[string]commands.Report{"summarize": summaryReport(), "history-full": historyReport(t), "context": contextReport(t)}
	for name, rep := range reports {
		for _, w := range []int{60, 80, 120} {
			t.Run(fmt.Sprintf("%s/%d", name, w), func(t *testing.T) {
				t.Parallel()
				lines := report.Render(rep, w, st)
				golden.RequireEqual(t, strings.Join(lines, "\n"))
				// With colour on too: every line as wide as the top border,
				// never wider than the terminal, CJK and emoji included.
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
