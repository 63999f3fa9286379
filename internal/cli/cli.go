// Package cli is gencode's command line: it parses flags, loads the
// configuration, wires the store, client, tools, agent and summarizer
// together, and runs print mode, a subcommand or the TUI. Errors become a
// message and an exit code here, in one place.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitDenied: print mode's turn ended, but a tool call it made was
	// denied (not --allow'ed, outside the working directory ...): the
	// answer is printed, and may not have done what was asked.
	ExitDenied = 3
)

// Env is the process's outside world, injected so tests can run the CLI
// in-process with their own environment and streams.
type Env struct {
	// Name is how the binary was called (os.Args[0]): the exit hint names
	// it, so that after `make run` it says bin/gencode ("": gencode).
	Name   string
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Getwd  func() (string, error)
	// IsTerminal reports whether stdout is a terminal (TUI, boxed output).
	IsTerminal func() bool
	// LocalServers are probed, in order, when no API key and no base URL
	// are configured (nil: the usual Ollama, LM Studio, llama.cpp ports).
	LocalServers []string
	// LocalProbeTimeout bounds the search for a local server (0: 400 ms).
	// In-process tests on a loaded machine give their fake servers longer.
	LocalProbeTimeout time.Duration
	// Executable is the gencode binary, which runs shell commands under
	// the sandbox (see confine.Main); "": this process's own executable.
	Executable string
	// WindowProbeTimeout bounds asking the server for the model's window
	// (0: window.DefaultTimeout).
	WindowProbeTimeout time.Duration
	// PanicAt, when set, is called where the goroutines gencode starts
	// itself do their work, with the goroutine's name ("turn", "summary",
	// "indexer", "window"): tests make it panic, to check that gencode
	// recovers, logs the stack and tells the user. nil in a release build
	// (see cmd/gencode's gencode_testpanic build tag).
	PanicAt func(where string)

	screen *screen // set by Run: what is printed for a person, made inert
}

// OSEnv is the real process environment.
func OSEnv() Env {
	return Env{
		Name: os.Args[0], Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Getwd: os.Getwd, Executable: sandbox.Self(),
		IsTerminal: func() bool {
			fi, err := os.Stdout.Stat()
			return err == nil && fi.Mode()&os.ModeCharDevice != 0
		},
	}
}

// usageError marks errors in how gencode was called.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// noSessionError: there is no session where one was looked for. Its text
// says all the user needs, once; it is session.ErrNotFound.
type noSessionError struct{ msg string }

func (e *noSessionError) Error() string { return e.msg }
func (e *noSessionError) Unwrap() error { return session.ErrNotFound }

// deniedError says that print mode's turn ended with tool calls denied,
// and which flags would have allowed them: only those that would.
type deniedError struct {
	calls int
	// byAllow, byYolo and byNone count the calls that --allow TOOL (or
	// --yolo), only --yolo, and no flag would have allowed;
	// allowTools names the tools of the first kind.
	byAllow, byYolo, byNone int
	allowTools              []string
}

// add counts the denied tool call m (see session.Meta.DeniedUnless).
func (e *deniedError) add(m session.Message) {
	e.calls++
	switch m.Meta.DeniedUnless {
	case "allow":
		e.byAllow++
		if !slices.Contains(e.allowTools, m.Name) {
			e.allowTools = append(e.allowTools, m.Name)
		}
	case "yolo":
		e.byYolo++
	default:
		e.byNone++
	}
}

func (e *deniedError) Error() string {
	what := "a tool call was denied"
	if e.calls > 1 {
		what = fmt.Sprintf("%d tool calls were denied", e.calls)
	}
	return what + ", so the turn may not have done what was asked (" + e.hint() + ")"
}

