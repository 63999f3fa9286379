package summarize

import (
	"slices"

	"github.com/gencode/gencode/internal/redact"
	"github.com/gencode/gencode/internal/session"
)

// redactString redacts s when on is set.
func redactString(s string, on bool) string {
	if !on {
		return s
	}
	out, _ := redact.Redact(s)
	return out
}

// redactMessages returns copies of msgs with their texts redacted.
func redactMessages(msgs []session.Message) []session.Message {
	out := make([]session.Message, len(msgs))
	r := func(p *string) { *p, _ = redact.Redact(*p) }
	for i, m := range msgs {
		r(&m.Content)
		r(&m.Full)
		r(&m.Meta.Command)
		r(&m.Meta.FilePath)
		r(&m.Meta.Pattern)
		if len(m.ToolCalls) > 0 {
			calls := make([]session.ToolCall, len(m.ToolCalls))
			copy(calls, m.ToolCalls)
			for j := range calls {
				r(&calls[j].Arguments)
			}
			m.ToolCalls = calls
		}
		out[i] = m
	}
	return out
}

// scrubSummary makes a summary fit to store and show: every text it holds
// loses its control characters and escape sequences (a summarizer's
// answer, a user's pasted terminal output, a hostile server's error in
// the fallback reason) and, when on is set, its secrets. It is the
// one place that does; TestScrubSummaryCoversEveryField fails when a text
// field is added to session.Summary without being named here (or among
// the identifiers it leaves alone: ID, SessionID, Model, Merged,
// SupersededBy). Lists are copied, not changed in place: they may be
// shared with the summaries a merge read.
func scrubSummary(sum *session.Summary, on bool) {
	r := func(p *string) {
		*p, _ = stripControls(*p)
		if on {
			*p, _ = redact.Redact(*p)
		}
	}
	rs := func(p *[]string) {
		if len(*p) == 0 {
			return
		}
		list := slices.Clone(*p)
		for i := range list {
			r(&list[i])
		}
		*p = list
	}
	r(&sum.Content)
	r(&sum.Goal)
	r(&sum.CurrentState)
	r(&sum.LastUserRequest)
	r(&sum.Focus)
	r(&sum.FallbackReason)
	rs(&sum.KeyDecisions)
	rs(&sum.Topics)
	rs(&sum.NextSteps)
	rs(&sum.FilesCreated)
	rs(&sum.FilesModified)
	rs(&sum.FilesDeleted)
	rs(&sum.FilesReverted)
	rs(&sum.FilesRead)
	rs(&sum.Commands)
	rs(&sum.CommandsNotRun)
	rs(&sum.UserConstraints)
	rs(&sum.UserRequests)
	rs(&sum.SystemNotes)
	if len(sum.ToolsUsed) > 0 {
		tools := slices.Clone(sum.ToolsUsed)
		for i := range tools {
			r(&tools[i].Tool)
			rs(&tools[i].NotableUses)
		}
		sum.ToolsUsed = tools
	}
}
