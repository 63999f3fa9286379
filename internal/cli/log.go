package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/logfile"
	"github.com/gencode/gencode/internal/redact"
	"github.com/gencode/gencode/internal/termtext"
)

// redactedKey replaces the configured API key in the log, as in tool
// results.
const redactedKey = "[REDACTED:api-key]"

// openLog opens the run's log: $XDG_STATE_HOME/gencode/gencode.log, at
// debug level with --debug. Every record names the process (pid), since
// several gencode runs may share the file. The configured API key and any
// other secret the summarizer's redaction finds never reach it. A log that
// cannot be opened is said once on stderr; the run goes on without one.
func openLog(env Env, cfg config.Config, debug bool) (*slog.Logger, *logfile.File) {
	discard := slog.New(slog.DiscardHandler)
	dir := config.StateDir(env.Getenv)
	if dir == "" {
		fmt.Fprintln(env.Stderr, "gencode: warning: no log file: neither XDG_STATE_HOME nor HOME is set")
		return discard, nil
	}
	f, err := logfile.Open(dir, logfile.Options{})
	if err != nil {
		fmt.Fprintln(env.Stderr, "gencode: warning: no log file: "+termtext.OneLine(err.Error(), 0))
		return discard, nil
	}
	return logfile.New(f, logfile.Options{Debug: debug, Redact: secretRedactor(cfg.APIKey, cfg.BaseURLUserinfo)}).With("pid", os.Getpid()), f
}

// secretRedactor takes the secrets out of a text gencode logs or shows:
// the configured API key and the user:password a base URL was given with,
// literally, then what the summarizer's secret rules find. The log, the
// model client's errors and the error line on stderr (and in the TUI) all
// use it.
func secretRedactor(key, userinfo string) func(string) string {
	if len(key) < 8 { // shorter ones are placeholders ("none", "local")
		key = ""
	}
	return func(s string) string {
		if key != "" {
			s = strings.ReplaceAll(s, key, redactedKey)
		}
		if userinfo != "" {
			s = strings.ReplaceAll(s, userinfo+"@", redactedUserinfo+"@")
		}
		s, _ = redact.Redact(s)
		return s
	}
}

// redactedUserinfo replaces a base URL's user:password.
const redactedUserinfo = "[REDACTED:url-credentials]"
