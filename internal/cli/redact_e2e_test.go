package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestProviderErrorsAreRedacted: print mode used to print a provider's
// error body on stderr as it came: a 401 echoing the key, a 400 quoting
// the request's secrets. The client now redacts the key, literally, and
// every secret the summarizer's rules find, where it builds the error; so
// stderr and the log show neither, and the error still says what failed.
func TestProviderErrorsAreRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"
	secrets := []string{
		"AKIAZ7Q3M4N5P6R7S8T9",                         // aws access key
		"ghp_0123456789abcdefghijABCDEFGHIJklmnop",     // github token
		"3f2a9c41b7d05e68a1c9f4e2d7b30a6c5e8f1d24",     // gcp private_key_id
		"S3cr3t-Passw0rd!",                             // url password
		"xoxb-123456789012-1234567890123-AbCdEfGhIjKl", // slack
	}
	body400 := `{"error":{"message":"invalid request: messages[1].content: 'aws_access_key_id=` + secrets[0] +
		` GH_TOKEN=` + secrets[1] + ` {\"private_key_id\": \"` + secrets[2] + `\"} postgres://app:` + secrets[3] +
		`@db:5432/x SLACK_BOT_TOKEN=` + secrets[4] + `'","type":"invalid_request_error","code":null}}`
	tests := []struct {
		name    string
		reply   openaitest.Reply
		wantErr string
	}{
		{name: "401 echoing the key", wantErr: "gencode: the endpoint refused the credentials: ",
			reply: openaitest.Error(401, `{"error":{"message":"Incorrect API key provided: `+key+`. Find your key at https://platform.openai.com.","type":"invalid_request_error","code":"invalid_api_key"}}`)},
		{name: "400 quoting secrets", wantErr: "gencode: chat completion gpt-4o-mini: provider error 400: invalid request",
			reply: openaitest.Error(400, body400)},
		{name: "plain text 403", wantErr: "gencode: the endpoint refused the credentials: ",
			reply: openaitest.Reply{Status: 403, Header: map[string]string{"Content-Type": "text/plain"},
				Body: "key " + key + " may not use this model; token " + secrets[1]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return tt.reply }))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.env["OPENAI_API_KEY"] = key
			res := sb.run("-p", "hi", "--no-summarize")
			require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
			require.True(t, strings.HasPrefix(res.stderr, tt.wantErr), "stderr: %s", res.stderr)
			require.Contains(t, res.stderr, "[REDACTED:")
			log, err := os.ReadFile(filepath.Join(sb.home, ".local", "state", "gencode", "gencode.log"))
			require.NoError(t, err)
			for _, s := range append([]string{key}, secrets...) {
				require.NotContains(t, res.stderr, s, "stderr shows a secret")
				require.NotContains(t, string(log), s, "the log holds a secret")
			}
		})
	}
}

// TestProviderErrorQuotingEverySecretShape: a 400 whose message quotes the
// whole secret corpus (every shape the summarizer's rules know, the kind
// of body a provider sends back when it refuses a request full of
// secrets): stderr and the log show none of them.
func TestProviderErrorQuotingEverySecretShape(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "redact", "testdata", "secrets.json"))
	require.NoError(t, err)
	var corpus struct {
		Secrets []struct{ Name, Text, Secret string } `json:"secrets"`
	}
	require.NoError(t, json.Unmarshal(b, &corpus))
	var texts []string
	for _, s := range corpus.Secrets {
		texts = append(texts, s.Text)
	}
	msg, err := json.Marshal("invalid request: messages[1].content: " + strings.Join(texts, "\n"))
	require.NoError(t, err)
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Error(400, `{"error":{"message":`+string(msg)+`,"type":"invalid_request_error"}}`)
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	res := sb.run("-p", "hi", "--no-summarize")
	require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
	log, err := os.ReadFile(filepath.Join(sb.home, ".local", "state", "gencode", "gencode.log"))
	require.NoError(t, err)
	for _, s := range corpus.Secrets {
		require.NotContains(t, res.stderr, s.Secret, "stderr shows %s", s.Name)
		require.NotContains(t, string(log), s.Secret, "the log holds %s", s.Name)
	}
}
