package cli

import (
	"io"

	"github.com/gencode/gencode/internal/termtext"
)

// screen makes what gencode prints for a person inert on a terminal: a
// model's answer, a title, a tool's arguments, a server's error can carry
// escape sequences (OSC 52 clipboard writes, clear-screen, titles,
// hyperlinks), CRs and NULs. Stderr (notes and errors) is always
// sanitized. Stdout is sanitized only when it is a terminal: piped, an
// answer, an export or JSON keeps its exact bytes. The TUI draws on stdout
// itself and does its own sanitizing.
type screen struct {
	stderr *termtext.Writer
	text   *termtext.Writer // nil: stdout is not a terminal
	json   *termtext.Writer // nil: stdout is not a terminal
	// redact takes secrets out of the error line Run prints; set once
	// the configuration (the key) is known. Nil: nothing to take out.
	redact func(string) string
}

// redactText is s with the run's secrets taken out.
func (sc *screen) redactText(s string) string {
	if sc.redact == nil {
		return s
	}
	return sc.redact(s)
}

// withScreen returns env writing through a screen.
func withScreen(env Env) (Env, *screen) {
	sc := &screen{stderr: termtext.NewWriter(env.Stderr)}
	if env.IsTerminal != nil && env.IsTerminal() {
		sc.text, sc.json = termtext.NewWriter(env.Stdout), termtext.NewJSONWriter(env.Stdout)
	}
	env.Stderr = sc.stderr
	env.screen = sc
	return env, sc
}

// flush writes what the writers held back: the end of the run's output.
func (sc *screen) flush() {
	for _, w := range []*termtext.Writer{sc.text, sc.json, sc.stderr} {
		if w != nil {
			_ = w.Flush()
		}
	}
}

// textOut is where text for a person goes on stdout: sanitized on a
// terminal, exact when piped.
func (e Env) textOut() io.Writer {
	if e.screen != nil && e.screen.text != nil {
		return e.screen.text
	}
	return e.Stdout
}

// jsonOut is where JSON goes on stdout: on a terminal, what JSON leaves
// raw but a terminal acts on is escaped (the data decodes the same);
// piped, the exact bytes.
func (e Env) jsonOut() io.Writer {
	if e.screen != nil && e.screen.json != nil {
		return e.screen.json
	}
	return e.Stdout
}
