package session

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkIndex fails the test unless the index is sound and holds exactly
// the log's current text up to the watermark: every (term, message,
// column, offset) of the index is compared with a fresh index of those
// messages. (FTS5's own content integrity-check cannot read the log's
// view; see searchSchema.)
func checkIndex(t testing.TB, s *Store) {
	t.Helper()
	ctx := context.Background()
	conn, err := s.DB().Conn(ctx) // temp tables live in one connection
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		`INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 0)`,
		`CREATE VIRTUAL TABLE temp.fresh USING fts5(sid, body, tools, tokenize = 'unicode61 remove_diacritics 2')`,
		`INSERT INTO temp.fresh(rowid, sid, body, tools) SELECT id, sid, body, tools FROM main.message_search_docs
			WHERE id <= (SELECT indexed_through FROM message_search_state)`,
		`CREATE VIRTUAL TABLE temp.got USING fts5vocab(main, message_search, instance)`,
		`CREATE VIRTUAL TABLE temp.want USING fts5vocab(temp, fresh, instance)`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	defer func() {
		for _, tb := range []string{"got", "want", "fresh"} {
			_, _ = conn.ExecContext(ctx, `DROP TABLE temp.`+tb)
		}
	}()
	var extra, missing int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM (SELECT * FROM temp.got EXCEPT SELECT * FROM temp.want)),
		(SELECT count(*) FROM (SELECT * FROM temp.want EXCEPT SELECT * FROM temp.got))`).Scan(&extra, &missing))
	require.Zero(t, extra, "index entries the log does not have")
	require.Zero(t, missing, "log tokens the index does not have")
}

// checkCaughtUp fails the test unless every message is indexed, and
// indexed right.
func checkCaughtUp(t testing.TB, s *Store) {
	t.Helper()
	backlog, err := s.IndexBacklog(context.Background())
	require.NoError(t, err)
	require.Zero(t, backlog, "index is caught up")
	checkIndex(t, s)
}

func seqs(hits []Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.Seq
	}
	return out
}

// codeLog is a small session with the shapes of text the model looks for:
// identifiers, paths, tool calls and their results.
func codeLog(t testing.TB, s *Store) Session {
	t.Helper()
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	code := 1
	_, err = s.Append(ctx, sess.ID,
		Message{Role: RoleUser, Content: "The staging database listens on port 5433; use the read_replica_url setting."}, // 1
		Message{Role: RoleAssistant, Content: "Let me look at the store.", ToolCalls: []ToolCall{ // 2
			{ID: "c1", Name: "Read", Arguments: `{"file_path":"internal/session/store.go"}`},
			{ID: "c2", Name: "Bash", Arguments: `{"command":"go test ./...\nmake lint"}`},
		}},
		Message{Role: RoleTool, ToolCallID: "c1", Name: "Read", Content: "func (s *Store) handleRequest(ctx context.Context) error {", // 3
			Meta: Meta{Tool: "Read", FilePath: "internal/session/store.go"}},
		Message{Role: RoleTool, ToolCallID: "c2", Name: "Bash", Content: "FAIL TestSearchRanks (0.01s)\n[... cut ...]\nexit 1", // 4
			Full: "FAIL TestSearchRanks (0.01s)\n" + strings.Repeat("noise line\n", 50) + "panic: zebra_quagga overflow\nexit 1",
			Meta: Meta{Tool: "Bash", Command: "go test ./...", ExitCode: &code, Failed: true, Capped: true}},
		Message{Role: RoleAssistant, Content: "Déjà vu: the café's NEAR(a b) AND \"quoted\" -x col:val (parens) * ^start 中文"}, // 5
	)
	require.NoError(t, err)
	return sess
}

func TestSearchFindsCodeAndTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := codeLog(t, s)
	tests := []struct {
		query string
		want  []int64 // seqs, in any order
	}{
		{"5433", []int64{1}},
		{"staging port", []int64{1}},
		{"read_replica_url", []int64{1}},             // snake_case whole
		{"replica", []int64{1}},                      // and by a part
		{"internal/session/store.go", []int64{2, 3}}, // a path in call arguments and in meta
		{"store.go", []int64{2, 3}},
		{"handleRequest", []int64{3}}, // camelCase whole
		{"handle", []int64{3}},        // and by its leading part (prefix)
		{"make lint", []int64{2}},     // inside a call's JSON-escaped arguments
		{"zebra_quagga", []int64{4}},  // only in full_content, not in the capped content
		{"TestSearchRanks", []int64{4}},
		{"Bash", []int64{2, 4}},           // a tool's name
		{"deja cafe", []int64{5}},         // diacritics folded
		{`"listens on port"`, []int64{1}}, // a quoted phrase
		{`"port listens"`, nil},           // ... is a phrase
		{"NEAR AND quoted", []int64{5}},   // syntax words are words
		{"col:val", []int64{5}},
		{"nothinglikethis", nil},
	}
	for _, tt := range tests {
		hits, total, err := s.Search(ctx, sess.ID, tt.query, 10)
		require.NoError(t, err, tt.query)
		got := seqs(hits)
		require.ElementsMatch(t, tt.want, got, "Search(%q) seqs", tt.query)
		require.Equal(t, len(tt.want), total, "Search(%q) total", tt.query)
		for _, h := range hits {
			require.Contains(t, h.Snippet, MatchOpen, "Search(%q) snippet %q marks the match", tt.query, h.Snippet)
			require.NotContains(t, h.Snippet, "\n")
			require.False(t, h.Partial)
		}
	}
	checkCaughtUp(t, s)
}

func TestSearchHitFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2025, 5, 1, 10, 4, 0, 0, time.UTC)
	s, err := Open(ctx, t.TempDir(), WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	defer s.Close()
	sess := codeLog(t, s)

	hits, _, err := s.Search(ctx, sess.ID, "zebra_quagga", 5)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	h := hits[0]
	require.Equal(t, Hit{SessionID: sess.ID, Seq: 4, Role: RoleTool, Time: h.Time, ToolName: "Bash", Snippet: h.Snippet}, h)
	require.True(t, h.Time.Equal(now), "Time = %v", h.Time)
	require.Contains(t, h.Snippet, "«zebra_quagga»")
	require.Less(t, len(h.Snippet), 200, "snippet is short")

	hits, _, err = s.Search(ctx, sess.ID, "make lint", 5)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, "Read, Bash", hits[0].ToolName, "an assistant message names the tools it called")
	require.Contains(t, hits[0].Snippet, "«make»")
}

// TestSearchSyntaxIsText: acceptance 4. Text that is FTS5 syntax, SQL, or
// junk never makes an error; it is searched as text.
func TestSearchSyntaxIsText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := codeLog(t, s)
	tests := []struct {
		query string
		want  []int64
	}{
		{`"`, nil},
		{`""`, nil},
		{`"""`, nil},
		{`"quoted"`, []int64{5}},
		{`"quoted`, []int64{5}},
		{`quoted"`, []int64{5}},
		{`*`, nil},
		{`cafe*`, []int64{5}},
		{`*cafe`, []int64{5}},
		{`-x`, []int64{5}},
		{`- x`, []int64{5}},
		{`NOT cafe`, []int64{5}}, // "not" is a word: no message has both, so any word
		{`cafe NOT`, []int64{5}},
		{`:`, nil},
		{`col:val`, []int64{5}},
		{`body:5433`, nil},      // not a column filter: the phrase "body 5433"
		{`sid:` + sess.ID, nil}, // nor here: the session id is not searchable text
		{`{body tools}: 5433`, []int64{1}},
		{`(parens)`, []int64{5}},
		{`((`, nil},
		{`)`, nil},
		{`NEAR(a b)`, []int64{5}},
		{`NEAR/2`, nil},
		{`AND`, []int64{5}}, // a word like any other
		{`OR`, nil},
		{`a OR b`, []int64{5}}, // no message has "or": any word
		{`^start`, []int64{5}},
		{`+`, nil},
		{`'; DROP TABLE messages; --`, nil}, // words; none in the log
		{"\x00", nil},
		{"\x000", []int64{4}},          // NUL ended FTS5's query string: found by fuzzing
		{"cafe\x00quoted", []int64{5}}, // NUL separates words
		{"tab\there", nil},
		{"\u00a0nbsp\u00a0", nil},
		{`\"`, nil},
		{`5433"`, []int64{1}},
		{`"5433 "port`, []int64{1}},
		{"🦀", nil},
		{"中文", []int64{5}},
		{"文", nil}, // CJK text is searched by its runs of characters, not by character
		{strings.Repeat("a ", 300), []int64{5}},
		{strings.Repeat("x", 100_000), nil},
		{strings.Repeat("(a) ", 20_000), []int64{5}}, // only the first maxTerms words count
	}
	for _, tt := range tests {
		hits, _, err := s.Search(ctx, sess.ID, tt.query, 10)
		require.NoError(t, err, "Search(%q)", tt.query)
		if got := seqs(hits); !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	checkCaughtUp(t, s)
}

func TestSearchScopesAndCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	a, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	b, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	for i := 1; i <= 30; i++ {
		body := fmt.Sprintf("message %d about widgets", i)
		if i%10 == 0 {
			body += " and the widget gremlin, gremlin, gremlin"
		}
		_, err := s.Append(ctx, a.ID, Message{Role: RoleUser, Content: body})
		require.NoError(t, err)
	}
	_, err = s.Append(ctx, b.ID, Message{Role: RoleUser, Content: "widgets elsewhere"})
	require.NoError(t, err)

	hits, total, err := s.Search(ctx, a.ID, "widgets", 5)
	require.NoError(t, err)
	require.Len(t, hits, 5)
	for _, h := range hits {
		require.Equal(t, a.ID, h.SessionID)
		require.Regexp(t, `^message \d+ about «widgets»$`, h.Snippet)
		require.NotContains(t, []int64{10, 20, 30}, h.Seq, "a longer message ranks below the short ones that match as well")
	}
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(seqs(hits)))), 5, "five different messages")
	require.Equal(t, 30, total, "total counts every match, not only those returned")

	hits, total, err = s.Search(ctx, a.ID, "gremlin", 0)
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.Len(t, hits, 3)

	hits, total, err = s.Search(ctx, b.ID, "widgets", 5)
	require.NoError(t, err)
	require.Equal(t, 1, total, "another session's messages are not hits")
	require.Equal(t, b.ID, hits[0].SessionID)

	_, total, err = s.Search(ctx, "", "widgets", 5)
	require.NoError(t, err)
	require.Equal(t, 31, total, "no session: every session")

	// Ranking: the message with the most "gremlin" comes first among
	// "widget" matches.
	hits, _, err = s.Search(ctx, a.ID, "widget gremlin", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Contains(t, hits[0].Snippet, "«gremlin»")
}

