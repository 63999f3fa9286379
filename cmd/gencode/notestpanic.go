//go:build !gencode_testpanic

package main

import "github.com/gencode/gencode/internal/cli"

// testEnv is the environment as it is: see testpanic.go.
func testEnv(env cli.Env) cli.Env { return env }
