package session_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/view"
)

// legacyVersion is the schema version before the meter's columns.
const legacyVersion = 3

// writeLegacyStore writes a database as gencode wrote it at schema
// version 3: a session of n turns (a request, a call, its result, an
// answer), with no pairing columns.
func writeLegacyStore(t testing.TB, dir string, turns int) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, session.FileName)+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	for _, m := range session.Migrations[:legacyVersion] {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, legacyVersion))
	require.NoError(t, err)
	id := "0123456789ab"
	tx, err := db.Begin()
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Commit()) }()
	_, err = tx.Exec(`INSERT INTO sessions(id, created_at, updated_at, cwd, message_count, last_seq) VALUES(?, 0, 0, '/w', ?, ?)`,
		id, 4*turns, 4*turns)
	require.NoError(t, err)
	insert := func(seq int, role, content, calls, callID, name string, tokens int, meta string) {
		var c, m any
		if calls != "" {
			c = calls
		}
		if meta != "" {
			m = meta
		}
		_, err := tx.Exec(`INSERT INTO messages(session_id, seq, role, content, tool_calls, tool_call_id, name, tokens, created_at, meta)
			VALUES(?,?,?,?,?,?,?,?,?,?)`, id, seq, role, content, c, callID, name, tokens, seq, m)
		require.NoError(t, err)
	}
	for k := range turns {
		seq := 4*k + 1
		callID := fmt.Sprintf("call_%d", k)
		calls, _ := json.Marshal([]session.ToolCall{{ID: callID, Name: "Bash", Arguments: `{"command":"make"}`}})
		out := strings.Repeat("ok ", 20+k%7*300)
		insert(seq, "user", fmt.Sprintf("step %d", k), "", "", "", 6, "")
		insert(seq+1, "assistant", "", string(calls), "", "", 20, "")
		insert(seq+2, "tool", out, "", callID, "Bash", len(out)/4+4, `{"tool":"Bash","command":"make"}`)
		insert(seq+3, "assistant", fmt.Sprintf("done %d", k), "", "", "", 7, "")
	}
	return id
}

