package cli_test

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/pricing"
)

// streamSchema is the documented schema of print mode's JSON events, the
// file the README shows: for each event type (and the nested "facts" and
// "usage" objects) every field and its JSON type.
//
//go:embed testdata/stream-json-schema.json
var streamSchema []byte

type eventSchema map[string]map[string]string

func loadSchema(t *testing.T) eventSchema {
	t.Helper()
	var s eventSchema
	require.NoError(t, json.Unmarshal(streamSchema, &s))
	return s
}

// check reports how obj differs from the schema of kind: a field missing,
// one not documented, or one of another type.
func (s eventSchema) check(kind string, obj map[string]any) []string {
	fields, ok := s[kind]
	if !ok {
		return []string{fmt.Sprintf("type %q is not documented", kind)}
	}
	var probs []string
	for name, typ := range fields {
		v, ok := obj[name]
		if !ok {
			probs = append(probs, fmt.Sprintf("%s: field %q missing", kind, name))
			continue
		}
		if p := s.checkValue(typ, v); p != "" {
			probs = append(probs, fmt.Sprintf("%s.%s: %s", kind, name, p))
		}
	}
	for name := range obj {
		if _, ok := fields[name]; !ok {
			probs = append(probs, fmt.Sprintf("%s: field %q not documented", kind, name))
		}
	}
	return probs
}

func (s eventSchema) checkValue(typ string, v any) string {
	switch typ {
	case "string":
		if _, ok := v.(string); ok {
			return ""
		}
	case "boolean":
		if _, ok := v.(bool); ok {
			return ""
		}
	case "number":
		if _, ok := v.(float64); ok {
			return ""
		}
	case "integer":
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			return ""
		}
	case "array":
		if _, ok := v.([]any); ok {
			return ""
		}
	default: // a nested object documented under its own name
		if m, ok := v.(map[string]any); ok {
			return strings.Join(s.check(typ, m), "; ")
		}
	}
	return fmt.Sprintf("%v is not a %s", v, typ)
}

// checkLines checks each line of out against the schema and returns the
// events by type, in order.
func checkLines(t *testing.T, s eventSchema, out string) map[string][]map[string]any {
	t.Helper()
	got := map[string][]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
		var obj map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &obj), "line %d is not a JSON object: %s", n, sc.Text())
		kind, _ := obj["type"].(string)
		require.Empty(t, s.check(kind, obj), "line %d: %s", n, sc.Text())
		got[kind] = append(got[kind], obj)
	}
	require.Positive(t, n, "no output")
	return got
}

// TestStreamJSONReportsABackgroundCompaction is issue 29's first
// acceptance: three turns driven through one process with
// --input-format stream-json, in a window small enough that the history
// is compacted in the background; every line of the output matches the
// documented schema, and a compaction start/end pair says the tokens
// before and after and the session's facts.
func TestStreamJSONReportsABackgroundCompaction(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("The notes project keeps one file per topic and a short index. ", 40)
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		if isSummarizer(r) {
			return summarize(r)
		}
		if last := r.Messages[len(r.Messages)-1]; last.Role == openai.ChatMessageRoleTool {
			return openaitest.Text("Done: the note is written. " + filler)
		}
		n := len(r.Messages)
		write, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("notes/n%d.md", n), "content": "a note\n"})
		return openaitest.Calls(openaitest.ToolCall{Name: "Write", Arguments: string(write)})
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	sb.writeConfig("context_window = 6000\n[summarize]\npreserve_recent = 2\n")
	var in strings.Builder
	for i := 1; i <= 4; i++ {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": fmt.Sprintf("Turn %d: write a note. %s", i, filler)}})
		in.Write(append(line, '\n'))
	}
	res := sb.runIn(sb.work, in.String(), "-p", "-", "--input-format", "stream-json", "--output-format", "stream-json", "--allow", "Write")
	require.Equal(t, 0, res.code, res.stderr)
	got := checkLines(t, loadSchema(t), res.stdout)
	require.Len(t, got["init"], 1)
	require.Len(t, got["user"], 4)
	require.Len(t, got["result"], 1)
	require.NotEmpty(t, got["tool_call"])
	require.NotEmpty(t, got["tool_result"])
	require.NotEmpty(t, got["text"])
	require.NotEmpty(t, got["compaction_start"], "no compaction started; stderr: %s", res.stderr)
	require.NotEmpty(t, got["compaction_end"], "no compaction ended; stderr: %s", res.stderr)
	start, end := got["compaction_start"][0], got["compaction_end"][0]
	require.Equal(t, true, start["background"])
	require.Positive(t, start["tokens_before"])
	require.Equal(t, true, end["ok"], "compaction_end: %v", end)
	before, after := end["tokens_before"].(float64), end["tokens_after"].(float64)
	require.Positive(t, after)
	require.Less(t, after, before)
	facts := end["facts"].(map[string]any)
	require.Contains(t, facts["files_modified"], "notes/n2.md")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Contains(t, lines[len(lines)-1], `"type":"result"`, "the result comes last")
}