func TestRankWindowRanksTheMostRecent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	for i := 1; i <= 20; i++ {
		body := "walrus"
		if i == 2 {
			body = "walrus walrus walrus walrus" // the best match, but old
		}
		_, err := s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: body})
		require.NoError(t, err)
	}
	_, err = s.CatchUpIndex(ctx)
	require.NoError(t, err)
	scope := SearchQuery{SessionID: sess.ID}.scope
	hits, total, err := s.match(ctx, scope(`"walrus"`), 3, 5)
	require.NoError(t, err)
	require.Equal(t, 20, total, "the total counts every match")
	for _, h := range hits {
		require.GreaterOrEqual(t, h.Seq, int64(16), "only the 5 most recent are ranked")
	}
	hits, _, err = s.match(ctx, scope(`"walrus"`), 3, 100)
	require.NoError(t, err)
	require.EqualValues(t, 2, hits[0].Seq, "within the window, the best match first")
}

func TestSearchSkipsTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	_, err = s.Append(ctx, sess.ID,
		Message{Role: RoleUser, Content: "the escrow code is X"}, // 1
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "SearchHistory", Arguments: `{"query":"escrow code"}`}}},
		Message{Role: RoleTool, Name: "SearchHistory", ToolCallID: "a", Content: "seq 1 · the «escrow» «code» is X"},
		Message{Role: RoleAssistant, Content: "escrow code", ToolCalls: []ToolCall{{ID: "b", Name: "Bash", Arguments: `{"command":"grep SearchHistory"}`}}}, // 4
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{ // 5
			{ID: "c", Name: "Read", Arguments: `{"file_path":"escrow_code.go"}`}, {ID: "d", Name: "SearchHistory", Arguments: `{"query":"x"}`}}},
	)
	require.NoError(t, err)
	hits, total, err := s.Search(ctx, sess.ID, "escrow code", 10)
	require.NoError(t, err)
	require.Equal(t, 5, total)
	require.ElementsMatch(t, []int64{1, 2, 3, 4, 5}, seqs(hits), "without SkipTools a search's own call and result are hits too")
	hits, total, err = s.SearchWith(ctx, SearchQuery{SessionID: sess.ID, Text: "escrow code", SkipTools: []string{"SearchHistory", "ReadHistory"}})
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.ElementsMatch(t, []int64{1, 4, 5}, seqs(hits), "a search's call and result are left out; other calls are not")
	hits, _, err = s.SearchWith(ctx, SearchQuery{SessionID: sess.ID, Text: "escrow zzz", SkipTools: []string{"SearchHistory"}})
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{1, 4, 5}, seqs(hits), "any word, skipping too")
}

func TestSearchAnyWordLeavesOutCommonWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	for i := 1; i <= 30; i++ {
		body := "the usual text of the session"
		if i == 7 {
			body = "the answer is ocelot"
		}
		_, err := s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: body})
		require.NoError(t, err)
	}
	_, err = s.CatchUpIndex(ctx)
	require.NoError(t, err)
	expr, err := s.anyWord(ctx, SearchQuery{SessionID: sess.ID}.scope, parseQuery("what was the ocelot answer"))
	require.NoError(t, err)
	require.Equal(t, `"ocelot" OR "answer" OR "the"`, expr, "rarest first; no term without matches")
}

func TestSearchAnyWordWhenNoneHasAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := codeLog(t, s)
	hits, total, err := s.Search(ctx, sess.ID, "which port did the staging database use", 10)
	require.NoError(t, err)
	require.NotZero(t, total)
	require.EqualValues(t, 1, hits[0].Seq, "the message with the rare words ranks first")
	for _, h := range hits {
		require.True(t, h.Partial)
	}
}

// TestIndexFollowsRewrites: deleting originals rewrites indexed rows; the
// triggers keep the index equal to the log, and the deleted words are no
// longer found.
func TestIndexFollowsRewrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := codeLog(t, s)
	_, err := s.CatchUpIndex(ctx)
	require.NoError(t, err)
	_, err = s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 4}, nil, true)
	require.NoError(t, err)
	checkCaughtUp(t, s)
	_, total, err := s.Search(ctx, sess.ID, "zebra_quagga", 10)
	require.NoError(t, err)
	require.Zero(t, total, "deleted originals are not found")
	hits, _, err := s.Search(ctx, sess.ID, "deleted summarized", 10)
	require.NoError(t, err)
	require.Len(t, hits, 4, "their placeholders are")

	// Rows removed from the end: a new row reuses a rowid, and is indexed.
	_, err = s.DB().Exec(`DELETE FROM messages WHERE session_id = ? AND seq >= 4`, sess.ID)
	require.NoError(t, err)
	_, err = s.DB().Exec(`UPDATE sessions SET last_seq = 3 WHERE id = ?`, sess.ID)
	require.NoError(t, err)
	checkCaughtUp(t, s)
	_, err = s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: "a reused rowid for the okapi"})
	require.NoError(t, err)
	hits, _, err = s.Search(ctx, sess.ID, "okapi", 10)
	require.NoError(t, err)
	require.Equal(t, []int64{4}, seqs(hits))
	checkCaughtUp(t, s)
}

