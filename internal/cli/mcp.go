package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
)

// mcpConfigs are the user's MCP servers: the config's [mcp.NAME] tables,
// then the project's .mcp.json servers whose names the config does not
// use. A .mcp.json that cannot be read is a warning, not an error.
func (a *app) mcpConfigs() []mcp.ServerConfig {
	var out []mcp.ServerConfig
	names := make([]string, 0, len(a.cfg.MCP))
	for n := range a.cfg.MCP {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		c := a.cfg.MCP[n]
		out = append(out, mcp.ServerConfig{Name: n, Command: c.Command, Args: c.Args, Env: c.Env, URL: c.URL,
			Headers: c.Headers, Transport: c.Transport, Disabled: c.Enabled != nil && !*c.Enabled,
			Timeout: c.Timeout.Duration, Tools: c.Tools})
	}
	project, err := mcp.ReadProjectFile(a.cwd)
	if err != nil {
		fmt.Fprintln(a.stderr, "gencode: warning: "+termtext.OneLine(err.Error(), 0))
	}
	for _, p := range project {
		if _, ok := a.cfg.MCP[p.Name]; ok {
			continue // the user's own config wins
		}
		out = append(out, p)
	}
	return out
}

// newMCP makes the MCP manager of this run (nil: no server configured)
// and starts its servers in the background; stop closes them and waits.
// model is the one whose window the deferral is a share of; notify hears
// of failures and recoveries (nil: logged only).
func (a *app) newMCP(ctx context.Context, model string, notify func(mcp.Event), changed func()) (m *mcp.Manager, stop func()) {
	cfgs := a.mcpConfigs()
	if len(cfgs) == 0 {
		return nil, func() {}
	}
	counter := a.tokens.Counter(model)
	m = mcp.New(mcp.Options{
		Servers:    cfgs,
		Approved:   func(c mcp.ServerConfig) bool { return a.perms.ServerApproved(c.Name, c.Fingerprint()) },
		Window:     a.window(model),
		DeferRatio: a.cfg.Tools.MCPDeferRatio,
		Count:      counter.Count,
		Notify:     notify,
		Changed:    changed,
		Logger:     a.log,
		Getenv: func(k string) (string, bool) {
			v := a.env.Getenv(k)
			return v, v != ""
		},
		Environ: tools.CleanEnv(os.Environ()),
	})
	m.Start(ctx)
	return m, m.Close
}

// unapprovedNotice names the project servers print mode does not start.
func unapprovedNotice(m *mcp.Manager) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, s := range m.Status().Servers {
		if s.State == mcp.StateUnapproved.String() {
			out = append(out, fmt.Sprintf("the project's %s server %q is not approved, so it is not started; approve it in the TUI with /mcp approve %s",
				mcp.ProjectFile, s.Name, s.Name))
		}
	}
	return out
}

// mcpControl is /mcp's view of the servers: the manager, and the
// project's approvals.
type mcpControl struct {
	m     *mcp.Manager
	perms *permstore.Store
	cfgs  []mcp.ServerConfig
}

func (c mcpControl) Lines() []string { return strings.Split(c.m.Status().Text(), "\n") }

func (c mcpControl) Schemas() ([]commands.ServerSchema, int, bool) {
	st := c.m.Status()
	out := make([]commands.ServerSchema, len(st.Servers))
	for i, s := range st.Servers {
		out[i] = commands.ServerSchema{Name: s.Name, State: s.State, Tokens: s.SchemaTokens}
	}
	return out, st.ExposedTokens, st.Deferred
}

func (c mcpControl) project(name string) (mcp.ServerConfig, error) {
	for _, s := range c.cfgs {
		if s.Name == name && s.Project {
			return s, nil
		}
	}
	return mcp.ServerConfig{}, fmt.Errorf("no server %q in the project's %s", name, mcp.ProjectFile)
}

func (c mcpControl) Approve(name string) error {
	s, err := c.project(name)
	if err != nil {
		return err
	}
	if err := c.perms.ApproveServer(name, s.Fingerprint()); err != nil {
		return err
	}
	return c.m.Approve(name)
}

func (c mcpControl) Revoke(name string) error {
	if _, err := c.project(name); err != nil {
		return err
	}
	if err := c.perms.RevokeServer(name); err != nil {
		return err
	}
	return c.m.Unapprove(name)
}

func (c mcpControl) PromptCommands() []string {
	var out []string
	for _, p := range c.m.Prompts() {
		out = append(out, p.Command)
	}
	return out
}

func (c mcpControl) Prompt(ctx context.Context, command, args string) (string, bool, error) {
	for _, p := range c.m.Prompts() {
		if p.Command == command {
			text, err := c.m.GetPrompt(ctx, command, args)
			return text, true, err
		}
	}
	return "", false, nil
}

// mcpListWait bounds how long `gencode mcp list` waits for servers to start.
const mcpListWait = 15 * time.Second

func newMCPCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "MCP servers", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List MCP servers: state, transport, tools, schema tokens, last error",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withReadApp(ctx, env, cmd, g, func(a *app) error {
				m, stop := a.newMCP(ctx, a.cfg.Model, nil, nil)
				defer stop()
				if m == nil {
					m = mcp.New(mcp.Options{})
				}
				wctx, cancel := context.WithTimeout(ctx, mcpListWait)
				m.WaitStarted(wctx)
				cancel()
				if asJSON {
					_, err := fmt.Fprintln(env.Stdout, m.Status().JSON())
					return err
				}
				_, err := fmt.Fprintln(env.textOut(), m.Status().Text())
				return err
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list)
	return cmd
}
