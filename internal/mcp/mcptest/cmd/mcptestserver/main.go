// Command mcptestserver serves mcptest's server over stdio, or over
// streamable HTTP with -http ADDR (it prints the URL on stdout), for
// gencode's end-to-end tests.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gencode/gencode/internal/mcp/mcptest"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	many := flag.Int("many", 0, "extra tools with large schemas")
	pidFile := flag.String("pidfile", "", "write the process id to this file")
	linger := flag.Bool("linger", false, "stay alive after stdin closes (a server that would outlive its client)")
	flag.Parse()
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	opts := mcptest.Options{Many: *many, Crash: func(context.Context, *sdk.CallToolRequest) { os.Exit(3) }}
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		srv := mcptest.NewServer(opts, nil)
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		if err := http.Serve(ln, h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	err := mcptest.NewServer(opts, nil).Run(context.Background(), &sdk.StdioTransport{})
	if *linger {
		for { // until killed (a bare select{} would die as a deadlock once nothing else runs)
			time.Sleep(time.Hour)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