// hint names what would have allowed the denied calls. A refusal no flag
// lifts (a write into gencode's own directories) is not sent to --yolo.
func (e *deniedError) hint() string {
	it := "it"
	if e.calls > 1 {
		it = "them"
	}
	allow := "--allow " + strings.Join(e.allowTools, ",") + ", or --yolo"
	switch e.calls {
	case e.byAllow:
		return allow
	case e.byYolo:
		return "only --yolo allows " + it
	case e.byNone:
		return "no flag allows " + it + ": see why above"
	}
	var parts []string
	if e.byAllow > 0 {
		parts = append(parts, fmt.Sprintf("%s, for %d", allow, e.byAllow))
	}
	if e.byYolo > 0 {
		parts = append(parts, fmt.Sprintf("only --yolo for %d", e.byYolo))
	}
	if e.byNone > 0 {
		parts = append(parts, fmt.Sprintf("no flag for %d: see why above", e.byNone))
	}
	return strings.Join(parts, "; ")
}

// globalFlags are the flags every command takes.
type globalFlags struct {
	model, baseURL, configFile, dataDir string
	debug                               bool
	// rawOutput: stdout, when not a terminal, gets text (answers,
	// history, markdown exports) with its exact bytes instead of
	// sanitized; JSON stays escaped.
	rawOutput bool
}

// rootOptions are the flags of the root command (TUI and print mode).
type rootOptions struct {
	prompt    string
	print     bool
	cont      bool
	resume    string
	allow     []string
	yolo      bool
	noSummary bool
	// outputFormat and inputFormat are print mode's --output-format
	// (text, json, stream-json) and --input-format (text, stream-json).
	outputFormat, inputFormat string
}

// Run runs gencode with env and returns the exit code.
func Run(ctx context.Context, env Env) int {
	env, sc := withScreen(env)
	defer sc.flush()
	var g globalFlags
	root := newRootCmd(ctx, env, &g)
	// cobra reads os.Args itself when given nil: Env is the whole input.
	root.SetArgs(append([]string{}, env.Args...))
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var told *toldError
	if !errors.As(err, &told) {
		fmt.Fprintln(env.Stderr, "gencode: "+sc.redactText(userMessage(err)))
	}
	return exitCode(err)
}

// toldError is a failure the command has already explained on stderr in
// full (a rewind's conflicts, listed with their diffs): Run says nothing
// more, the exit code still says it failed.
type toldError struct{ err error }

func (e *toldError) Error() string { return e.err.Error() }
func (e *toldError) Unwrap() error { return e.err }

func newRootCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var o rootOptions
	root := &cobra.Command{
		Use:   "gencode",
		Short: "A terminal coding agent for long sessions",
		Long: "gencode is a terminal coding agent. It compacts long sessions in the background,\n" +
			"cheapest tier first, keeps every message, and shows what was summarized.",
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.print = cmd.Flags().Changed("print")
			if o.cont && o.resume != "" {
				return &usageError{errors.New("use either --continue or --resume, not both")}
			}
			app, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer app.Close()
			if o.noSummary {
				// The flag overrides the config, so /config and /context
				// say what this run does.
				app.cfg.Summarize.Enabled = false
				app.cfg.Sources["summarize.enabled"] = "flag --no-summarize"
			}
			if o.print {
				return app.printMode(ctx, o)
			}
			return app.interactive(ctx, o)
		},
	}
	root.PersistentPreRun = func(*cobra.Command, []string) {
		if env.screen != nil {
			env.screen.raw = g.rawOutput
		}
	}
	root.Version = buildInfo().String()
	root.SetVersionTemplate("gencode {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	f := root.Flags()
	f.StringVarP(&o.prompt, "print", "p", "", "print mode: run one turn with `PROMPT` and print the answer (\"-\" reads stdin)")
	f.BoolVarP(&o.cont, "continue", "c", false, "resume the latest session of this directory")
	f.StringVarP(&o.resume, "resume", "r", "", "resume session `ID` (a unique prefix is enough)")
	f.StringSliceVar(&o.allow, "allow", nil, "tools allowed without asking in print mode, e.g. Write,Edit,Bash")
	f.BoolVar(&o.yolo, "yolo", false, "allow every tool call, also outside the working directory")
	f.BoolVar(&o.noSummary, "no-summarize", false, "turn automatic summarization off for this run")
	f.StringVar(&o.outputFormat, "output-format", formatText, "print mode's output: text, json (one object at the end) or stream-json (one event a line)")
	f.StringVar(&o.inputFormat, "input-format", formatText, "print mode's input: text (the prompt) or stream-json (user messages a line on stdin; needs --output-format stream-json)")
	pf := root.PersistentFlags()
	pf.StringVar(&g.model, "model", "", "model `NAME` (env GENCODE_MODEL)")
	pf.StringVar(&g.baseURL, "base-url", "", "OpenAI-compatible endpoint `URL` (env OPENAI_BASE_URL)")
	pf.StringVar(&g.configFile, "config", "", "config `FILE` (default $XDG_CONFIG_HOME/gencode/config.toml)")
	pf.StringVar(&g.dataDir, "data-dir", "", "data `DIR` for sessions (env GENCODE_HOME)")
	pf.BoolVar(&g.rawOutput, "raw-output", false, "write text (answers, history, markdown exports) with its exact bytes when stdout is not a terminal (default: escape sequences and controls removed; JSON is always escaped)")
	pf.BoolVar(&g.debug, "debug", false, "log more to $XDG_STATE_HOME/gencode/gencode.log (requests, tool calls, compactions)")
	for _, c := range subcommands(ctx, env, g) {
		root.AddCommand(c)
	}
	return root
}

