package session

import "context"

// promptSessions bounds how many of a project's sessions Prompts reads:
// the most recently updated ones.
const promptSessions = 50

// Prompts returns the last n messages the user sent in the sessions of
// the working directory cwd (the project), oldest first: the history Up
// walks in a new session. Only the most recent sessions are read, so a
// project with a long past costs what one with a short one does.
func (s *Store) Prompts(ctx context.Context, cwd string, n int) ([]Message, error) {
	msgs, err := s.queryMessages(ctx, `SELECT `+messageCols+` FROM (
		SELECT m.id AS id, m.seq AS seq, m.role AS role, m.content AS content, NULL AS full_content,
			NULL AS tool_calls, m.tool_call_id AS tool_call_id, m.name AS name, m.tokens AS tokens,
			m.created_at AS created_at, m.meta AS meta, NULL AS mask_tokens
		FROM messages m
		WHERE m.role = 'user' AND m.session_id IN (
			SELECT id FROM sessions WHERE cwd = ? ORDER BY updated_at DESC LIMIT ?)
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?)
		ORDER BY created_at, id`, cwd, promptSessions, n)
	if err != nil {
		return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
	}
	return msgs, nil
}