// TestMeterAfterUpgrade: a store written before the meter's columns is
// upgraded on open; the first measure classifies its log once, and from
// then on the figure is summed in SQL and equals the built view's, also
// as the log grows after the upgrade.
func TestMeterAfterUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	id := writeLegacyStore(t, dir, 60)
	st, err := session.Open(ctx, dir, session.WithClassifier(view.Classify))
	require.NoError(t, err)
	defer st.Close()
	var version int
	require.NoError(t, st.DB().QueryRow(`PRAGMA user_version`).Scan(&version))
	require.Equal(t, len(session.Migrations), version)

	p := view.NewPolicy(view.Config{Window: 8000, SystemPrompt: "You are gencode.", Overhead: 300, MaskAfter: 4})
	rule := session.TallyRule{Mask: func(n int) int { return max(0, (n-4)/2*2) }, Room: p.MessageRoom(), CapTokens: p.CapTokens()}
	check := func(at string) {
		t.Helper()
		v, err := st.LoadView(ctx, id)
		require.NoError(t, err)
		got, err := p.Measure(ctx, st, id)
		require.NoError(t, err)
		require.Equal(t, p.Build(v).Tokens, got.Tokens, at)
		tally, err := st.Tally(ctx, id, rule)
		require.NoError(t, err)
		require.True(t, tally.Plain, "%s: summed in SQL", at)
		require.Empty(t, tally.Unmasked, "%s: the masked sizes were kept", at)
	}
	var unclassified int
	require.NoError(t, st.DB().QueryRow(`SELECT count(*) FROM messages WHERE plain IS NULL`).Scan(&unclassified))
	require.Equal(t, 240, unclassified, "Open does not classify the log")
	check("after the upgrade")
	require.NoError(t, st.DB().QueryRow(`SELECT count(*) FROM messages WHERE plain IS NULL`).Scan(&unclassified))
	require.Zero(t, unclassified, "the first measure classified the log")

	for k := range 5 {
		_, err := st.Append(ctx, id,
			session.Message{Role: session.RoleUser, Content: "more", Tokens: 5},
			session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("new_%d", k), Name: "Bash", Arguments: `{"command":"ls"}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: fmt.Sprintf("new_%d", k), Name: "Bash", Content: "a b c", Tokens: 6},
			session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 5})
		require.NoError(t, err)
		check(fmt.Sprintf("after %d more turns", k+1))
	}
}

// TestAppendToAnUnclassifiedLog: messages appended to a log not
// classified yet are left unclassified too (their pairing depends on the
// messages before them), and the next measure classifies them all.
func TestAppendToAnUnclassifiedLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	id := writeLegacyStore(t, dir, 3)
	st, err := session.Open(ctx, dir, session.WithClassifier(view.Classify))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Append(ctx, id, session.Message{Role: session.RoleUser, Content: "next", Tokens: 5})
	require.NoError(t, err)
	var unclassified int
	require.NoError(t, st.DB().QueryRow(`SELECT count(*) FROM messages WHERE plain IS NULL`).Scan(&unclassified))
	require.Equal(t, 13, unclassified)
	tally, err := st.Tally(ctx, id, session.TallyRule{Mask: func(int) int { return 0 }, Room: 1 << 20, CapTokens: 1 << 20})
	require.NoError(t, err)
	require.True(t, tally.Plain)
	require.Equal(t, 13, tally.Messages)
	require.NoError(t, st.DB().QueryRow(`SELECT count(*) FROM messages WHERE plain IS NULL`).Scan(&unclassified))
	require.Zero(t, unclassified)
}

// TestNoOutputAfterUpgrade: results with no output, which schema 4 left
// to the slow path, are classified again by the upgrade to 5 and summed.
func TestNoOutputAfterUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, sess := openSession(t, dir)
	_, err := st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "touch it", Tokens: 5},
		session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: "a", Name: "Bash", Arguments: `{"command":"touch x"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "a", Name: "Bash", Tokens: 3},
		session.Message{Role: session.RoleAssistant, Content: "done", Tokens: 5})
	require.NoError(t, err)
	// The database as schema 4 left it (without what later migrations add).
	_, err = st.DB().Exec(`DROP INDEX messages_empty; UPDATE messages SET plain = 0 WHERE role = 'tool' AND content = '';
		DROP TABLE rewinds; DROP TABLE token_counts; DROP INDEX messages_sent;
		ALTER TABLE messages DROP COLUMN cum_user_tokens; ALTER TABLE messages DROP COLUMN cum_assistant_tokens;
		ALTER TABLE summaries DROP COLUMN block; ALTER TABLE summaries DROP COLUMN block_form; ALTER TABLE summaries DROP COLUMN head;
		PRAGMA user_version = 4`)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = session.Open(ctx, dir, session.WithClassifier(view.Classify))
	require.NoError(t, err)
	defer st.Close()
	p := view.NewPolicy(view.Config{Window: 8000, SystemPrompt: "You are gencode."})
	tally, err := st.Tally(ctx, sess.ID, session.TallyRule{Mask: func(int) int { return 0 }, Room: p.MessageRoom(), CapTokens: p.CapTokens()})
	require.NoError(t, err)
	require.True(t, tally.Plain, "summed in SQL")
	require.Len(t, tally.Empty, 1)
	v, err := st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	got, err := p.Measure(ctx, st, sess.ID)
	require.NoError(t, err)
	require.Equal(t, p.Build(v).Tokens, got.Tokens)
}

// TestRoleSumsAfterUpgrade: a log summed before the user's and the
// assistant's running sums existed gets them from the upgrade, so that
// /context splits it by role as Build does, and the messages appended
// after carry them on.
func TestRoleSumsAfterUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, sess := openSession(t, dir)
	turn := func(k int) []session.Message {
		id := fmt.Sprintf("c%d", k)
		return []session.Message{{Role: session.RoleUser, Content: fmt.Sprintf("step %d", k), Tokens: 5 + k},
			{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: `{"command":"ls"}`}}},
			{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: strings.Repeat("file ", 10*k+1), Tokens: 10*k + 3},
			{Role: session.RoleAssistant, Content: "done", Tokens: 7 + 2*k}}
	}
	for k := range 6 {
		_, err := st.Append(ctx, sess.ID, turn(k)...)
		require.NoError(t, err)
	}
	// The database as the schema before the role sums left it (the
	// summaries' blocks came after them).
	_, err := st.DB().Exec(fmt.Sprintf(`ALTER TABLE messages DROP COLUMN cum_user_tokens;
		ALTER TABLE messages DROP COLUMN cum_assistant_tokens;
		ALTER TABLE summaries DROP COLUMN block; ALTER TABLE summaries DROP COLUMN block_form; ALTER TABLE summaries DROP COLUMN head;
		PRAGMA user_version = %d`, len(session.Migrations)-2))
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = session.Open(ctx, dir, session.WithClassifier(view.Classify))
	require.NoError(t, err)
	defer st.Close()
	p := view.NewPolicy(view.Config{Window: 8000, SystemPrompt: "You are gencode.", MaskAfter: 4})
	check := func(at string) {
		t.Helper()
		v, err := st.LoadView(ctx, sess.ID)
		require.NoError(t, err)
		want := p.Build(v)
		got, err := p.Measure(ctx, st, sess.ID)
		require.NoError(t, err)
		require.Equal(t, []int{want.Tokens, want.User, want.Assistant, want.ToolOutputs, want.Masked},
			[]int{got.Tokens, got.User, got.Assistant, got.ToolOutputs, got.Masked}, at)
		tally, err := st.Tally(ctx, sess.ID, session.TallyRule{Mask: func(int) int { return 0 }, Room: p.MessageRoom(), CapTokens: p.CapTokens()})
		require.NoError(t, err)
		require.True(t, tally.Plain, "%s: summed in SQL", at)
	}
	check("after the upgrade")
	for k := 6; k < 9; k++ {
		_, err := st.Append(ctx, sess.ID, turn(k)...)
		require.NoError(t, err)
	}
	check("after appending")
}

