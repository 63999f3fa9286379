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
	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/sandbox/confine"
)

func main() {
	// Before anything else: the sandbox helper confines itself and
	// becomes the shell of one command (see confine.Main).
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(confine.Main(os.Args[1:], os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := cli.Run(ctx, testEnv(cli.OSEnv()))
	stop()
	os.Exit(code)
}
