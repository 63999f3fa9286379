package cli

import (
	"io"

	"github.com/gencode/gencode/internal/termtext"
)

// screen makes what gencode prints inert wherever it goes: a model's
// answer, a title, a tool's arguments, a server's error can carry escape
// sequences (OSC 52 clipboard writes, clear-screen, titles, hyperlinks),
// CRs and NULs, and stdout piped into `tee`, `less -R` or a file that is
// later cat'ed reaches a terminal all the same. Stderr (notes and errors)
// is always sanitized; stdout is sanitized (text) or escaped (JSON, which
// then decodes to the same data) by default, on a terminal or not. Only
// --raw-output, with stdout not a terminal, writes text (an answer, a
// markdown export, history) with the log's exact bytes; JSON stays escaped.
// The TUI draws on stdout itself and does its own sanitizing.
type screen struct {
	stdout   io.Writer
	stderr   *termtext.Writer
	text     *termtext.Writer
	json     *termtext.Writer
	terminal bool // stdout is a terminal
	// raw is --raw-output: exact bytes on a stdout that is not a terminal.
	// Set from the flag once it is parsed.
	raw bool
	// redact takes secrets out of the error line Run prints; set once
	// the configuration (the key) is known. Nil: nothing to take out.
	redact func(string) string
}

// withScreen returns env writing through a screen.
func withScreen(env Env) (Env, *screen) {
	sc := &screen{
		stdout: env.Stdout,
		stderr: termtext.NewWriter(env.Stderr),
		text:   termtext.NewWriter(env.Stdout), json: termtext.NewJSONWriter(env.Stdout),
		terminal: env.IsTerminal != nil && env.IsTerminal(),
	}
	env.Stderr = sc.stderr
	env.screen = sc
	return env, sc
}

// flush writes what the writers held back: the end of the run's output.
func (sc *screen) flush() {
	for _, w := range []*termtext.Writer{sc.text, sc.json, sc.stderr} {
		_ = w.Flush()
	}
}

// exact reports whether stdout gets the exact bytes (--raw-output, not
// a terminal).
func (sc *screen) exact() bool { return sc.raw && !sc.terminal }

// redactText is s with the run's secrets taken out.
func (sc *screen) redactText(s string) string {
	if sc.redact == nil {
		return s
	}
	return sc.redact(s)
}

// textOut is where text goes on stdout: sanitized, unless --raw-output
// asks for the exact bytes and stdout is not a terminal.
func (e Env) textOut() io.Writer {
	if e.screen == nil || e.screen.exact() {
		return e.Stdout
	}
	return e.screen.text
}

// jsonOut is where JSON goes on stdout, always (--raw-output too): what
// JSON leaves raw but a terminal acts on (DEL, C1 controls, bidi
// overrides) is escaped, so the data decodes the same and no byte of it
// acts on a terminal.
func (e Env) jsonOut() io.Writer {
	if e.screen == nil {
		return e.Stdout
	}
	return e.screen.json
}
