package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// TestOneBadPageInTheLog: one damaged page in the messages table (issue
// 14, item 10) costs the messages on it, not the session: history --json,
// export and a turn with -c read the rest, say which messages were lost
// and how to recover, and the turn is stored.
func TestOneBadPageInTheLog(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Text("first answer"), openaitest.Text("answer after the damage"))
	res := sb.run("-p", "first question", "--no-summarize")
	require.Equal(t, 0, res.code, res.stderr)

	// Grow the session to ~40 pages, then damage one in the middle.
	ctx := context.Background()
	data := filepath.Join(sb.home, ".local", "share", "gencode")
	s, err := session.Open(ctx, data)
	require.NoError(t, err)
	list, err := s.Sessions(ctx, 1)
	require.NoError(t, err)
	id := list[0].ID
	for i := 3; i <= 300; i++ {
		role := session.RoleUser
		if i%2 == 0 {
			role = session.RoleAssistant
		}
		_, err := s.Append(ctx, id, session.Message{Role: role, Tokens: 100,
			Content: fmt.Sprintf("note %04d %s", i, strings.Repeat("y", 420))})
		require.NoError(t, err)
	}
	var pageno, size int64
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT pageno, pgsize FROM dbstat
		WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 12`).Scan(&pageno, &size))
	require.NoError(t, s.Close())
	f, err := os.OpenFile(filepath.Join(data, session.FileName), os.O_RDWR, 0)
	require.NoError(t, err)
	page := make([]byte, size)
	_, err = f.ReadAt(page, (pageno-1)*size)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("\xff", 64)), (pageno-1)*size)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	lost := regexp.MustCompile(`note (\d{4}) y`).FindAllSubmatch(page, -1)
	require.NotEmpty(t, lost)
	kept := 300 - len(lost)

	warn := regexp.MustCompile(`(?m)^gencode: warning: the session store \S+/gencode.db is damaged: ` +
		fmt.Sprint(len(lost)) + ` messages of session ` + id + ` could not be read \(#\d+-\d+\); the rest was read around them\n` +
		`gencode: to recover what SQLite can, quit gencode, keep a copy of \S+, then run: sqlite3 \S+ \.recover \| sqlite3 recovered\.db && mv recovered\.db \S+\n`)

	res = sb.run("history", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, warn, res.stderr)
	var h historyJSON
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
	require.Len(t, h.Messages, kept)

	res = sb.run("export", "--format", "jsonl")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, warn, res.stderr)
	require.Equal(t, kept, strings.Count(res.stdout, "\n"))

	res = sb.run("-c", "-p", "and after the damage?", "--no-summarize")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "answer after the damage\n", res.stdout)
	require.Regexp(t, warn, res.stderr)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.NoError(t, openaitest.CheckMessageRules(reqs[1].Messages))

	res = sb.run("history", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	h = historyJSON{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
	require.Len(t, h.Messages, kept+2, "the turn is stored")
	require.Equal(t, "answer after the damage", h.Messages[len(h.Messages)-1].Content)
}
