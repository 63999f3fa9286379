// Command fakeopenai runs the openaitest fake OpenAI server as a process, for
// end-to-end tests of the gencode binary.
//
//	fakeopenai [-script script.json] [-log requests.jsonl]
//
// It prints its base URL (http://127.0.0.1:PORT/v1) as the first line of stdout,
// then serves the script (see openaitest.Script) until it is interrupted or
// terminated, or, when stdin is a pipe, until stdin is closed. Give the URL to
// gencode as OPENAI_BASE_URL.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Only a pipe can tell "the parent is gone": /dev/null or a terminal would
	// end the server at once or never.
	var stdin io.Reader
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		stdin = os.Stdin
	}
	code := run(ctx, os.Args[1:], stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
