// Package commands parses and runs slash commands (/summarize, /history,
// /context ...) and the reports they produce. It returns plain data; the TUI
// draws it as boxes and the CLI prints it, boxed on a terminal and plain when
// piped. It knows nothing of Bubble Tea.
package commands

import (
	"iter"
	"strings"
)

// Action is what a command asks its front end to do besides showing output.
type Action int

// Actions a command can ask for.
const (
	ActionNone Action = iota
	ActionExit
	ActionNewSession    // /clear: start a new session
	ActionResumeSession // /resume ID: Result.SessionID
	ActionSetModel      // /model NAME: Result.Model
	ActionSummarize     // /summarize: run compaction now (Result.Focus), then show its report
	ActionPrompt        // /init: send Result.Prompt to the model as a user message
	ActionRun           // a picker's choice: run Result.Line as if typed
	ActionRewound       // a conversation rewind: reload the view, Result.Draft back in the editor
)

func (a Action) String() string {
	return [...]string{"none", "exit", "new-session", "resume-session", "set-model", "summarize", "prompt", "run", "rewound"}[a]
}

// Result is the outcome of one command.
type Result struct {
	// Text is shown as a plain note (markdown allowed); may be empty.
	Text string
	// Report is shown as a boxed report; may be nil.
	Report *Report
	// Action asks the front end to do something.
	Action    Action
	SessionID string
	Model     string
	Focus     string
	// Prompt is the user message ActionPrompt sends.
	Prompt string
	// Line is the command line ActionRun runs.
	Line string
	// Draft is the text ActionRewound puts back in the editor.
	Draft string
	// Pick, when set, is a list to choose from (/resume and /model
	// without an argument); the front end does the chosen item's Result.
	Pick *Pick
	// Conflicts, when set, is a rewind stopped by files changed outside
	// gencode since: a front end that can ask asks, for each file, keep
	// it or overwrite it, and runs Conflicts.Line with the choices; one
	// that cannot shows Report, which says the same.
	Conflicts *ConflictAsk
}

// ConflictAsk is the files a rewind would overwrite that were changed
// outside gencode since it last left them, and the command to run again
// once the user chose for each.
type ConflictAsk struct {
	Title string
	Files []ConflictFile
	// line is the command that stopped, without any choices.
	line string
}

// ConflictFile is one conflicting file and what changed in it outside
// gencode (a unified diff, sanitized).
type ConflictFile struct {
	Path, Diff string
	Deletes    bool // the checkpoint has no such file: overwriting deletes it
}

// Line is the command that applies the choices: keep[i] leaves Files[i]
// as it is, else it is overwritten with the checkpoint's version. Every
// file gets its explicit choice, so a file found in conflict only by then
// is asked about again, not overwritten.
func (a ConflictAsk) Line(keep []bool) string {
	var b strings.Builder
	b.WriteString(a.line)
	for i, f := range a.Files {
		flag := " --overwrite "
		if i < len(keep) && keep[i] {
			flag = " --keep "
		}
		b.WriteString(flag + quoteArg(f.Path))
	}
	return b.String()
}

// quoteArg quotes s as one word of a command line (Parse reads it back).
func quoteArg(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Pick is a list the user chooses one item of.
type Pick struct {
	Title string
	Items []Choice
	// Selected is the item selected when the list opens (the current
	// model; the latest session other than the one shown).
	Selected int
}

// Choice is one item of a Pick: what the list shows of it, and what
// choosing it does, the Result of the command typed with its argument.
type Choice struct {
	Title, Detail string
	Result        Result
}

// Report is a boxed report: a title, then sections of lines.
type Report struct {
	Title    string
	Sections []Section
	Footer   string
}

// Section is a titled group of lines inside a Report. An empty Title
// means plain lines. Lines are single lines of text; a front end wraps or
// truncates them to its width.
type Section struct {
	Title string
	Lines []string
	// Rows, after Lines, is a table: each row's cells, drawn in aligned
	// columns. A front end too narrow for a row wraps its last-but-one
	// cell (a setting's value) within its column and keeps the last (its
	// source) in its own; narrower still, it puts each row's first cells
	// on a line and the rest indented below, never a column broken apart.
	Rows [][]string
	// More counts lines left out of Lines ("+N more").
	More int
	// Stream, when set, gives lines after Lines as the report is written
	// (WritePlain), read then and never kept: a report for a writer, not
	// a screen (HistoryOptions.Stream). It ends at its first error.
	Stream iter.Seq2[string, error]
}