// BenchmarkUpgrade is what upgrading a store written before the meter's
// columns costs, once: Open (the migrations: columns and indexes) and the
// first measure of its session (classifying the log), for a session of
// 10,000 and of 100,000 messages.
func BenchmarkUpgrade(b *testing.B) {
	for _, turns := range []int{2_500, 25_000} {
		b.Run(fmt.Sprint(4*turns), func(b *testing.B) {
			ctx := context.Background()
			var open, first time.Duration
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				id := writeLegacyStore(b, dir, turns)
				b.StartTimer()
				start := time.Now()
				st, err := session.Open(ctx, dir, session.WithClassifier(view.Classify))
				require.NoError(b, err)
				open += time.Since(start)
				start = time.Now()
				tally, err := st.Tally(ctx, id, session.TallyRule{Mask: func(int) int { return 0 }, Room: 1 << 20, CapTokens: 1 << 20})
				first += time.Since(start)
				require.NoError(b, err)
				require.True(b, tally.Plain)
				require.NoError(b, st.Close())
			}
			b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms")
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-tally-ms")
		})
	}
}

// TestUserAfterUserIsNotPlain: a request joins a user message with the one
// before it (a failed turn's message, then its resend or the next one), so
// the meter builds such a view instead of summing it, here and in a new
// process.
func TestUserAfterUserIsNotPlain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, sess := openSession(t, dir)
	rule := session.TallyRule{Mask: func(int) int { return 0 }, Room: 1 << 20, CapTokens: 1 << 20}
	_, err := st.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "fix it", Tokens: 5})
	require.NoError(t, err)
	tally, err := st.Tally(ctx, sess.ID, rule)
	require.NoError(t, err)
	require.True(t, tally.Plain)
	require.NoError(t, st.Close())

	st, err = session.Open(ctx, dir, session.WithClassifier(view.Classify)) // the next message comes from another run
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "fix it", Tokens: 5})
	require.NoError(t, err)
	tally, err = st.Tally(ctx, sess.ID, rule)
	require.NoError(t, err)
	require.False(t, tally.Plain, "two user messages in a row are joined by the request")
}

// openSession opens a store in dir with a new session in it (a new store
// is a copy of one migrated once for the test binary).
func openSession(t *testing.T, dir string) (*session.Store, session.Session) {
	t.Helper()
	st := sessiontest.OpenIn(t, dir, session.WithClassifier(view.Classify))
	sess, err := st.CreateSession(context.Background(), "/w", "m")
	require.NoError(t, err)
	return st, sess
}

// TestUserAfterResultsIsNotPlain: a turn canceled after its tool results
// has no answer, and the request gives the next user message one (summarize's
// alternate), so the meter builds such a view.
func TestUserAfterResultsIsNotPlain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, sess := openSession(t, t.TempDir())
	defer st.Close()
	_, err := st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "run it", Tokens: 5},
		session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: "a", Name: "Bash", Arguments: `{"command":"make"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "a", Name: "Bash", Content: "[canceled]", Tokens: 3},
		session.Message{Role: session.RoleUser, Content: "never mind", Tokens: 5})
	require.NoError(t, err)
	tally, err := st.Tally(ctx, sess.ID, session.TallyRule{Mask: func(int) int { return 0 }, Room: 1 << 20, CapTokens: 1 << 20})
	require.NoError(t, err)
	require.False(t, tally.Plain)
}
