package summarize

// The hold policy: when automatic compactions and summarizer calls are
// left alone. No loops: a compaction that saves too little, or a
// summarizer that keeps failing, is not tried again until the session has
// grown; the session stays usable meanwhile.

// minReduction is the share of the context a compaction must save; a
// weaker one holds off automatic compactions until the view grows.
const minReduction = 0.2

// llmFailureLimit is how many compactions in a row may find the
// summarizer failing (or the store refusing a summary) before it is left
// alone until the view grows.
const llmFailureLimit = 3

// holds is a session's hold state; sessState.mu guards it.
type holds struct {
	tokens      int // no automatic compaction below this (after a failed or weak one)
	msgs        int // nor a message-count one below this many messages
	failures    int // compactions whose summary could not be applied, in a row
	llmFailures int // compactions whose summarizer failed, in a row
	llmTokens   int // the summarizer is not asked again below this
}

// holdOff stops automatic compactions until the view grows by a tenth of
// the window (or by a tenth of the message trigger) from tokens and msgs.
func (s *Summarizer) holdOff(st *sessState, tokens, msgs int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.hold.tokens = tokens + s.window()/10
	st.hold.msgs = msgs + max(5, s.cfg.TriggerThreshold/10)
}

// release lifts the hold after a compaction that helped.
func (st *sessState) release() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.hold.tokens, st.hold.msgs, st.hold.failures = 0, 0, 0
}

// held returns the sizes below which automatic compactions wait.
func (st *sessState) held() (tokens, msgs int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.hold.tokens, st.hold.msgs
}

// applyFailed counts a summary the store refused; past the limit,
// automatic compactions wait for the session to grow.
func (s *Summarizer) applyFailed(st *sessState, eff, msgs int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.hold.failures++
	if st.hold.failures >= llmFailureLimit {
		st.hold.tokens = eff + s.window()/10
		st.hold.msgs = msgs + max(5, s.cfg.TriggerThreshold/10)
	}
}

// llmHeld reports whether the summarizer failed too often to be asked
// again at this size.
func (s *Summarizer) llmHeld(st *sessState, eff int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.hold.llmFailures >= llmFailureLimit && eff < st.hold.llmTokens
}

// noteLLM records how a compaction's summarizer calls went.
func (s *Summarizer) noteLLM(st *sessState, err error, eff int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err == nil {
		st.hold.llmFailures = 0
		return
	}
	st.hold.llmFailures++
	if st.hold.llmFailures >= llmFailureLimit {
		st.hold.llmTokens = eff + s.window()/10
	}
}

// afterCompaction decides the hold once a compaction was applied: a weak
// automatic one (it saved less than minReduction of the context, and did
// not take a fifth of the messages either) holds off the next.
func (s *Summarizer) afterCompaction(st *sessState, c *compaction, after int) {
	weak := float64(c.before-after) < minReduction*float64(c.before)
	if weak && c.mode.automatic() && !(float64(c.cut) >= minReduction*float64(len(c.view.Messages))) {
		s.holdOff(st, c.eff, len(c.view.Messages))
		return
	}
	st.release()
}
