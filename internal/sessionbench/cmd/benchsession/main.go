// Command benchsession plays long scripted sessions through the gencode
// binary against the openaitest fake and prints what they cost: prompt
// tokens total, uncached and billed with a prefix cache, the summarizer's
// share, CPU per turn by turn range, and the correctness checks (no request
// over the window, no broken tool-call pairing, the early fact recalled).
//
//	benchsession -bin bin/gencode [-scenarios B,long] [-turns N] [-seed N] [-user-words N] [-answer-words N] [-check] [-keep DIR]
//
// Each figure is printed against Crush's on the same scenario
// (sessionbench.CrushReference). With -check it exits 1 when a scenario
// misses a target: billed at a 10% cached price at most 0.5x Crush's and
// uncached at most 0.7x (issue 30), B's total and the long one's CPU per
// turn (issue 11), no request over the window, no rule violation, the
// early fact recalled. -seed N plays a held-out variant: other words, the
// same sizes, so Crush's figures still apply.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/sessionbench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchsession", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin/gencode", "the gencode binary to measure")
	names := fs.String("scenarios", "B,long", "scenarios to run, comma-separated: B, long")
	turns := fs.Int("turns", 0, "play this many turns instead of the scenario's (a quick look; Crush's figures are for the full length)")
	seed := fs.Int64("seed", 0, "play a held-out variant of each scenario: other words, the same sizes")
	userWords := fs.Int("user-words", 0, "size each user message at this many words (a held-out variant; Crush's figures are for the scenario's sizes)")
	answerWords := fs.Int("answer-words", 0, "size each answer at this many words (as -user-words)")
	check := fs.Bool("check", false, "exit 1 when a scenario misses a target")
	keep := fs.String("keep", "", "make the sessions under this directory and keep them")
	config := fs.String("config", "", "TOML appended to gencode's config file (experiments)")
	accounts := fs.String("accounts", "", "write each request's accounting as JSON lines to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var scs []sessionbench.Scenario
	for _, n := range strings.Split(*names, ",") {
		switch strings.TrimSpace(n) {
		case "B", "b":
			scs = append(scs, sessionbench.ScenarioB())
		case "long":
			scs = append(scs, sessionbench.ScenarioLong())
		case "":
		default:
			fmt.Fprintf(stderr, "benchsession: unknown scenario %q (B, long)\n", n)
			return 2
		}
	}
	ok := true
	for _, sc := range scs {
		sc.Seed = *seed
		if *userWords > 0 {
			sc.UserWords = *userWords
		}
		if *answerWords > 0 {
			sc.AnswerWords = *answerWords
		}
		if *turns > 0 {
			sc.Turns = *turns
			sc.FactTurn = min(sc.FactTurn, *turns)
		}
		opts := sessionbench.Options{Binary: *bin, Progress: stderr, Config: *config}
		if *keep != "" {
			opts.Dir = fmt.Sprintf("%s/%s", *keep, sc.Name)
		}
		res, err := sessionbench.Run(ctx, sc, opts)
		if err != nil {
			fmt.Fprintf(stderr, "benchsession: %v\n", err)
			return 1
		}
		if *accounts != "" {
			if err := writeAccounts(*accounts, res); err != nil {
				fmt.Fprintf(stderr, "benchsession: %v\n", err)
				return 1
			}
		}
		res.Write(stdout)
		if !sessionbench.WriteTargets(stdout, res) {
			ok = false
		}
		fmt.Fprintln(stdout)
	}
	if *check && !ok {
		fmt.Fprintln(stderr, "benchsession: targets missed")
		return 1
	}
	return 0
}

// writeAccounts appends the scenario's accounts to path, one JSON object a
// line, each with the scenario's name.
func writeAccounts(path string, res sessionbench.Result) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("write accounts: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, a := range res.Accounts {
		line := struct {
			Scenario string `json:"scenario"`
			openaitest.Account
		}{res.Scenario.Name, a}
		if err := enc.Encode(line); err != nil {
			f.Close()
			return fmt.Errorf("write accounts: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write accounts: %w", err)
	}
	return nil
}