// TestCatchUpConcurrent: catch-ups racing with each other and with
// appends index every row exactly once.
func TestCatchUpConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := s.CatchUpIndex(ctx); err != nil {
					t.Errorf("CatchUpIndex: %v", err)
					return
				}
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		_, err := s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: fmt.Sprintf("note n%d %s", i, strings.Repeat("pad ", 20))})
		require.NoError(t, err)
	}
	wg.Wait()
	_, err = s.CatchUpIndex(ctx)
	require.NoError(t, err)
	checkCaughtUp(t, s)
	for _, i := range []int{1, 77, 200} {
		hits, total, err := s.Search(ctx, sess.ID, fmt.Sprintf("n%d", i), 10)
		require.NoError(t, err)
		require.Equal(t, 1, total, "n%d", i)
		require.EqualValues(t, i, hits[0].Seq)
	}
}

func TestRebuildIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := codeLog(t, s)
	_, err := s.CatchUpIndex(ctx)
	require.NoError(t, err)
	require.NoError(t, s.RebuildIndex(ctx))
	backlog, err := s.IndexBacklog(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 5, backlog)
	hits, _, err := s.Search(ctx, sess.ID, "5433", 10)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, seqs(hits))
	checkCaughtUp(t, s)
}

// TestRunIndexerYieldsToAppends: while a session appends, the background
// indexer waits; at the first check with no new message, it catches up.
func TestRunIndexerYieldsToAppends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	ticks, checked := make(chan time.Time), make(chan struct{})
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.runIndexer(ictx, ticks, func(err error) { t.Errorf("indexer: %v", err) }, func() { checked <- struct{}{} })
	}()
	defer func() { cancel(); <-done }()
	<-checked // the first check, of an empty log
	check := func() int64 {
		ticks <- time.Now()
		<-checked
		n, err := s.IndexBacklog(ctx)
		require.NoError(t, err)
		return n
	}
	for i := 1; i <= 5; i++ {
		_, err := s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: "busy"})
		require.NoError(t, err)
		require.EqualValues(t, i, check(), "nothing indexed while the session writes")
	}
	require.Zero(t, check(), "caught up at the first quiet check")

	// Far behind, it indexes even while the session writes.
	msgs := make([]Message, indexerMaxLag+1)
	for i := range msgs {
		msgs[i] = Message{Role: RoleUser, Content: "x"}
	}
	_, err = s.Append(ctx, sess.ID, msgs...)
	require.NoError(t, err)
	require.Zero(t, check(), "more than indexerMaxLag behind")
}

func TestRunIndexerStopsWithItsContext(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	sess := codeLog(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunIndexer(ctx, 5*time.Millisecond, func(err error) { t.Errorf("indexer: %v", err) })
	}()
	require.Eventually(t, func() bool {
		n, err := s.IndexBacklog(context.Background())
		return err == nil && n == 0
	}, 10*time.Second, 5*time.Millisecond)
	_, err := s.Append(context.Background(), sess.ID, Message{Role: RoleUser, Content: "later"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := s.IndexBacklog(context.Background())
		return err == nil && n == 0
	}, 10*time.Second, 5*time.Millisecond, "new messages are indexed in the background")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunIndexer did not return after cancel")
	}
}

