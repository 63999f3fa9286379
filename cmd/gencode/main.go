// Command gencode is an interactive terminal coding agent that keeps long
// sessions going: it compacts history in the background and never loses a
// message. See the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gencode/gencode/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := cli.Run(ctx, cli.OSEnv())
	stop()
	os.Exit(code)
}
