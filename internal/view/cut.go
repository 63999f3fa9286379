package view

import "errors"

// Cut tolerance: how far the provider's prompt_tokens may fall short of
// gencode's own count of the same request before the shortfall is taken
// for a prompt the server cut (Ollama drops whole messages from the front
// of a prompt larger than its window, without an error). Servers count
// with the model's own tokenizer and chat template, gencode with
// o200k_base or cl100k_base and OpenAI's framing: the two differ, mostly
// upwards (smaller vocabularies, template tokens). Measured across 1,000
// mixed requests (agent's TestCutToleranceNoFalseAlarm), the worst
// shortfall is 5.6%. Against a server known to cut silently (Ollama, whose
// count includes its template) the bound is max(128 tokens, 10%): a cut of
// one message of a dozen is caught, with nearly twice the measured worst
// as margin. Against any other server, which refuses a prompt too large
// rather than cutting it (or is not recognised: a proxy in front of
// Ollama), a cut is only suspected past max(1024 tokens, 50%): a false
// alarm sets a good answer aside, so only the large silent losses that
// matter (issue 22: 13,870 sent, 3,912 read) are caught there, whatever
// the server counts or caches. The agent's requests and the summarizer's
// are judged by the same tolerance (Policy.IsCut). See
// docs/design/window.md.
type CutTolerance struct {
	MinTokens int
	Percent   int
}

// CutToleranceFor is the tolerance for a server, by the name package
// window gives it ("Ollama", "vLLM", ...; "" when not recognised).
func CutToleranceFor(server string) CutTolerance {
	if server == "Ollama" {
		return CutTolerance{MinTokens: 128, Percent: 10}
	}
	return CutTolerance{MinTokens: 1024, Percent: 50}
}

// IsCut says whether a request gencode counted as sent tokens came back
// with prompt_tokens counted by the server: true when the shortfall is
// past the tolerance.
func (tol CutTolerance) IsCut(sent, counted int) bool {
	if sent <= 0 || counted <= 0 {
		return false
	}
	return sent-counted > max(tol.MinTokens, sent*tol.Percent/100)
}

// MinCutWindow is the least window a cut prompt teaches: a cut that kept
// less (one huge message dropped) says little of the window.
const MinCutWindow = 1024

// ErrPromptCut is the error an OverflowError wraps for a summary request
// the server answered after cutting it: the answer is not used.
var ErrPromptCut = errors.New("the server cut the summary request without an error")

// SetServer says which server the policy's endpoint is (package window's
// name for it; "" when not recognised): it chooses the cut tolerance.
func (p *Policy) SetServer(server string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.server = server
}

// CutTolerance is the tolerance for the policy's server.
func (p *Policy) CutTolerance() CutTolerance {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return CutToleranceFor(p.server)
}

// IsCut says whether a request of sent tokens (gencode's count) that the
// server counted as counted was cut by it, for the policy's server.
func (p *Policy) IsCut(sent, counted int) bool { return p.CutTolerance().IsCut(sent, counted) }
