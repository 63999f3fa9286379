package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// tallySchema is the migration that lets the context meter add up a view
// from a few rows instead of loading it (Tally). Each message records,
// worked out once when it is appended:
//   - plain: how a request carries it as stored (Carried: AsIs, Mended,
//     NoOutput), as the view policy's Classifier answered when it was
//     appended; the store holds the answer, never the rule. NULL for a
//     message stored before this migration or without a classifier;
//   - call_seq and pending: the assistant message whose calls are being
//     answered after this message, and how many of them still are;
//   - dup_seq (assistant messages with calls): the last earlier result
//     answering one of its call ids, which a view holding both must mend;
//   - cum_tokens, cum_tools and cum_tool_tokens: the stored counts of the
//     log up to this message, how many tool results and their counts, so
//     that a range's sums are two rows apart;
//   - mask_tokens and cum_mask (results): the tokens of the one line that
//     replaces the result when the view policy masks it, and their sum up
//     to it; counted by the policy the first time it masks a result, for
//     every result before it too (NULL until then).
const tallySchema = `ALTER TABLE messages ADD COLUMN plain INTEGER;
	ALTER TABLE messages ADD COLUMN pending INTEGER;
	ALTER TABLE messages ADD COLUMN call_seq INTEGER;
	ALTER TABLE messages ADD COLUMN dup_seq INTEGER;
	ALTER TABLE messages ADD COLUMN cum_tokens INTEGER;
	ALTER TABLE messages ADD COLUMN cum_tools INTEGER;
	ALTER TABLE messages ADD COLUMN cum_tool_tokens INTEGER;
	ALTER TABLE messages ADD COLUMN mask_tokens INTEGER;
	ALTER TABLE messages ADD COLUMN cum_mask INTEGER;
	CREATE INDEX messages_unclassified ON messages(session_id, seq) WHERE plain IS NULL;
	CREATE INDEX messages_odd ON messages(session_id, seq) WHERE plain = 0;
	CREATE INDEX messages_dup ON messages(session_id, dup_seq) WHERE dup_seq > 0;
	CREATE INDEX messages_by_call ON messages(session_id, tool_call_id, seq) WHERE role = 'tool';
	CREATE INDEX messages_tools ON messages(session_id, cum_tools) WHERE role = 'tool';
	CREATE INDEX messages_masked ON messages(session_id, seq) WHERE role = 'tool' AND cum_mask IS NOT NULL;
	CREATE INDEX messages_big ON messages(session_id, tokens);`

// noOutputSchema is the migration that tells results with no output
// (plain 2, see NoOutput) from the messages the policy mends with
// those around them; the ones classified before are classified again.
const noOutputSchema = `CREATE INDEX messages_empty ON messages(session_id, seq) WHERE plain = 2;
	UPDATE messages SET plain = NULL WHERE plain = 0 AND role = 'tool' AND content = '';`

// roleSumSchema is the migration that adds cum_user_tokens and
// cum_assistant_tokens, the stored counts of the user's and the
// assistant's messages up to each message, so that /context splits a view
// by role from two rows as the meter sums it; they are filled in for the
// messages already summed (the others get them when classified).
const roleSumSchema = `ALTER TABLE messages ADD COLUMN cum_user_tokens INTEGER;
	ALTER TABLE messages ADD COLUMN cum_assistant_tokens INTEGER;
	UPDATE messages SET cum_user_tokens = c.u, cum_assistant_tokens = c.a FROM (
		SELECT id,
			sum(CASE WHEN role = 'user' THEN tokens ELSE 0 END) OVER (PARTITION BY session_id ORDER BY seq) AS u,
			sum(CASE WHEN role = 'assistant' THEN tokens ELSE 0 END) OVER (PARTITION BY session_id ORDER BY seq) AS a
		FROM messages) AS c
	WHERE messages.id = c.id AND messages.cum_tokens IS NOT NULL;`

// Carried is how a request carries a message as stored, as the view
// policy's Classifier says at append time (the plain column; NULL: not
// classified). The store only keeps the answer: the rules are the view's.
type Carried int

// The values of the plain column.
const (
	// Mended: the policy may mend it with the messages around it.
	Mended Carried = 0
	// AsIs: carried as stored, in any view that holds it and the messages
	// since the last user message or answer carried as stored before it.
	AsIs Carried = 1
	// NoOutput is a result with no output, carried as is otherwise: the
	// policy sends "(no output)" in its place, whatever is around it.
	NoOutput Carried = 2
)

