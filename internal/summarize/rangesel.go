package summarize

import "github.com/gencode/gencode/internal/session"

// rangeParams say how much of the view a compaction may take.
type rangeParams struct {
	// preserve is how many recent messages stay verbatim when they fit.
	preserve int
	// tailBudget is what the kept messages may cost in the view; past it
	// the cut moves forward, past preserve. 0: no limit.
	tailBudget int
	// passUser lets the cut pass the latest user message when the
	// messages from it on alone exceed tailBudget (one long agentic turn):
	// its text then stays verbatim in the summary's last user request.
	passUser bool
	// manual (/summarize) lets the cut pass the latest user message
	// whatever the tail costs: the user asked to compact, and that request
	// is kept verbatim in the summary.
	manual bool
}

// selectRange returns how many of the view's oldest messages to summarize:
// the range is msgs[:cut], 0 meaning nothing. The cut never separates an
// assistant message with tool calls from the results that answer it (a
// tool message never starts the kept part), always keeps the last message,
// keeps the latest user message (unless passUser and the turn it started
// alone exceeds tailBudget), and keeps preserve recent messages unless they
// cost more than tailBudget. cost is what a message takes in the view.
func selectRange(msgs []session.Message, p rangeParams, cost func(session.Message) int) int {
	n := len(msgs)
	if n < 2 {
		return 0
	}
	valid := func(i int) bool { return i >= 1 && i < n && msgs[i].Role != session.RoleTool }
	suffix := make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + cost(msgs[i])
	}
	limit := n - 1
	for i := n - 1; i >= 0; i-- {
		if msgs[i].Role == session.RoleUser {
			if !p.manual && (!p.passUser || p.tailBudget <= 0 || suffix[i] <= p.tailBudget) {
				limit = i
			}
			break
		}
	}
	cut := min(n-max(p.preserve, 0), limit)
	for cut > 0 && !valid(cut) {
		cut--
	}
	if p.tailBudget > 0 {
		if suffix[max(cut, 0)] > p.tailBudget {
			for i := max(cut+1, 1); i <= limit; i++ {
				if !valid(i) {
					continue
				}
				cut = i
				if suffix[i] <= p.tailBudget {
					break
				}
			}
		}
	}
	if cut < 2 && !(cut == 1 && p.passUser) {
		return 0
	}
	return cut
}
