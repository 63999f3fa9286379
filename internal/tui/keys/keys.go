// Package keys is every key the TUI answers to, in one KeyMap of
// bubbles/key bindings (crush's ui/model/keys.go is the model). The root
// model, the chat, the editor, the permission dialog and the picker match
// keys with key.Matches against it, the dialog's key line is drawn from it, and
// /help lists it (Sections): a key added or changed here is a key added
// or changed everywhere, help included.
package keys

import (
	"fmt"

	"charm.land/bubbles/v2/key"
)

// KeyMap is the TUI's keys, by where they act.
type KeyMap struct {
	Editor    Editor
	Chat      Chat
	Dialog    Dialog
	Picker    Picker
	Conflicts Conflicts
}

// Editor is the keys of the message editor and of the session as a whole.
type Editor struct {
	Send    key.Binding
	Newline key.Binding
	// ShiftNewline is Shift+Enter, a new line too where the terminal
	// tells it from Enter (the kitty keyboard protocol, which Bubble Tea
	// v2 turns on; elsewhere it arrives as Enter).
	ShiftNewline key.Binding
	Prev         key.Binding // recall an earlier message (or edit the queued one)
	Next         key.Binding
	Complete     key.Binding
	Cancel       key.Binding // cancel the turn (or take back the queued message); twice when idle: /rewind
	Interrupt    key.Binding // ctrl+c: cancel, clear, quit
	Retry        key.Binding
}

// Chat is the conversation's keys: they work while the editor has focus.
type Chat struct {
	PageUp, PageDown key.Binding
	LineUp, LineDown key.Binding
	Top, Bottom      key.Binding
	// Home and End scroll the chat only while the editor is empty; with
	// text they move the cursor.
	Home, End key.Binding
	Expand    key.Binding
}

// Dialog is the permission dialog's keys.
type Dialog struct {
	Allow        key.Binding
	AllowSession key.Binding
	AllowProject key.Binding // allow, and save the call's rule for the project
	Deny         key.Binding
	DenyWhy      key.Binding // deny, and type the reason the model is told
	Up, Down     key.Binding
	PageUp       key.Binding
	PageDown     key.Binding
}

// Picker is the keys of the list /resume and /model open without an
// argument.
type Picker struct {
	Up, Down         key.Binding
	PageUp, PageDown key.Binding
	Filter           key.Binding // start typing a filter
	Pick             key.Binding // choose the selected item (while filtering: the first match)
	Close            key.Binding // clear the filter, else close without a change
}

// Conflicts is the keys of the dialog a rewind opens over files changed
// outside gencode since: a choice per file, then apply or cancel.
type Conflicts struct {
	Up, Down  key.Binding
	Toggle    key.Binding // keep mine <-> overwrite, for the selected file
	Overwrite key.Binding // overwrite the selected file with the checkpoint's version
	Keep      key.Binding // keep the selected file as it is
	Apply     key.Binding // rewind with the choices made
	Cancel    key.Binding // close without a change
}

// Newlines is every key that starts a new line in the editor.
func (e Editor) Newlines() key.Binding {
	return key.NewBinding(key.WithKeys(append(e.Newline.Keys(), e.ShiftNewline.Keys()...)...), key.WithHelp(e.Newline.Help().Key, e.Newline.Help().Desc))
}