// Pairing is how the log after a message pairs calls and results: the
// assistant message (CallSeq) whose calls are being answered, its Calls,
// how many are still Pending, and the role of the message (Prev).
type Pairing struct {
	CallSeq int64
	Calls   []ToolCall
	Pending int
	Prev    Role
}

// Classifier is the view policy's rule the store keeps the answers of
// (view.Classify): how a request carries message m, given the pairing
// before it, and the pairing after it. m is whole at append; a log
// classified after an upgrade gives it with Content cut to its first 256
// bytes and Meta holding only Deleted. Without one (WithClassifier) the
// store classifies nothing and Tally says the view must be built.
type Classifier func(p Pairing, seq int64, m Message) (Pairing, Carried)

// WithClassifier gives the store the view policy's rule (see Classifier).
func WithClassifier(c Classifier) Option { return func(s *Store) { s.classifier = c } }

// link is the pairing after a message of the log, with the running sums.
type link struct {
	Pairing
	cum sums
	// dupStmts are dupSeq's statements by number of calls, prepared once
	// per transaction (they close with it): a batch of appends, an import,
	// prepares one, not one per message.
	dupStmts map[int]*sql.Stmt
}

// sums are the running sums of the log up to a message (tallySchema).
type sums struct {
	tokens, tools, toolTokens, userTokens, assistantTokens int64
}

// next classifies message m following the link state l with c, and moves
// l past it.
func (l *link) next(c Classifier, seq int64, m Message) Carried {
	l.cum.tokens += int64(m.Tokens)
	switch m.Role {
	case RoleUser:
		l.cum.userTokens += int64(m.Tokens)
	case RoleAssistant:
		l.cum.assistantTokens += int64(m.Tokens)
	}
	if m.Role == RoleTool {
		l.cum.tools++
		l.cum.toolTokens += int64(m.Tokens)
	}
	var carried Carried
	l.Pairing, carried = c(l.Pairing, seq, m)
	return carried
}

// querier is a transaction or the database.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// linkAfter reads the link state after message seq (ok false: that
// message is not classified yet). Seq 0 is the empty log's state.
func linkAfter(ctx context.Context, q querier, sessionID string, seq int64) (l link, ok bool, err error) {
	if seq <= 0 {
		return link{}, true, nil
	}
	var plain, pending, callSeq, cumTokens, cumTools, cumToolTokens, cumUser, cumAssistant sql.NullInt64
	var role string
	err = q.QueryRowContext(ctx, `SELECT plain, pending, call_seq, cum_tokens, cum_tools, cum_tool_tokens,
		cum_user_tokens, cum_assistant_tokens, role FROM messages WHERE session_id = ? AND seq = ?`,
		sessionID, seq).Scan(&plain, &pending, &callSeq, &cumTokens, &cumTools, &cumToolTokens, &cumUser, &cumAssistant, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return link{}, false, nil
	}
	if err != nil || !plain.Valid || !cumTokens.Valid || !cumUser.Valid || !cumAssistant.Valid {
		return link{}, false, err
	}
	l.cum = sums{tokens: cumTokens.Int64, tools: cumTools.Int64, toolTokens: cumToolTokens.Int64,
		userTokens: cumUser.Int64, assistantTokens: cumAssistant.Int64}
	l.Prev = Role(role)
	if pending.Int64 <= 0 {
		return l, true, nil
	}
	var calls sql.NullString
	if err := q.QueryRowContext(ctx, `SELECT tool_calls FROM messages WHERE session_id = ? AND seq = ?`,
		sessionID, callSeq.Int64).Scan(&calls); err != nil {
		return link{}, false, err
	}
	l.CallSeq, l.Pending = callSeq.Int64, int(pending.Int64)
	if err := json.Unmarshal([]byte(calls.String), &l.Calls); err != nil || len(l.Calls) < l.Pending {
		return link{}, false, nil
	}
	return l, true, nil
}

