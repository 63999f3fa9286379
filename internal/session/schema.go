package session

// freshVersion is the schema version freshSchema creates: a new store
// (no tables, user_version 0) is created by freshSchema in one go, then
// only the migrations after freshVersion are applied to it (none while
// the two are in step; TestFreshSchemaIsTheMigratedOne checks both).
const freshVersion = 10

// freshSchema creates a new store at schema version freshVersion: every
// table with its columns in their final form, then the indexes, the search
// index, its view and triggers, as applying migrations[:freshVersion] one
// by one leaves them (TestFreshSchemaIsTheMigratedOne compares them table
// by table and index by index). Migrating a new store cost a first run
// ~13-16 ms, most of it SQLite parsing the whole schema again after each
// ALTER TABLE (BenchmarkOpen/New).
//
// A migration added later goes into this script too (a column in its
// table, an index, a row a migration inserts), with freshVersion moved up.
var freshSchema = `CREATE TABLE sessions (
		id            TEXT PRIMARY KEY,
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		cwd           TEXT NOT NULL,
		model         TEXT NOT NULL DEFAULT '',
		title         TEXT NOT NULL DEFAULT '',
		message_count INTEGER NOT NULL DEFAULT 0,
		last_seq      INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at);
	CREATE TABLE messages (
		id           INTEGER PRIMARY KEY,
		session_id   TEXT NOT NULL REFERENCES sessions(id),
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL,
		full_content TEXT,
		tool_calls   TEXT,
		tool_call_id TEXT NOT NULL DEFAULT '',
		name         TEXT NOT NULL DEFAULT '',
		tokens       INTEGER NOT NULL,
		created_at   INTEGER NOT NULL,
		meta         TEXT,
		-- tallySchema
		plain                INTEGER,
		pending              INTEGER,
		call_seq             INTEGER,
		dup_seq              INTEGER,
		cum_tokens           INTEGER,
		cum_tools            INTEGER,
		cum_tool_tokens      INTEGER,
		mask_tokens          INTEGER,
		cum_mask             INTEGER,
		-- roleSumSchema
		cum_user_tokens      INTEGER,
		cum_assistant_tokens INTEGER,
		UNIQUE(session_id, seq)
	);
	CREATE TABLE summaries (
		id            TEXT PRIMARY KEY,
		session_id    TEXT NOT NULL REFERENCES sessions(id),
		from_seq      INTEGER NOT NULL,
		to_seq        INTEGER NOT NULL,
		created_at    INTEGER NOT NULL,
		superseded_by TEXT,
		data          TEXT NOT NULL,
		-- blockSchema
		block         TEXT,
		block_form    TEXT,
		head          TEXT
	);
	CREATE INDEX summaries_by_session ON summaries(session_id, from_seq);
	CREATE TABLE deletions (
		session_id TEXT NOT NULL,
		summary_id TEXT NOT NULL,
		from_seq   INTEGER NOT NULL,
		to_seq     INTEGER NOT NULL,
		messages   INTEGER NOT NULL,
		deleted_at INTEGER NOT NULL
	);
	-- tallySchema, noOutputSchema
	CREATE INDEX messages_unclassified ON messages(session_id, seq) WHERE plain IS NULL;
	CREATE INDEX messages_odd ON messages(session_id, seq) WHERE plain = 0;
	CREATE INDEX messages_dup ON messages(session_id, dup_seq) WHERE dup_seq > 0;
	CREATE INDEX messages_by_call ON messages(session_id, tool_call_id, seq) WHERE role = 'tool';
	CREATE INDEX messages_tools ON messages(session_id, cum_tools) WHERE role = 'tool';
	CREATE INDEX messages_masked ON messages(session_id, seq) WHERE role = 'tool' AND cum_mask IS NOT NULL;
	CREATE INDEX messages_big ON messages(session_id, tokens);
	CREATE INDEX messages_empty ON messages(session_id, seq) WHERE plain = 2;
	` + searchSchema() + `
	` + usageSchema + `
	` + rewindSchema + `
	` + countSchema + `
	` + promptSchema