// loadConfig loads the configuration with the flags that were given.
func loadConfig(env Env, cmd *cobra.Command, g *globalFlags) (config.Config, error) {
	var fl config.Flags
	if cmd.Flags().Changed("model") {
		fl.Model = &g.model
	}
	if cmd.Flags().Changed("base-url") {
		fl.BaseURL = &g.baseURL
	}
	if cmd.Flags().Changed("data-dir") {
		fl.DataDir = &g.dataDir
	}
	return config.Load(g.configFile, env.Getenv, fl)
}

// numberArg is the annotation naming the flag a number typed alone on a
// command most likely meant (noArgs): rewind's --to, sessions' --limit.
const numberArg = "gencode/number-arg"

// noArgs is every command's argument check (none take arguments): what
// was typed is named with what the user most likely meant. A word at the
// top level is a misspelt command (cobra's suggestion) or a prompt (-p,
// or the TUI); a word after a flag whose value is optional (--undo ID)
// was meant as its value (--undo=ID); a number is the flag the command's
// numberArg annotation names; a word after a command with --session is a
// session ID. It is a usage error (exit 2), as a bad flag is.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	arg := termtext.OneLine(termtext.Sanitize(args[0]), 60)
	var optional *pflag.Flag // a flag given without its optional value
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" && f.Value.String() == f.NoOptDefVal {
			optional = f
		}
	})
	if optional != nil && len(args) == 1 {
		return &usageError{fmt.Errorf("--%s takes its value after an equals sign: %s --%s=%s", optional.Name, cmd.CommandPath(), optional.Name, arg)}
	}
	if name := cmd.Annotations[numberArg]; name != "" && len(args) == 1 {
		if _, err := strconv.Atoi(args[0]); err == nil {
			return &usageError{fmt.Errorf("%s takes no arguments; did you mean --%s %s?", cmd.CommandPath(), name, arg)}
		}
	}
	if cmd.HasSubCommands() {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's own default
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return &usageError{fmt.Errorf("unknown command %q for %q; did you mean %s?", arg, cmd.CommandPath(), strings.Join(s, " or "))}
		}
		if !cmd.HasParent() {
			return &usageError{fmt.Errorf("%q is not a command; to ask it, run %s -p %q (print mode), or start %s and type it",
				arg, cmd.CommandPath(), arg, cmd.CommandPath())}
		}
		return &usageError{fmt.Errorf("unknown command %q for %q; see %s --help", arg, cmd.CommandPath(), cmd.CommandPath())}
	}
	if cmd.Flags().Lookup("session") != nil && len(args) == 1 {
		return &usageError{fmt.Errorf("%s takes no arguments; for session %s, use --session %s", cmd.CommandPath(), arg, arg)}
	}
	return &usageError{fmt.Errorf("%s takes no arguments (got %q); see %s --help", cmd.CommandPath(), arg, cmd.CommandPath())}
}
