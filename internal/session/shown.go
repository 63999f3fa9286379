package session

import (
	"context"
	"unicode/utf8"
)

// shownCols are messageCols for a reader that shows at most a limit of a
// message's text (TailShown): an assistant message's content, and a user
// message's without pastes, read to limit+1 bytes (one more says it is
// longer), without full_content. Tool results and messages with pastes are
// read whole: their line counts and paste spans need all of it.
const shownCols = `seq, role,
	CASE WHEN role = 'assistant' OR (role = 'user' AND instr(coalesce(meta, ''), '"pastes"') = 0)
		THEN coalesce(CAST(substr(CAST(content AS BLOB), 1, ?) AS TEXT), '') ELSE content END,
	CASE WHEN role IN ('assistant', 'user') THEN NULL ELSE full_content END,
	tool_calls, tool_call_id, name, tokens, created_at, meta, mask_tokens`

// TailShown is Tail for a reader that shows at most the first limit bytes
// of a message's text, such as the TUI's chat: the content of an
// assistant message, and of a user message without pastes, comes cut to
// its first limit bytes (at a character) when it is longer, with Clipped
// set. A 10 MB answer is never read whole into memory to draw a screen of
// it; the log keeps it whole (Messages, Each).
func (s *Store) TailShown(ctx context.Context, sessionID string, n, limit int) ([]Message, error) {
	msgs, err := s.queryMessages(ctx, `SELECT * FROM (SELECT `+shownCols+` FROM messages
		WHERE session_id = ? AND seq > 0 ORDER BY seq DESC LIMIT ?) ORDER BY seq`, limit+1, sessionID, n)
	if isCorrupt(err) {
		msgs, err = s.Tail(ctx, sessionID, n) // read around the damaged page, whole
	}
	if err != nil {
		return nil, s.errorf("load last %d messages of session %s: %w", n, sessionID, err)
	}
	return clipShown(msgs, limit), nil
}

// MessagesShown is Messages cut as TailShown cuts them.
func (s *Store) MessagesShown(ctx context.Context, sessionID string, from, to int64, limit int) ([]Message, error) {
	if to <= 0 {
		to = 1<<62 - 1
	}
	msgs, err := s.queryMessages(ctx, `SELECT `+shownCols+` FROM messages
		WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`, limit+1, sessionID, from, to)
	if isCorrupt(err) {
		msgs, err = s.Messages(ctx, sessionID, from, to) // read around the damaged page, whole
	}
	if err != nil {
		return nil, s.errorf("load messages %d-%d of session %s: %w", from, to, sessionID, err)
	}
	return clipShown(msgs, limit), nil
}

// clipShown cuts the texts shownCols read to limit+1 bytes to limit, at a
// character, and marks them Clipped.
func clipShown(msgs []Message, limit int) []Message {
	for i, m := range msgs {
		if (m.Role != RoleAssistant && m.Role != RoleUser) || len(m.Meta.Pastes) > 0 || len(m.Content) <= limit {
			continue
		}
		c := m.Content[:limit]
		for len(c) > 0 { // a character the cut split
			if r, size := utf8.DecodeLastRuneInString(c); r != utf8.RuneError || size != 1 {
				break
			}
			c = c[:len(c)-1]
		}
		msgs[i].Content, msgs[i].Clipped = c, true
	}
	return msgs
}
