// Package summarize compacts a session's history, cheapest tier first:
// capped and masked tool outputs in the view, then an LLM summary of the
// oldest unsummarized range, made in the background while the user goes on.
// It never deletes a message unless the user asked for it, and on any
// failure it keeps the originals or falls back to a deterministic summary.
package summarize

import (
	"time"

	"github.com/gencode/gencode/internal/session"
)

// Phase is where a compaction is.
type Phase int

// Phases of a compaction.
const (
	Started Phase = iota
	Finished
	Failed
)

func (p Phase) String() string {
	switch p {
	case Started:
		return "started"
	case Finished:
		return "finished"
	default:
		return "failed"
	}
}

// Report tells front ends about one compaction.
type Report struct {
	SessionID  string
	Phase      Phase
	Background bool // false: the turn waits for it (hard threshold, overflow, /summarize)
	Reason     string
	// Summary is the summary applied, when Finished. Finished without a
	// Summary means there was nothing worth summarizing; Err says why
	// (ErrNothingToSummarize, ErrNoReduction).
	Summary *session.Summary
	// Merged is set when the summary block passed its budget and the
	// oldest summaries were merged into this one.
	Merged   *session.Summary
	Fallback bool  // the deterministic summary was used (LLM failed)
	Err      error // when Failed, or why the fallback was used
	Duration time.Duration

	// upgrade is the summary a waiting turn had to apply without its
	// narrative; a background job writes it, from upgradeRange: the
	// messages plan read for it, redacted when redact_secrets is set.
	upgrade      *session.Summary
	upgradeRange []session.Message
}