// costLine is the Session total row of /cost: requests, input, cached,
// output and the cost.
var costLine = regexp.MustCompile(`Session total\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S*)`)

// TestJSONUsageIsWhatCostShows: --output-format json's usage and cost are
// the session's, as /cost adds them up and prices them (the command itself
// run on the same store).
func TestJSONUsageIsWhatCostShows(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Reply{Content: "first", Usage: &openai.Usage{PromptTokens: 1200, CompletionTokens: 80, TotalTokens: 1280,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1024}}})
	res := sb.run("-p", "hello", "--output-format", "json")
	require.Equal(t, 0, res.code, res.stderr)
	srv.Enqueue(openaitest.Reply{Content: "second", Usage: &openai.Usage{PromptTokens: 1500, CompletionTokens: 40, TotalTokens: 1540}})
	res = sb.run("-c", "-p", "again", "--output-format", "json")
	require.Equal(t, 0, res.code, res.stderr)
	got := checkLines(t, loadSchema(t), res.stdout)
	require.Len(t, got["result"], 1, "json prints the result alone")
	require.Len(t, strings.Split(strings.TrimSpace(res.stdout), "\n"), 1)
	r := got["result"][0]
	require.Equal(t, "second", r["text"])
	require.Equal(t, "success", r["subtype"])

	st := sb.openStore()
	defer st.Close()
	reg := commands.New(commands.Deps{Store: st, Prices: pricing.New(nil)})
	out, err := reg.Run(context.Background(), commands.State{SessionID: r["session_id"].(string)}, "/cost")
	require.NoError(t, err)
	var row []string
	for _, sec := range out.Report.Sections {
		for _, l := range sec.Lines {
			if m := costLine.FindStringSubmatch(l); m != nil {
				row = m
			}
		}
	}
	require.NotNil(t, row, "no Session total in /cost")
	u := r["usage"].(map[string]any)
	num := func(s string) string { return strings.ReplaceAll(s, ",", "") }
	require.Equal(t, num(row[1]), fmt.Sprint(u["requests"]))
	require.Equal(t, num(row[2]), fmt.Sprint(u["input_tokens"]))
	require.Equal(t, "2700", fmt.Sprint(u["input_tokens"]))
	require.Equal(t, num(row[3]), fmt.Sprint(u["cached_tokens"]))
	require.Equal(t, num(row[4]), fmt.Sprint(u["output_tokens"]))
	require.Equal(t, row[5], r["cost_text"], "the cost /cost shows")
	require.Positive(t, r["cost_usd"])
}

// TestREADMEShowsTheSchema: the README shows the schema file as it is, and
// an example of every event type, each matching it.
func TestREADMEShowsTheSchema(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), strings.TrimSpace(string(streamSchema)), "README.md must show testdata/stream-json-schema.json verbatim")
	block := regexp.MustCompile("(?s)<!-- stream-json examples -->\n```json\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no stream-json examples block")
	s := loadSchema(t)
	got := checkLines(t, s, string(block[1]))
	for kind := range s {
		if kind == "facts" || kind == "usage" {
			continue
		}
		require.NotEmpty(t, got[kind], "README.md has no example of %q", kind)
	}
}

// TestStreamJSONErrorsAndRetries: a rate-limited request is a retry line,
// a turn that fails an error line and a result that says so, and the exit
// code is print mode's; every line matches the schema.
func TestStreamJSONErrorsAndRetries(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
		openaitest.Text("after the wait"))
	res := sb.run("-p", "hi", "--output-format", "stream-json")
	require.Equal(t, 0, res.code, res.stderr)
	got := checkLines(t, loadSchema(t), res.stdout)
	require.Len(t, got["retry"], 1)
	require.Equal(t, "after the wait", got["result"][0]["text"])

	srv.Enqueue(openaitest.Error(401, `{"error":{"message":"bad key","type":"invalid_request_error"}}`))
	res = sb.run("-p", "hi", "--output-format", "stream-json")
	require.Equal(t, 1, res.code, res.stderr)
	got = checkLines(t, loadSchema(t), res.stdout)
	require.Len(t, got["error"], 1)
	require.Contains(t, got["error"][0]["message"], "refused the credentials")
	r := got["result"][0]
	require.Equal(t, "error", r["subtype"])
	require.Equal(t, true, r["is_error"])
	require.Equal(t, float64(1), r["exit_code"])

	// A denied call: exit 3, said in the result, the tool_result marked.
	srv.Enqueue(bashCall("touch x"), openaitest.Text("could not"))
	res = sb.run("-p", "hi", "--output-format", "json")
	require.Equal(t, 3, res.code, res.stderr)
	got = checkLines(t, loadSchema(t), res.stdout)
	r = got["result"][0]
	require.Equal(t, "denied", r["subtype"])
	require.Equal(t, float64(3), r["exit_code"])
	require.Equal(t, true, r["tool_calls"].([]any)[0].(map[string]any)["denied"])
}
