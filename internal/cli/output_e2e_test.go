package cli_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/termtext/termtexttest"
)

// TestPipedOutputIsInert: piped (`gencode -p ... | tee out.txt`), print
// mode, history and export used to write the log's exact bytes, so an
// answer's OSC 52 set the clipboard, and its clear-screen, title and
// hyperlink sequences acted, on whatever terminal showed the pipe or the
// file. Now every output is made inert by default, terminal or not: text
// sanitized, JSON escaped (it decodes to the exact data); --raw-output
// gives the exact bytes, and a JSONL export stays escaped JSON even then.
func TestPipedOutputIsInert(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	id, evil := seedHostileSession(t, sb)
	tests := []struct {
		name string
		args []string
		// answer is queued for print mode.
		answer string
		// want is what the output still shows; wantRaw what --raw-output
		// writes exactly (empty: not checked).
		want, wantRaw string
		// jsonl: every line decodes, and a content holds evil exactly.
		jsonl bool
	}{
		{name: "print mode", args: []string{"-r", id, "-p", "go"}, answer: "piped " + evil,
			want: "piped BEGIN", wantRaw: "piped " + evil + "\n"},
		{name: "export md", args: []string{"export", "--session", id},
			want: "## assistant (#6)\n\nanswer BEGIN", wantRaw: "\n## assistant (#6)\n\nanswer " + evil + "\n"},
		{name: "export jsonl", args: []string{"export", "--format", "jsonl", "--session", id}, jsonl: true,
			want: `"content":"answer BEGIN\n`},
		{name: "history full", args: []string{"history", "--full", "--session", id}, want: "answer BEGIN"},
		{name: "history json", args: []string{"history", "--json", "--session", id}, want: `"content": "answer BEGIN\n`},
		{name: "sessions", args: []string{"sessions"}, want: "title BEGIN"},
	}
	for _, tt := range tests {
		for _, raw := range []bool{false, true} {
			name := tt.name
			args := tt.args
			if raw {
				name += " raw-output"
				args = append([]string{"--raw-output"}, args...)
			}
			t.Run(name, func(t *testing.T) {
				// Not parallel: the runs share the sandbox's session.
				if tt.answer != "" {
					srv.Enqueue(openaitest.Text(tt.answer))
				}
				res := sb.run(args...)
				require.Equal(t, 0, res.code, res.stderr)
				if raw && tt.wantRaw != "" {
					require.Contains(t, res.stdout, tt.wantRaw, "--raw-output keeps the exact bytes")
					return
				}
				if !raw || tt.jsonl {
					if found := termtexttest.Raw(res.stdout); len(found) > 0 {
						t.Fatalf("%v wrote raw %v:\n%q", args, found, res.stdout)
					}
				}
				require.Contains(t, res.stdout, tt.want)
				if tt.jsonl {
					var contents []string
					sc := bufio.NewScanner(strings.NewReader(res.stdout))
					sc.Buffer(nil, 1<<20)
					for sc.Scan() {
						var m struct {
							Content *string `json:"content"`
						}
						require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
						if m.Content != nil {
							contents = append(contents, *m.Content)
						}
					}
					require.Contains(t, contents, "answer "+evil, "the JSON decodes to the exact data")
				}
			})
		}
	}
}