// dupSeq is the last result before seq answering one of calls' ids (0:
// none).
func (l *link) dupSeq(ctx context.Context, q querier, sessionID string, seq int64, calls []ToolCall) (int64, error) {
	if len(calls) == 0 {
		return 0, nil
	}
	args := []any{sessionID, seq}
	for _, c := range calls {
		args = append(args, c.ID)
	}
	query := `SELECT max(seq) FROM messages WHERE session_id = ? AND role = 'tool' AND seq < ?
		AND tool_call_id IN (?` + strings.Repeat(",?", len(calls)-1) + `)`
	var row *sql.Row
	if p, ok := q.(preparer); ok {
		st := l.dupStmts[len(calls)]
		if st == nil {
			var err error
			if st, err = p.PrepareContext(ctx, query); err != nil {
				return 0, err
			}
			if l.dupStmts == nil {
				l.dupStmts = map[int]*sql.Stmt{}
			}
			l.dupStmts[len(calls)] = st
		}
		row = st.QueryRowContext(ctx, args...)
	} else {
		row = q.QueryRowContext(ctx, query, args...)
	}
	var last sql.NullInt64
	err := row.Scan(&last)
	return last.Int64, err
}

// preparer is a querier that prepares statements: a transaction, whose
// statements close when it ends.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// classification is what Append and classify store for one message.
type classification struct {
	// NULL when not classified
	plain, pending, callSeq, dupSeq, cumTokens, cumTools, cumToolTokens, cumUser, cumAssistant any
}

// args are the classification's columns as arguments, in tallyCols' order.
func (c classification) args() []any {
	return []any{c.plain, c.pending, c.callSeq, c.dupSeq, c.cumTokens, c.cumTools, c.cumToolTokens, c.cumUser, c.cumAssistant}
}

// tallyCols are the columns a classification sets.
const tallyCols = `plain, pending, call_seq, dup_seq, cum_tokens, cum_tools, cum_tool_tokens, cum_user_tokens, cum_assistant_tokens`

func (l *link) classify(ctx context.Context, q querier, c Classifier, sessionID string, seq int64, m Message) (classification, error) {
	cl := classification{}
	if m.Role == RoleAssistant && len(m.ToolCalls) > 0 {
		d, err := l.dupSeq(ctx, q, sessionID, seq, m.ToolCalls)
		if err != nil {
			return cl, err
		}
		cl.dupSeq = d
	}
	cl.plain = int(l.next(c, seq, m))
	cl.pending, cl.callSeq = l.Pending, l.CallSeq
	cl.cumTokens, cl.cumTools, cl.cumToolTokens = l.cum.tokens, l.cum.tools, l.cum.toolTokens
	cl.cumUser, cl.cumAssistant = l.cum.userTokens, l.cum.assistantTokens
	return cl, nil
}

// classifyChunk is how many messages classify reads at a time.
const classifyChunk = 1000

