package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/tui"
	"github.com/gencode/gencode/internal/tui/report"
)

// summarizer is the background compactor as the CLI owns it: started with
// the agent, waited for before a print-mode exit, closed at the end.
type summarizer interface {
	Wait()
	Close()
}

// newSummarizer installs the summarizer on the agent; nil when disabled.
func (a *app) newSummarizer(_ *llm.Client, _ *agent.Agent, _ bool) summarizer {
	return nil
}

// turnDrain is how long quitting waits for a canceled turn to write its
// partial answer and tool results to the log.
const turnDrain = 5 * time.Second

// interactive runs the TUI. Problems it can see before the screen is
// taken (no endpoint, no such session, no terminal) are reported like
// print mode's, on stderr.
func (a *app) interactive(ctx context.Context, o rootOptions) error {
	if a.env.IsTerminal != nil && !a.env.IsTerminal() {
		return &usageError{errors.New("the terminal UI needs a terminal; use print mode: gencode -p \"PROMPT\"")}
	}
	client, err := a.client(ctx)
	if err != nil {
		return err
	}
	sessionID := ""
	if o.cont || o.resume != "" {
		s, err := a.pickSession(ctx, o.cont, o.resume, a.cfg.Model)
		if err != nil {
			return err
		}
		sessionID = s.ID
	}
	asker := tui.NewAsker()
	ag, _, err := a.newAgent(client, asker, o.allow, o.yolo)
	if err != nil {
		return err
	}
	if sum := a.newSummarizer(client, ag, o.noSummary); sum != nil {
		defer sum.Close()
	}
	r := newRenderer(a.env)
	reg := commands.New(commands.Deps{
		Store: a.store, Search: a.searchFunc(), Config: a.cfg, Window: a.window, FixedCost: ag.FixedCost,
	}, commands.State{SessionID: sessionID, Model: ag.Model()})
	soft := 0.0
	if a.cfg.Summarize.Enabled && !o.noSummary {
		soft = a.cfg.Summarize.SoftRatio
	}
	m := tui.New(tui.Options{
		Agent:    ag,
		Store:    a.store,
		Asker:    asker,
		Commands: reg,
		CommandState: func(id, model string) {
			reg.SetState(commands.State{SessionID: id, Model: model})
		},
		SessionID: sessionID,
		Cwd:       a.cwd,
		SoftRatio: soft,
		Renderer:  r,
		ErrorText: userMessage,
		Context:   ctx,
	})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx),
		tea.WithInput(a.env.Stdin), tea.WithOutput(a.env.Stdout))
	final, err := p.Run()
	if fm, ok := final.(tui.Model); ok {
		fm.Wait(turnDrain)
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// newRenderer builds the renderer every style of the TUI is made with, on
// the program's output and environment: NO_COLOR (and CLICOLOR=0) turn
// colour off, and the terminal is asked for its background now, before
// Bubble Tea reads its input, so light and dark themes both read well.
func newRenderer(env Env) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(env.Stdout, termenv.WithEnvironment(environ(env.Getenv)))
	r.HasDarkBackground()
	return r
}

// environ gives termenv the injected environment (NO_COLOR, TERM ...).
type environ func(string) string

func (e environ) Getenv(k string) string { return e(k) }

// Environ is not used by termenv's colour detection.
func (e environ) Environ() []string { return nil }

// renderReport draws a report for the terminal: boxed on a terminal,
// plain when piped or with NO_COLOR.
func (a *app) renderReport(r *commands.Report) string {
	if a.env.IsTerminal == nil || !a.env.IsTerminal() {
		return r.Plain()
	}
	lr := newRenderer(a.env)
	if lr.ColorProfile() == termenv.Ascii {
		return r.Plain()
	}
	width := 80
	if f, ok := a.env.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			width = w
		}
	}
	return strings.Join(report.Render(*r, width, report.NewStyles(lr)), "\n") + "\n"
}

// searchFunc is the history search (the recall index), or nil.
func (a *app) searchFunc() commands.SearchFunc { return nil }
