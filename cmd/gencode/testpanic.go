//go:build gencode_testpanic

package main

import (
	"os"

	"github.com/gencode/gencode/internal/cli"
)

// A binary built with -tags gencode_testpanic panics in the goroutine
// GENCODE_TEST_PANIC names (turn, summary, indexer, window): the check,
// by hand or in a terminal, that gencode recovers, keeps the terminal
// sane, logs the stack and says where. A release build has no such hook.
func testEnv(env cli.Env) cli.Env {
	if where := os.Getenv("GENCODE_TEST_PANIC"); where != "" {
		env.PanicAt = func(at string) {
			if at == where {
				panic("GENCODE_TEST_PANIC=" + where)
			}
		}
	}
	return env
}
