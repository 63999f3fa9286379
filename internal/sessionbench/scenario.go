// Package sessionbench measures what long sessions cost: it plays scripted
// sessions through the real gencode binary, one print-mode run per turn,
// against the openaitest fake server, and reports what a provider with a
// prefix cache would bill (total, uncached and billed prompt tokens), the
// summarizer's share, the CPU of each turn by turn range, requests over the
// window, tool-call pairing and role-order violations, and whether a fact
// from an early turn is still recalled at the end.
//
// `make bench-session` runs it (cmd/benchsession).
package sessionbench

import (
	"fmt"
	"math/rand"
	"strings"
)

// Scenario is a scripted session.
type Scenario struct {
	Name string
	// Turns is the number of user turns before the recall question.
	Turns int
	// Window is the model's context window, for gencode and the fake.
	Window int
	// UserWords and AnswerWords size each turn's user message and final
	// answer (a word of the filler is about one token).
	UserWords, AnswerWords int
	// ReadEvery makes the model Read a file of the project every that many
	// turns before it answers (0: never).
	ReadEvery int
	// WriteAndRun makes the model write a note and run a command on it in
	// every turn (Write and Bash in one assistant message).
	WriteAndRun bool
	// FactTurn is the turn whose user message carries the fact asked for
	// at the end (0: no recall question).
	FactTurn int
	// CPURange is the width of the turn ranges CPU is reported by.
	CPURange int
	// Baseline plays the first range's turns again in a second session,
	// interleaved with the last range's, for the growth target (Run), in
	// a project holding a copy of the files the session wrote before the
	// last range (what a turn costs with the project's size is not the
	// session's growth).
	Baseline bool
	// Seed changes the words of every message, not their sizes: a
	// held-out variant of the scenario, which the policy was not tuned on
	// (0: the scenario's own text).
	Seed int64
}

// ScenarioB is the scenario B: 150 turns of about 300 tokens in a
// 32,000-token window, a file read every tenth turn, then a question about
// a fact given in turn 3.
func ScenarioB() Scenario {
	return Scenario{Name: "B", Turns: 150, Window: 32000, UserWords: 85, AnswerWords: 165,
		ReadEvery: 25, FactTurn: 3, CPURange: 25}
}

// ScenarioLong is a 600-turn session of small turns that each write a note
// and run a command on it, so that the summaries' lists (files, commands,
// requests) keep growing: per-turn CPU must stay flat.
func ScenarioLong() Scenario {
	return Scenario{Name: "long", Turns: 600, Window: 32000, UserWords: 40, AnswerWords: 60,
		WriteAndRun: true, FactTurn: 5, CPURange: 50, Baseline: true}
}

// Fact is the early fact the recall question asks for.
const Fact = "FACT-BLUEFIN-42"

// recallQuestion is the last turn's prompt.
const recallQuestion = "What was the release codename I gave you early in this session? Answer with the codename."

// vocabulary is the filler's words: common words, one token each for
// OpenAI's tokenizers, so that a turn's size in tokens is about its words.
var vocabulary = strings.Fields(`the handler store test module build config request answer session value
result error update change file function method package client server cache index table query field
record message summary check order start stop write read open close parse format print count limit
small large first last next older newer simple clear quick slow safe plain short long early late
make keep move copy sort find show hide call return use add remove fix run pass fail load save
data code path line word name type list map set key time date user model tool view page step`)

// filler returns n words drawn from the vocabulary with a seed, so that
// every run of a scenario sends the same text.
func filler(seed int64, n int) string {
	r := rand.New(rand.NewSource(seed))
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[r.Intn(len(vocabulary))]
	}
	// Sentences of 12 words read like prose.
	var b strings.Builder
	for i, w := range words {
		switch {
		case i == 0:
		case i%12 == 0:
			b.WriteString(". ")
		default:
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteByte('.')
	return b.String()
}

// Prompt is turn's user message (turns count from 1). The fact goes in the
// middle of its turn's message: not its first line, which a deterministic
// summary keeps verbatim, and not a "remember ..." sentence, which it keeps
// as a constraint. Only a summary that kept it, or a search of the log,
// can bring it back.
func (sc Scenario) Prompt(turn int) string {
	if turn > sc.Turns {
		return recallQuestion
	}
	head := fmt.Sprintf("Turn %d: ", turn)
	if sc.WriteAndRun {
		head += fmt.Sprintf("write note %d and count its bytes. ", turn)
	}
	body := filler(sc.seed(int64(turn)), sc.UserWords)
	if turn == sc.FactTurn {
		half := len(body) / 2
		if i := strings.IndexByte(body[half:], ' '); i >= 0 {
			half += i
		}
		body = body[:half] + ". The release codename is " + Fact + " and it ships with this build" + body[half:]
	}
	return head + body
}

// seed is the filler's seed for x in this variant of the scenario: x
// itself for Seed 0.
func (sc Scenario) seed(x int64) int64 { return x ^ sc.Seed*0x5DEECE66D }

// lastRangeFrom is the first turn of the last CPU range.
func (sc Scenario) lastRangeFrom() int {
	w := sc.cpuRange()
	if sc.Turns < 1 {
		return 1
	}
	return 1 + (sc.Turns-1)/w*w
}

// cpuRange is the width of the CPU ranges (50 when unset).
func (sc Scenario) cpuRange() int {
	if sc.CPURange <= 0 {
		return 50
	}
	return sc.CPURange
}

// Turns is the number of print-mode runs: the turns and the recall question.
func (sc Scenario) runs() int {
	if sc.FactTurn > 0 {
		return sc.Turns + 1
	}
	return sc.Turns
}

// readmeText is the project file the model reads.
func (sc Scenario) readmeText() string { return "# Project\n\n" + filler(sc.seed(-1), 120) + "\n" }
