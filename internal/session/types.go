// Package session stores conversations: an append-only log of messages per
// session and the summaries that cover ranges of it, in one SQLite file.
// LoadView returns a session's active summaries and the messages after
// them; what the model is sent from that is view.Policy's decision.
// The log is the truth: a message is written once and never rewritten;
// summaries are stored beside it.
package session

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Role is a chat-completions message role.
type Role string

// The roles a message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Sentinel errors; check them with errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("ambiguous session id prefix")
	// ErrRangeTaken means a summary's range overlaps one already applied.
	ErrRangeTaken = errors.New("range already summarized")
	// ErrReadOnly means the store was opened read-only: the data
	// directory or the database file cannot be written.
	ErrReadOnly = errors.New("the session store is read-only")
)

// AmbiguousError is ErrAmbiguous with the sessions the prefix matches,
// most recently updated first, so the user can pick one.
type AmbiguousError struct {
	Prefix  string
	Matches []Session // at most MaxAmbiguous
	More    bool      // more sessions match than are listed
}

// MaxAmbiguous is how many matches an AmbiguousError lists.
const MaxAmbiguous = 10

func (e *AmbiguousError) Error() string {
	ids := make([]string, len(e.Matches))
	for i, s := range e.Matches {
		ids[i] = s.ID
	}
	more := ""
	if e.More {
		more = ", ..."
	}
	return fmt.Sprintf("session %s: %s: it matches %s%s", e.Prefix, ErrAmbiguous, strings.Join(ids, ", "), more)
}

func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// Session is one conversation's metadata.
type Session struct {
	ID           string
	Created      time.Time
	Updated      time.Time
	Cwd          string
	Model        string
	Title        string
	MessageCount int
	LastSeq      int64
}

