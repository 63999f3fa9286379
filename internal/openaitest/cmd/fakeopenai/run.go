package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/gencode/gencode/internal/openaitest"
)

// run serves until ctx is done or stdin (when not nil) reaches EOF.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeopenai", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "JSON script to serve (openaitest.Script); empty: no replies")
	logPath := fs.String("log", "", "append each chat request as a JSON line to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakeopenai: unexpected arguments %q\n", fs.Args())
		return 2
	}

	var sc openaitest.Script
	if *scriptPath != "" {
		var err error
		if sc, err = openaitest.LoadScript(*scriptPath); err != nil {
			fmt.Fprintf(stderr, "fakeopenai: %v\n", err)
			return 1
		}
	}
	opts := []openaitest.Option{openaitest.WithScript(sc)}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "fakeopenai: open log: %v\n", err)
			return 1
		}
		defer f.Close()
		var mu sync.Mutex
		enc := json.NewEncoder(f)
		opts = append(opts, openaitest.WithRequestHook(func(r openaitest.Request) {
			mu.Lock()
			defer mu.Unlock()
			if err := enc.Encode(r); err != nil {
				fmt.Fprintf(stderr, "fakeopenai: write log: %v\n", err)
			}
		}))
	}
	srv := openaitest.NewServer(nil, opts...) // listens on 127.0.0.1, a free port
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL())

	eof := make(chan struct{})
	if stdin != nil {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-ctx.Done():
	case <-eof:
	}
	return 0
}
