package sessionbench

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/openaitest"
)

var (
	turnRe  = regexp.MustCompile(`Turn (\d+):`)
	factRe  = regexp.MustCompile(`FACT-[A-Z0-9-]+`)
	wordsRe = regexp.MustCompile(`about (\d+) words`)
)

// model is the scripted LLM of a scenario. As the agent's model it follows
// the script of each turn; asked the recall question it answers from its
// context, or searches the session log when the fact is not there. As the
// summarizer it writes the five headings at about 70% of the words asked
// for and keeps every FACT-... token of its input, as a good summarizer
// keeps the facts that matter.
type model struct {
	sc Scenario
}

func (m model) reply(r openaitest.Request) openaitest.Reply {
	if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
		return openaitest.Text(m.summary(r))
	}
	last := r.Messages[len(r.Messages)-1]
	turn := latestTurn(r.Messages)
	switch last.Role {
	case openai.ChatMessageRoleUser:
		if strings.Contains(last.Content, recallQuestion) {
			if f := factRe.FindString(allText(r.Messages[:len(r.Messages)-1])); f != "" {
				return openaitest.Text("The release codename you gave me is " + f + ".")
			}
			return openaitest.Calls(openaitest.ToolCall{Name: "SearchHistory", Arguments: `{"query":"release codename"}`})
		}
		switch {
		case m.sc.WriteAndRun:
			return openaitest.Calls(
				openaitest.ToolCall{Name: "Write", Arguments: mustJSON(map[string]string{
					"file_path": fmt.Sprintf("notes/n%03d.md", turn), "content": filler(m.sc.seed(int64(turn)<<8), 30) + "\n"})},
				openaitest.ToolCall{Name: "Bash", Arguments: mustJSON(map[string]string{
					"command": fmt.Sprintf("wc -c notes/n%03d.md", turn)})},
			)
		case m.sc.ReadEvery > 0 && turn%m.sc.ReadEvery == 0:
			return openaitest.Calls(openaitest.ToolCall{Name: "Read", Arguments: `{"file_path":"README.md"}`})
		}
	case openai.ChatMessageRoleTool:
		if last.Name == "SearchHistory" {
			if f := factRe.FindString(last.Content); f != "" {
				return openaitest.Text("The release codename you gave me is " + f + ".")
			}
			return openaitest.Text("I could not find the release codename in this session.")
		}
	}
	return openaitest.Text(fmt.Sprintf("Done with turn %d. %s", turn, filler(m.sc.seed(int64(turn)<<16), m.sc.AnswerWords)))
}

// summary writes a narrative of about 70% of the words asked for.
func (m model) summary(r openaitest.Request) string {
	text := allText(r.Messages)
	n := 150
	if w := wordsRe.FindAllStringSubmatch(text, -1); len(w) > 0 {
		n, _ = strconv.Atoi(w[len(w)-1][1])
	}
	var b strings.Builder
	b.WriteString("## Goal\n- finish the work the user asked for, turn by turn\n## Key decisions\n")
	seen := map[string]bool{}
	for _, f := range factRe.FindAllString(text, -1) {
		if !seen[f] {
			seen[f] = true
			fmt.Fprintf(&b, "- the release codename is %s\n", f)
		}
	}
	words := 20
	for i := 0; words < n*7/10; i++ {
		line := "- " + filler(int64(i)<<24, 11) + "\n"
		b.WriteString(line)
		words += 12
	}
	b.WriteString("## Topics\n- notes, files and commands\n## Current state\n- the turns so far are done\n## Next steps\n- go on with the next turn\n")
	return b.String()
}

// latestTurn is the number of the latest "Turn N:" user message, 0 if none.
func latestTurn(msgs []openai.ChatCompletionMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != openai.ChatMessageRoleUser {
			continue
		}
		if m := turnRe.FindStringSubmatch(msgs[i].Content); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

func allText(msgs []openai.ChatCompletionMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteByte('\n')
		for _, c := range m.ToolCalls {
			b.WriteString(c.Function.Arguments)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always encode
	}
	return string(b)
}