// classify works out the pairing columns of a session's messages stored
// before they existed (see tallySchema), once: from the first message
// not classified to the end of the log.
func (s *Store) classify(ctx context.Context, sessionID string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var first sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(seq) FROM messages INDEXED BY messages_unclassified
		WHERE session_id = ? AND plain IS NULL`,
		sessionID).Scan(&first); err != nil || !first.Valid {
		return err
	}
	l, ok, err := linkAfter(ctx, tx, sessionID, first.Int64-1)
	if err != nil {
		return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
	}
	if !ok { // the message before is unreadable: start over from the first
		first.Int64, l = 1, link{}
	}
	upd, err := tx.PrepareContext(ctx, `UPDATE messages SET (`+tallyCols+`) = (?,?,?,?,?,?,?,?,?)
		WHERE session_id = ? AND seq = ?`)
	if err != nil {
		return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
	}
	defer upd.Close()
	type row struct {
		seq int64
		m   Message
	}
	for from := first.Int64; ; {
		rows, err := tx.QueryContext(ctx, `SELECT seq, tokens, role, tool_calls, tool_call_id, substr(content, 1, 256),
			instr(coalesce(meta, ''), '"deleted":true') > 0
			FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?`, sessionID, from, classifyChunk)
		if err != nil {
			return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
		}
		var chunk []row
		for rows.Next() {
			var r row
			var role string
			var calls, head sql.NullString
			if err := rows.Scan(&r.seq, &r.m.Tokens, &role, &calls, &r.m.ToolCallID, &head, &r.m.Meta.Deleted); err != nil {
				rows.Close()
				return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
			}
			r.m.Seq, r.m.Role = r.seq, Role(role)
			if calls.String != "" && json.Unmarshal([]byte(calls.String), &r.m.ToolCalls) != nil {
				r.m.ToolCalls = []ToolCall{{}} // undecodable: never carried as is
			}
			// The first 256 bytes: a long text whose head is white space is
			// taken as blank, which only costs the meter its shortcut.
			r.m.Content = head.String
			chunk = append(chunk, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
		}
		for _, r := range chunk {
			c, err := l.classify(ctx, tx, s.classifier, sessionID, r.seq, r.m)
			if err != nil {
				return fmt.Errorf("classify message %d of session %s: %w", r.seq, sessionID, err)
			}
			if _, err := upd.ExecContext(ctx, append(c.args(), sessionID, r.seq)...); err != nil {
				return fmt.Errorf("classify message %d of session %s: %w", r.seq, sessionID, err)
			}
		}
		if len(chunk) < classifyChunk {
			break
		}
		from = chunk[len(chunk)-1].seq + 1
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("classify messages of session %s: %w", sessionID, err)
	}
	return nil
}

// TallyRule is how the view policy sends a view's messages, for Tally.
type TallyRule struct {
	// Mask is how many of the oldest tool results a view with tools
	// results masks.
	Mask func(tools int) int
	// Room is the most tokens a message other than a tool result is sent
	// with, CapTokens the most an unmasked result is; larger ones are cut.
	Room, CapTokens int
}

// Tally is a view added up from the log's running sums (see Store.Tally).
type Tally struct {
	// View holds the session and its active summaries, no messages.
	View View
	// Plain is false when the view holds something the policy mends (see
	// tallySchema) or the store could not tell: the figures below are
	// then not set, and the view must be built.
	Plain bool
	// From is the view's first seq, First its role ("" for none).
	From  int64
	First Role
	// Messages and Tools count the view's messages and tool results;
	// Masked is how many results Mask masks.
	Messages, Tools, Masked int
	// Tokens is what the view's messages are sent with: their stored
	// counts, masked results as masked, less Cut's and the masked size of
	// the Unmasked results in the view.
	Tokens int
	// Of Tokens' parts (for /context): UserTokens and AssistantTokens are
	// the stored counts of the view's user and assistant messages (Cut's
	// included), MaskTokens the stored masked sizes of the masked results;
	// the rest is the other messages' (results not masked, Empty's).
	UserTokens, AssistantTokens, MaskTokens int
	// Cut are the messages larger than the rule lets through, whole: the
	// policy cuts them. Empty are the unmasked results with no output
	// (Seq, Role, ToolCallID, Name, Tokens and Meta): the policy sends
	// "(no output)" for them.
	Cut, Empty []Message
	// Unmasked are results whose masked size is not stored yet, up to the
	// last masked one (Seq, Role, ToolCallID, Name, Tokens and Meta;
	// Content is "" for a result with no output, else "-"): the policy
	// counts them, adds those from From on, and keeps the counts with
	// SetMaskTokens, in order.
	Unmasked []Message
}

// tallyRow is what Tally reads of one message.
type tallyRow struct {
	seq              int64
	role             string
	pending          sql.NullInt64
	cum              sums
	cumMask, maskTok sql.NullInt64
}

func (s *Store) tallyRow(ctx context.Context, where string, args ...any) (tallyRow, bool, error) {
	var r tallyRow
	err := s.queryRow(ctx, `SELECT seq, role, pending, coalesce(cum_tokens, 0), coalesce(cum_tools, 0),
		coalesce(cum_tool_tokens, 0), coalesce(cum_user_tokens, 0), coalesce(cum_assistant_tokens, 0), cum_mask, mask_tokens
		FROM messages `+where, args...).Scan(&r.seq, &r.role, &r.pending, &r.cum.tokens, &r.cum.tools, &r.cum.toolTokens,
		&r.cum.userTokens, &r.cum.assistantTokens, &r.cumMask, &r.maskTok)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// exists runs a query that returns a row when something is there.
func (s *Store) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	err := s.queryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Tally adds up a session's view for the context meter without loading
// it, from the running sums of its first and last messages and a few
// index lookups: its cost does not grow with the log. The log is
// classified first if it holds messages stored before the sums existed
// (once).
func (s *Store) Tally(ctx context.Context, sessionID string, r TallyRule) (Tally, error) {
	sess, err := s.Session(ctx, sessionID)
	if err != nil {
		return Tally{}, err
	}
	sums, blocks, err := s.activeSummaries(ctx, sess.ID, withBlocks)
	if err != nil {
		return Tally{}, err
	}
	t := Tally{View: View{Session: sess, Summaries: sums, Blocks: blocks}}
	t, err = s.tally(ctx, t, r)
	if err != nil {
		return Tally{}, s.errorf("tally session %s: %w", sess.ID, err)
	}
	return t, nil
}

func (s *Store) tally(ctx context.Context, t Tally, r TallyRule) (Tally, error) {
	id := t.View.Session.ID
	t.From = t.View.SummarizedThrough() + 1
	unclassified, err := s.exists(ctx, `SELECT 1 FROM messages INDEXED BY messages_unclassified
		WHERE session_id = ? AND plain IS NULL LIMIT 1`, id)
	if err != nil {
		return t, err
	}
	if unclassified {
		if s.readOnly || s.classifier == nil {
			return t, nil // not plain: the view must be built
		}
		if err := s.classify(ctx, id); err != nil {
			return t, err
		}
	}
	last, ok, err := s.tallyRow(ctx, `WHERE session_id = ? ORDER BY seq DESC LIMIT 1`, id)
	if err != nil || !ok || last.seq < t.From {
		t.Plain = err == nil
		return t, err
	}
	// A message the policy mends; calls still unanswered at the end,
	// which get results the policy writes; a call id used twice.
	if last.pending.Int64 != 0 {
		return t, nil
	}
	if odd, err := s.exists(ctx, `SELECT 1 FROM messages INDEXED BY messages_odd
		WHERE session_id = ? AND plain = 0 AND seq >= ? LIMIT 1`, id, t.From); err != nil || odd {
		return t, err
	}
	if dup, err := s.exists(ctx, `SELECT 1 FROM messages INDEXED BY messages_dup
		WHERE session_id = ? AND dup_seq > 0 AND dup_seq >= ? LIMIT 1`, id, t.From); err != nil || dup {
		return t, err
	}
	first, ok, err := s.tallyRow(ctx, `WHERE session_id = ? AND seq = ?`, id, t.From)
	if err != nil || !ok {
		return t, err
	}
	// A result first answers a call the view does not hold.
	if t.First = Role(first.role); t.First == RoleTool {
		return t, nil
	}
	var base sums // the log before the view
	if t.From > 1 {
		before, ok, err := s.tallyRow(ctx, `WHERE session_id = ? AND seq = ?`, id, t.From-1)
		if err != nil || !ok {
			return t, err
		}
		base = before.cum
	}
	t.Messages = int(last.seq - t.From + 1)
	t.Tools = int(last.cum.tools - base.tools)
	tokens := last.cum.tokens - base.tokens
	t.UserTokens = int(last.cum.userTokens - base.userTokens)
	t.AssistantTokens = int(last.cum.assistantTokens - base.assistantTokens)
	t.Masked = min(max(r.Mask(t.Tools), 0), t.Tools)
	var masked int64 // the last masked result
	if t.Masked > 0 {
		m, err := s.maskedSum(ctx, &t, base)
		if err != nil {
			return t, err
		}
		masked = m.seq
		tokens -= m.cum.toolTokens - base.toolTokens
		if m.cumMask.Valid { // counted up to it: the rest is in the sums
			var before int64
			if base.tools > 0 {
				b, ok, err := s.tallyRow(ctx, `INDEXED BY messages_tools WHERE session_id = ? AND role = 'tool' AND cum_tools = ?`,
					id, base.tools)
				if err != nil || !ok {
					return t, err
				}
				before = b.cumMask.Int64
			}
			tokens += m.cumMask.Int64 - before
			t.MaskTokens = int(m.cumMask.Int64 - before)
		}
	}

	lim := min(r.Room, r.CapTokens)
	big, err := s.queryMessages(ctx, `SELECT `+messageCols+` FROM messages INDEXED BY messages_big
		WHERE session_id = ? AND tokens > ? AND seq >= ? AND seq <= ?`, id, lim, t.From, last.seq)
	if err != nil {
		return t, err
	}
	for _, m := range big {
		if m.Role == RoleTool && m.Content == "" {
			continue // no output: Empty, sent as "(no output)"
		}
		if (m.Role != RoleTool && m.Tokens > r.Room) || (m.Role == RoleTool && m.Seq > masked && m.Tokens > r.CapTokens) {
			t.Cut = append(t.Cut, m)
			tokens -= int64(m.Tokens)
		}
	}
	empty, err := s.queryMessages(ctx, `SELECT seq, role, '', NULL, NULL, tool_call_id, name, tokens,
		created_at, meta, NULL FROM messages INDEXED BY messages_empty
		WHERE session_id = ? AND plain = 2 AND seq > ? AND seq <= ? ORDER BY seq`, id, max(masked, t.From-1), last.seq)
	if err != nil {
		return t, err
	}
	for _, m := range empty {
		t.Empty = append(t.Empty, m)
		tokens -= int64(m.Tokens)
	}
	t.Tokens = int(tokens)
	t.Plain = true
	return t, nil
}

// maskedSum finds the last masked result of t's view, and when the masked
// sizes are not all stored up to it, sets t.Unmasked to the results whose
// sizes are missing (from the last one stored on).
func (s *Store) maskedSum(ctx context.Context, t *Tally, base sums) (tallyRow, error) {
	id := t.View.Session.ID
	m, ok, err := s.tallyRow(ctx, `INDEXED BY messages_tools WHERE session_id = ? AND role = 'tool' AND cum_tools = ?`,
		id, base.tools+int64(t.Masked))
	if err == nil && !ok {
		err = fmt.Errorf("result %d of the log: %w", base.tools+int64(t.Masked), ErrNotFound)
	}
	if err != nil || m.cumMask.Valid {
		return m, err
	}
	var frontier int64
	if err := s.queryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages INDEXED BY messages_masked
		WHERE session_id = ? AND role = 'tool' AND cum_mask IS NOT NULL`, id).Scan(&frontier); err != nil {
		return m, err
	}
	t.Unmasked, err = s.queryMessages(ctx, `SELECT seq, role, CASE WHEN content = '' THEN '' ELSE '-' END,
		NULL, NULL, tool_call_id, name, tokens,
		created_at, meta, NULL FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? AND role = 'tool'
		ORDER BY seq`, id, frontier, m.seq)
	if err != nil {
		return m, err
	}
	// The stored part: the view's results up to the frontier.
	if frontier >= t.From {
		f, ok, err := s.tallyRow(ctx, `WHERE session_id = ? AND seq = ?`, id, frontier)
		if err != nil || !ok {
			return m, err
		}
		m.cumMask = f.cumMask
	} else {
		m.cumMask = sql.NullInt64{Int64: 0, Valid: false}
	}
	return m, nil
}