// Default is the one KeyMap.
func Default() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Editor: Editor{
			Send:         b("enter", "send the message (during a turn: queue it)", "enter"),
			Newline:      b("alt+enter/ctrl+j", "new line", "alt+enter", "ctrl+j"),
			ShiftNewline: b("shift+enter", "new line, where the terminal tells it from enter", "shift+enter"),
			Prev:         b("↑", "earlier message; on an empty editor, edit the last queued one", "up"),
			Next:         b("↓", "later message (last line)", "down"),
			Complete:     b("tab", "complete a /command or an @path", "tab"),
			Cancel:       b("esc", "take back the last queued message, else cancel the turn or a !command (the draft stays); twice on an empty editor: /rewind", "esc"),
			Interrupt:    b("ctrl+c", "cancel the turn, else clear the draft; twice on an empty editor: quit", "ctrl+c"),
			Retry:        b("ctrl+r", "send a failed message again", "ctrl+r"),
		},
		Chat: Chat{
			PageUp:   b("pgup", "scroll up a page", "pgup"),
			PageDown: b("pgdown", "scroll down a page", "pgdown"),
			LineUp:   b("shift+↑", "scroll up a line", "shift+up"),
			LineDown: b("shift+↓", "scroll down a line", "shift+down"),
			Top:      b("ctrl+home", "first message", "ctrl+home"),
			Bottom:   b("ctrl+end", "last message, and follow", "ctrl+end"),
			Home:     b("home", "first message, when the editor is empty", "home"),
			End:      b("end", "last message, when the editor is empty", "end"),
			Expand:   b("ctrl+o", "expand or fold every tool output", "ctrl+o"),
		},
		Dialog: Dialog{
			Allow:        b("y/enter", "allow once", "y", "Y", "enter"),
			AllowSession: b("a", "allow for this session", "a", "A"),
			AllowProject: b("p", "always for this project", "p", "P"),
			Deny:         b("n/esc", "deny", "n", "N", "esc"),
			DenyWhy:      b("t", "say why", "t", "T"),
			Up:           b("↑/k", "scroll up", "up", "k"),
			Down:         b("↓/j", "scroll down", "down", "j"),
			PageUp:       b("pgup", "scroll up a page", "pgup"),
			PageDown:     b("pgdown/space", "scroll down a page", "pgdown", "space"),
		},
		Picker: Picker{
			Up:       b("↑/ctrl+p", "previous item", "up", "ctrl+p"),
			Down:     b("↓/ctrl+n", "next item", "down", "ctrl+n"),
			PageUp:   b("pgup", "previous page", "pgup"),
			PageDown: b("pgdown", "next page", "pgdown"),
			Filter:   b("/", "filter: type part of a name", "/"),
			Pick:     b("enter", "pick the selected item (while filtering: the first match)", "enter"),
			Close:    b("esc", "clear the filter, else close without a change", "esc"),
		},
		Conflicts: Conflicts{
			Up:        b("↑/ctrl+p", "previous file", "up", "ctrl+p"),
			Down:      b("↓/ctrl+n", "next file", "down", "ctrl+n"),
			Toggle:    b("space/tab", "keep mine / overwrite", "space", "tab"),
			Overwrite: b("o", "overwrite with the checkpoint's version", "o"),
			Keep:      b("m", "keep mine", "m"),
			Apply:     b("enter", "rewind with these choices", "enter"),
			Cancel:    b("esc", "cancel: nothing changes", "esc"),
		},
	}
}

// Answers are the dialog's answering keys, as its key line shows them.
func (d Dialog) Answers() []key.Binding {
	return []key.Binding{d.Allow, d.AllowSession, d.AllowProject, d.Deny, d.DenyWhy}
}

// Brief is the answering keys with their shortest help, for a narrow
// dialog: "y once · a session · p project · n deny · t why".
func (d Dialog) Brief() []key.Binding {
	short := func(b key.Binding, help, desc string) key.Binding {
		b.SetHelp(help, desc)
		return b
	}
	return []key.Binding{short(d.Allow, "y", "once"), short(d.AllowSession, "a", "session"), short(d.AllowProject, "p", "project"),
		short(d.Deny, "n", "deny"), short(d.DenyWhy, "t", "why")}
}

// Footer is the editor's first keys, briefly, for the hint an empty chat
// shows: "enter send · alt+enter new line · ctrl+c ×2 quit".
func (e Editor) Footer() []key.Binding {
	short := func(b key.Binding, help, desc string) key.Binding {
		b.SetHelp(help, desc)
		return b
	}
	return []key.Binding{short(e.Send, "enter", "send"), short(e.Newline, "alt+enter", "new line"), short(e.Interrupt, "ctrl+c ×2", "quit")}
}

// Group is a titled list of bindings.
type Group struct {
	Title    string
	Bindings []key.Binding
}

// Groups is what /help lists: every binding of the editor, the chat and
// the pickers. The dialog's keys are on its own key line.
func (km KeyMap) Groups() []Group {
	e, c, p, cf := km.Editor, km.Chat, km.Picker, km.Conflicts
	return []Group{
		{"Keys", []key.Binding{e.Send, e.Newline, e.ShiftNewline, e.Prev, e.Next, e.Complete, e.Cancel, e.Interrupt, e.Retry}},
		{"Scrolling the chat", []key.Binding{c.PageUp, c.PageDown, c.LineUp, c.LineDown, c.Top, c.Bottom, c.Home, c.End, c.Expand}},
		{"Pickers (/resume, /model)", []key.Binding{p.Up, p.Down, p.PageUp, p.PageDown, p.Filter, p.Pick, p.Close}},
		{"Rewind conflicts (files changed by hand)", []key.Binding{cf.Up, cf.Down, cf.Toggle, cf.Overwrite, cf.Keep, cf.Apply, cf.Cancel}},
	}
}

// Line is how /help lists binding b: its keys, then what it does.
func Line(b key.Binding) string {
	return fmt.Sprintf("%-18s %s", b.Help().Key, b.Help().Desc)
}