// createLegacyDB writes a database as gencode wrote it before the index
// existed (schema version 1) with n messages in one session.
func createLegacyDB(t testing.TB, dir string, n int) (sessionID string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(migrations[0] + `; PRAGMA user_version = 1`)
	require.NoError(t, err)
	sessionID = "0123456789ab"
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO sessions(id, created_at, updated_at, cwd, message_count, last_seq) VALUES(?, 0, 0, '/w', ?, ?)`,
		sessionID, n, n)
	require.NoError(t, err)
	stmt, err := tx.Prepare(`INSERT INTO messages(session_id, seq, role, content, tokens, created_at) VALUES(?,?,?,?,?,?)`)
	require.NoError(t, err)
	for i := 1; i <= n; i++ {
		_, err := stmt.Exec(sessionID, i, "user", fmt.Sprintf("legacy message k%d %s", i, strings.Repeat("lorem ipsum ", 10)), 200, i)
		require.NoError(t, err)
	}
	require.NoError(t, stmt.Close())
	require.NoError(t, tx.Commit())
	return sessionID
}

// TestLegacyDatabaseGainsIndexOnOpen: acceptance 2, second half. A
// database from before the index gains it on open, empty: Open does not
// index (it stays fast however long the log), the first search catches up.
func TestLegacyDatabaseGainsIndexOnOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	n := 2000
	if raceEnabled {
		n = 300
	}
	id := createLegacyDB(t, dir, n)

	start := time.Now()
	s, err := Open(ctx, dir)
	openTook := time.Since(start)
	require.NoError(t, err)
	defer s.Close()
	var version int
	require.NoError(t, s.DB().QueryRow(`PRAGMA user_version`).Scan(&version))
	require.Equal(t, len(migrations), version)
	backlog, err := s.IndexBacklog(ctx)
	require.NoError(t, err)
	require.EqualValues(t, n, backlog, "Open indexed nothing")

	start = time.Now()
	hits, total, err := s.Search(ctx, id, fmt.Sprintf("k%d", n-7), 5)
	searchTook := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.EqualValues(t, n-7, hits[0].Seq)
	t.Logf("Open of a %d-message legacy database: %v; first search (indexes them all): %v", n, openTook, searchTook)
	checkCaughtUp(t, s)
}

func TestAllWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{text: "port 5433", want: []string{`"port" AND "5433"`, `"port" * AND "5433" *`}},
		{text: "the port", want: []string{`"the" AND "port"`, `"the" AND "port" *`}},
		{text: "go db", want: []string{`"go" AND "db"`}},
		{text: "handle", want: []string{`"handle"`, `"handle" *`}},
		{text: `a"b`, want: []string{`"a" AND "b"`}},
		{text: `"exact phrase here" x`, want: []string{`"exact phrase here" AND "x"`}},
		{text: `"one_phrase_here" x`, want: []string{`"one_phrase_here" AND "x"`, `"one_phrase_here" * AND "x"`}},
		{text: `say "hi`, want: []string{`"say" AND "hi"`}},
		{text: `NEAR(a) OR`, want: []string{`"NEAR(a)" AND "OR"`}},
		{text: `store.go`, want: []string{`"store.go"`}},
		{text: `handle*`, want: []string{`"handle*"`, `"handle*" *`}},
		{text: `"a""b"`, want: []string{`"a" AND "b"`}},
		{text: `* - : ( ) ^ "" +`},
		{text: ""},
	}
	for _, tt := range tests {
		var got []string
		if terms := parseQuery(tt.text); len(terms) > 0 {
			got = allWords(terms)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("allWords(parseQuery(%q)) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// FuzzSearch: acceptance 4. No text makes Search fail. The seed corpus is
// in testdata/fuzz/FuzzSearch; run longer with
// go test -run '^$' -fuzz FuzzSearch -fuzztime 5m ./internal/session/
func FuzzSearch(f *testing.F) {
	for _, seed := range []string{`"`, `*`, `-x`, `a:b`, `(x)`, `NEAR(a b, 2)`, `a AND OR NOT b`, `^x`, `{body}: y`,
		`"unterminated`, `'; DROP TABLE messages; --`, "\x00\xff", `x"*"y`, `+`, `sid:abc`, `a  "b c"  d*`} {
		f.Add(seed)
	}
	s := openStore(f)
	sess := codeLog(f, s)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, text string) {
		hits, total, err := s.Search(ctx, sess.ID, text, 5)
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		if len(hits) > total {
			t.Fatalf("Search(%q): %d hits > total %d", text, len(hits), total)
		}
		// The text as a tool name to skip, and every session.
		_, _, err = s.SearchWith(ctx, SearchQuery{Text: text, SkipTools: []string{text, "Bash"}})
		if err != nil {
			t.Fatalf("SearchWith(%q): %v", text, err)
		}
	})
}