// SetMaskTokens stores what the view policy counted for the masked
// results Tally returned as Unmasked (seq to tokens), with their running
// sum. Nothing is stored unless they are the results right after the
// last one stored, in order (another process stored them meanwhile).
func (s *Store) SetMaskTokens(ctx context.Context, sessionID string, counts map[int64]int) error {
	if len(counts) == 0 {
		return nil
	}
	seqs := make([]int64, 0, len(counts))
	for seq := range counts {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.errorf("store masked sizes of session %s: %w", sessionID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var frontier, cum int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM messages INDEXED BY messages_masked
		WHERE session_id = ? AND role = 'tool' AND cum_mask IS NOT NULL`, sessionID).Scan(&frontier); err != nil {
		return s.errorf("store masked sizes of session %s: %w", sessionID, err)
	}
	if frontier > 0 {
		if err := tx.QueryRowContext(ctx, `SELECT cum_mask FROM messages WHERE session_id = ? AND seq = ?`,
			sessionID, frontier).Scan(&cum); err != nil {
			return s.errorf("store masked sizes of session %s: %w", sessionID, err)
		}
	}
	var want []int64
	rows, err := tx.QueryContext(ctx, `SELECT seq FROM messages WHERE session_id = ? AND seq > ? AND seq <= ?
		AND role = 'tool' ORDER BY seq`, sessionID, frontier, seqs[len(seqs)-1])
	if err != nil {
		return s.errorf("store masked sizes of session %s: %w", sessionID, err)
	}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return s.errorf("store masked sizes of session %s: %w", sessionID, err)
		}
		want = append(want, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.errorf("store masked sizes of session %s: %w", sessionID, err)
	}
	if !slices.Equal(want, seqs) {
		return nil
	}
	for _, seq := range seqs {
		cum += int64(counts[seq])
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET mask_tokens = ?, cum_mask = ? WHERE session_id = ? AND seq = ?`,
			counts[seq], cum, sessionID, seq); err != nil {
			return s.errorf("store masked size of message %d of session %s: %w", seq, sessionID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.errorf("store masked sizes of session %s: %w", sessionID, err)
	}
	return nil
}
