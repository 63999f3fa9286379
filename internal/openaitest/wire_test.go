package openaitest

import (
	"encoding/json"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

// sameAsUnmarshal checks splitRequest against json.Unmarshal on body:
// when it reads the body and every part it left to its decoders is valid
// JSON, json.Unmarshal reads the same request; when a part is not,
// json.Unmarshal fails too. It reports whether the fast path read it.
func sameAsUnmarshal(t *testing.T, body []byte) bool {
	t.Helper()
	fast, ok := splitRequest(body)
	if !ok {
		return false
	}
	valid := len(fast.Tools) == 0 || json.Valid(fast.Tools)
	for _, m := range fast.Messages {
		valid = valid && json.Valid(m)
	}
	var slow wireRequest
	err := json.Unmarshal(body, &slow)
	if !valid {
		require.Error(t, err, "a part is not JSON, so neither is the body: %q", body)
		return true
	}
	require.NoError(t, err, "splitRequest read a body json.Unmarshal refuses: %q", body)
	require.Equal(t, slow.Model, fast.Model)
	require.Equal(t, slow.Stream, fast.Stream)
	require.Equal(t, slow.StreamOptions, fast.StreamOptions)
	require.Equal(t, slow.MaxTokens, fast.MaxTokens)
	require.Equal(t, slow.MaxCompletionTokens, fast.MaxCompletionTokens)
	require.Equal(t, string(slow.Tools), string(fast.Tools))
	require.Equal(t, string(slow.ToolChoice), string(fast.ToolChoice))
	require.Equal(t, len(slow.Messages), len(fast.Messages))
	require.Equal(t, slow.Messages == nil, fast.Messages == nil)
	for i := range slow.Messages {
		require.Equal(t, string(slow.Messages[i]), string(fast.Messages[i]))
	}
	return true
}

func TestSplitRequestReadsWhatUnmarshalReads(t *testing.T) {
	real, err := json.Marshal(openai.ChatCompletionRequest{
		Model: "gpt-4o-mini", Stream: true, MaxCompletionTokens: 100,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are \"gencode\" {a [coding] agent}\\ \u2028 <b>&</b> ❯"},
			{Role: "user", Content: `say \"hi\" \\`},
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
				Function: openai.FunctionCall{Name: "Bash", Arguments: `{"command":"echo \"}]\""}`}}}},
			{Role: "tool", ToolCallID: "c1", Content: "}]\"\n"},
		},
		Tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "Bash",
			Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}},
		ToolChoice: "auto",
	})
	require.NoError(t, err)
	read := []string{
		string(real),
		`{}`,
		" \t\r\n{ \"model\" : \"m\" , \"messages\" : [ { \"role\" : \"user\" , \"content\" : \"x\" } ] } \n",
		`{"model":"m","messages":[],"max_tokens":7}`,
		`{"model":"m","messages":[{"role":"user","content":"a\\"},{"role":"user","content":"b\\\"c"}]}`,
		`{"model":"m","temperature":0.5,"n":1,"user":"u","parallel_tool_calls":false,"messages":[{"role":"user"}]}`,
		`{"model":null,"stream":null,"max_tokens":null,"stream_options":null,"tools":null,"tool_choice":null}`,
		`{"tool_choice":{"type":"function","function":{"name":"Bash"}},"model":"m"}`,
		// parts that are not JSON: json.Unmarshal refuses the body too
		`{"model":"m","messages":[{"role":"user","content":"x",}]}`,
		`{"model":"m","messages":[{"a":[}]]}`,
		`{"model":"m","tools":[1,]}`,
	}
	for _, body := range read {
		require.True(t, sameAsUnmarshal(t, []byte(body)), "the fast path gave up on %q", body)
	}
	// What json.Unmarshal reads its own way, or refuses: the caller runs it.
	giveUp := []string{
		``, `[]`, `null`, `{`, `{"model":"m"`, `{"model":"m",}`, `{"model":"m"} x`, `{"model":"m"}{}`,
		`{"Model":"m"}`, `{"MESSAGES":[]}`, `{"mod\u0065l":"m"}`, `{"model":"a","model":"b"}`,
		`{"messages":null}`, `{"messages":[null]}`, `{"messages":[1]}`, `{"messages":{}}`, `{"messages":[{}}`,
		`{"model":1}`, `{"stream":"yes"}`, `{"max_tokens":1.5}`, `{"temperature":nope}`, `{"tool_choice":tru}`,
		`{"model":"m" "stream":true}`, `{"messages":[{"role":"user","content":"x"]}]}`, `{"model" "m"}`, "{\"mo\ndel\":1}", `{"model":"m`,
	}
	for _, body := range giveUp {
		_, ok := splitRequest([]byte(body))
		require.False(t, ok, "%q", body)
	}
}

// FuzzSplitRequest: whatever splitRequest reads, json.Unmarshal reads the
// same way.
func FuzzSplitRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a\"}]"}],"stream":true,"tools":[{"a":[1,{"b":"]"}]}]}`))
	f.Add([]byte(`{"model":"m","messages":[],"max_tokens":5,"stream_options":{"include_usage":true},"x":[1,2]}`))
	f.Fuzz(func(t *testing.T, body []byte) { sameAsUnmarshal(t, body) })
}