// ToolCall is one function call requested by the assistant.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Meta is what the log records beside a message for the summarizer and the
// front ends: on tool results which tool ran, on what, and how it went.
type Meta struct {
	Tool        string `json:"tool,omitempty"`
	FilePath    string `json:"file_path,omitempty"`
	Command     string `json:"command,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
	Failed      bool   `json:"failed,omitempty"`
	Denied      bool   `json:"denied,omitempty"`
	ExitCode    *int   `json:"exit_code,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// Capped is set when Content holds a head and tail of Full.
	Capped bool `json:"capped,omitempty"`
	// DeniedUnless, on a denied tool call, names what would have allowed
	// it without asking: "allow" (allowing the tool, or yolo), "yolo"
	// (only yolo); "" when nothing would have (refused whatever the
	// permissions, or declined by the user). Print mode's hint names it.
	DeniedUnless string `json:"denied_unless,omitempty"`
	// Deleted is set when the user chose delete_originals and a summary
	// replaced this message's text.
	Deleted bool `json:"deleted,omitempty"`
	// Pastes are where a user message holds text pasted in the TUI, which
	// it shows as placeholders (the model sees the whole text).
	Pastes []Paste `json:"pastes,omitempty"`
	// Changes is what a shell command did to the files of the working
	// directory (gencode's Bash). It is for the summaries, never sent to the
	// model.
	Changes *FileChanges `json:"changes,omitempty"`
	// Quoted is the role a message had in an imported transcript when the
	// import made it quoted context in a user message: "system" or
	// "developer" (instructions from a file get no authority), or "tool"
	// (a result that answered no call).
	Quoted string `json:"quoted,omitempty"`
	// Shell marks a user message that holds the output of a "!command" the
	// user ran in the TUI, kept when the TUI ended before a message carried
	// it: the model reads it with the next message (a request joins user
	// messages in a row). Not a request of the user's.
	Shell bool `json:"shell,omitempty"`
	// Diff is the change a Write or Edit made (a unified diff, as the
	// permission dialog showed it), for the transcript. Never sent to the
	// model.
	Diff string `json:"diff,omitempty"`
	// Dir, on a tool result of an imported session, is the directory its
	// call ran in: recorded by the format, or carried from call to call
	// where the agent's shell persists. The facts read relative paths
	// against it.
	Dir string `json:"dir,omitempty"`
	// Root, on a tool result of an imported session, is the session's root
	// (as Imported says on its first message): a summary of a range without
	// the first message lists its files relative to it too.
	Root string `json:"root,omitempty"`
	// NotRun, on a tool result of an imported session, says the call never
	// ran: it has no result, or its result says it was denied, canceled or
	// not run. It counts as no command run and no change.
	NotRun bool `json:"not_run,omitempty"`
	// Imported, on the first message of an imported session, says where it
	// came from.
	Imported *Imported `json:"imported,omitempty"`
	// Checkpoint names the kept states of the working directory before
	// and after a call that may change files (Write, Edit, Bash, an
	// observed MCP tool): what a rewind restores. Never sent to the model.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Imported is where an imported session came from: the format it was
// written in and its root, the directory its paths are relative to (the
// working directory the format recorded, else the common root of the
// absolute paths it used).
type Imported struct {
	Format string `json:"format"`
	Root   string `json:"root,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Checkpoint is a pair of kept states of the working directory (IDs in
// the project's checkpoint store) around one tool call; Err says why none
// could be kept.
type Checkpoint struct {
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Err    string `json:"err,omitempty"`
	// Changed are the paths that differ between Before and After,
	// compared when After was taken; ChangedKnown says they were (a call
	// recorded by an older build, or whose comparison failed, has none:
	// a rewind compares its checkpoints itself). An older build reading
	// the log ignores both.
	Changed      []string `json:"changed,omitempty"`
	ChangedKnown bool     `json:"changed_known,omitempty"`
	// Seq is the message holding it, set where the log is read (Turns),
	// never stored: a rewind's place among a turn's calls is its LogSeq.
	Seq int64 `json:"-"`
}

// FileChanges is what one shell command did to files. Observed changes
// were seen on the filesystem (the tree before against after); when the
// tree could not be watched (too many files, too slow) Observed is false,
// Reason says why, and the summaries read the effects from the command
// line instead.
type FileChanges struct {
	Observed bool     `json:"observed"`
	Reason   string   `json:"reason,omitempty"`
	Created  []string `json:"created,omitempty"`  // paths relative to the working directory
	Modified []string `json:"modified,omitempty"` // existed before, content or metadata changed
	Deleted  []string `json:"deleted,omitempty"`
	// Reverted files are back to their committed content.
	Reverted []string `json:"reverted,omitempty"`
}

// IsZero reports whether m records nothing.
func (m Meta) IsZero() bool { return reflect.ValueOf(m).IsZero() }

// Paste is a pasted text inside a user message: bytes [Start, End) of its
// Content, shown by the TUI as placeholder number N.
type Paste struct {
	Start int `json:"start"`
	End   int `json:"end"`
	N     int `json:"n"`
}

// Message is one entry of the log.
type Message struct {
	Seq        int64
	Role       Role
	Content    string // what the model sees (tool output capped)
	Full       string // the whole tool output when Content was capped, else ""
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string // the tool's name on tool results
	Tokens     int    // counted once, when appended
	// MaskTokens is the size of the line that replaces a tool result the
	// view policy masks, once the policy counted it (0: not yet).
	MaskTokens int
	Time       time.Time
	Meta       Meta
	// Clipped says Content holds only the head of the text: a read for a
	// screen cut it (TailShown); the log has it whole.
	Clipped bool
}

// Text returns the message's whole text: Full when Content was capped.
func (m Message) Text() string {
	if m.Full != "" {
		return m.Full
	}
	return m.Content
}

// ToolUsage counts one tool's calls inside a summarized range.
type ToolUsage struct {
	Tool        string   `json:"tool"`
	Count       int      `json:"count"`
	NotableUses []string `json:"notable_uses,omitempty"`
}

// Summary covers the closed range [FromSeq, ToSeq] of a session's log.
type Summary struct {
	ID            string   `json:"id"`
	SessionID     string   `json:"session_id"`
	FromSeq       int64    `json:"from_seq"`
	ToSeq         int64    `json:"to_seq"`
	Content       string   `json:"content"` // narrative (markdown)
	Goal          string   `json:"goal,omitempty"`
	KeyDecisions  []string `json:"key_decisions"`
	Topics        []string `json:"topics"`
	CurrentState  string   `json:"current_state,omitempty"`
	NextSteps     []string `json:"next_steps,omitempty"`
	FilesModified []string `json:"files_modified"` // net: changed and still there, created ones included
	FilesCreated  []string `json:"files_created,omitempty"`
	FilesDeleted  []string `json:"files_deleted,omitempty"`
	// FilesReverted are files a revert (git checkout --, git restore) put
	// back to their committed state: earlier summaries' changes to them are
	// undone when summaries merge.
	FilesReverted   []string    `json:"files_reverted,omitempty"`
	FilesRead       []string    `json:"files_read"`
	ToolsUsed       []ToolUsage `json:"tools_used"`
	Commands        []string    `json:"commands"`     // distinct, in order
	CommandRuns     int         `json:"command_runs"` // every shell call, repeats included
	LastUserRequest string      `json:"last_user_request,omitempty"`
	UserConstraints []string    `json:"user_constraints,omitempty"` // verbatim: rules, what the user asked to remember, facts they stated
	Focus           string      `json:"focus,omitempty"`
	GeneratedAt     time.Time   `json:"generated_at"`
	Model           string      `json:"model"`
	Fallback        bool        `json:"fallback"` // deterministic only, no LLM narrative
	FallbackReason  string      `json:"fallback_reason,omitempty"`
	TokenCount      int         `json:"token_count"`
	// CommandsNotRun are the shell commands of imported calls that never
	// ran (denied, rejected, canceled, without a result): no run, no change.
	CommandsNotRun []string `json:"commands_not_run,omitempty"`
	// TokenKey names what TokenCount counted: the tokenizer's encoding and
	// a hash of the rendered text. A request's view uses TokenCount instead
	// of counting the summary again only while both still match ("": count).
	TokenKey       string        `json:"token_key,omitempty"`
	MessagesBefore int           `json:"messages_before"`
	MessagesAfter  int           `json:"messages_after"`
	TokensBefore   int           `json:"tokens_before"`
	TokensAfter    int           `json:"tokens_after"`
	Duration       time.Duration `json:"duration_ns"`
	Merged         []string      `json:"merged,omitempty"` // ids of summaries this one replaced
	SupersededBy   string        `json:"superseded_by,omitempty"`

	// UserRequests holds the first line of each user message in the range,
	// shown when there is no narrative (a deterministic summary).
	UserRequests []string `json:"user_requests,omitempty"`
	// SystemNotes keeps system messages of the range verbatim
	// (preserve_system; imported sessions carry them in the log).
	SystemNotes []string `json:"system_notes,omitempty"`
	// RenderChars bounds the extracted facts shown to the model (0: all).
	// The fields themselves always keep everything; RenderSummary shows the
	// most recent entries that fit and says how many it left out.
	RenderChars int `json:"render_chars,omitempty"`
	// KeepChars bounds the UserConstraints shown (0: their share of
	// RenderChars). Past it they are shortened, then the least important
	// and oldest left out, what the user asked to remember last.
	KeepChars int `json:"keep_chars,omitempty"`

	// UserConstraintsLeftOut counts the sentences UserConstraints does not
	// keep: the least important and oldest past the most any view shows
	// (facts.CapKept). Each is in the log.
	UserConstraintsLeftOut int `json:"user_constraints_left_out,omitempty"`

	// Chunks is how many summarizer calls the range needed (map-reduce).
	Chunks int `json:"chunks,omitempty"`
}

// Messages is the number of log messages the summary covers.
func (s Summary) Messages() int { return int(s.ToSeq - s.FromSeq + 1) }
