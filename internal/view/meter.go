package view

import (
	"context"

	"github.com/gencode/gencode/internal/session"
)

// TallyStore is the session store as Measure reads it.
type TallyStore interface {
	Tally(ctx context.Context, sessionID string, r session.TallyRule) (session.Tally, error)
	SetMaskTokens(ctx context.Context, sessionID string, counts map[int64]int) error
	LoadView(ctx context.Context, sessionID string) (session.View, error)
}

// Measure is the size of the request session id makes now: what
// Build(LoadView) says, to the token, without loading the view. The store
// adds up the stored counts in SQL under this policy's rules (masking,
// cuts); the policy counts what it writes itself (the head, cut texts,
// placeholders not counted before, which it stores). A view the policy
// must mend (see session.Tally.Plain) is loaded and built.
//
// Of the breakdown, Measure sets all but Messages and Repaired: Fixed,
// Instructions, Summaries, the per-role figures /context shows (from the
// store's running sums of the user's messages and of the results) and
// the counts.
func (p *Policy) Measure(ctx context.Context, st TallyStore, id string) (Prompt, error) {
	room, capTokens := p.MessageRoom(), p.CapTokens()
	t, err := st.Tally(ctx, id, session.TallyRule{
		Mask: func(n int) int { return maskN(n, p.cfg.MaskAfter, p.cfg.MaskBatch) },
		Room: room, CapTokens: capTokens,
	})
	if err != nil || !t.Plain {
		v, lerr := st.LoadView(ctx, id)
		if lerr != nil {
			return Prompt{}, lerr
		}
		return p.Build(v), nil
	}
	_, src := p.window()
	usable := p.Usable()
	r := Prompt{Window: usable, Reserve: p.Window() - usable, Learned: src != "", Source: src, ConfiguredWindow: p.cfg.Window,
		LogMessages: t.Messages, SummaryCount: len(t.View.Summaries), MaskedCount: t.Masked}
	msgs := t.Tokens
	sid := t.View.Session.ID
	// The results' share (and any other role's, as Build counts them) is
	// what the others leave.
	user, assistant, masked := t.UserTokens, t.AssistantTokens, t.MaskTokens
	for _, m := range t.Cut {
		stored := m.Tokens
		var cut bool
		if m, cut = p.fit(sid, m, room, capTokens); cut {
			r.CutCount++
		}
		msgs += m.Tokens
		switch m.Role {
		case session.RoleUser:
			user += m.Tokens - stored
		case session.RoleAssistant:
			assistant += m.Tokens - stored
		}
	}
	for _, m := range t.Empty {
		var cut bool
		if m, cut = p.fit(sid, p.noOutput(sid, m), room, capTokens); cut {
			r.CutCount++
		}
		msgs += m.Tokens
	}
	counted := map[int64]int{}
	for _, m := range t.Unmasked {
		if m.Content == "" { // masked as Build masks it: after normalize
			m = p.noOutput(sid, m)
		}
		n := p.maskedTokens(sid, m)
		counted[m.Seq] = n
		if m.Seq >= t.From { // the ones before are kept for the running sum
			msgs += n
			masked += n
		}
	}
	// Kept for the next measure; counts not kept (a read-only store) are
	// counted again then, so the figure is the same.
	_ = st.SetMaskTokens(ctx, sid, counted)
	sys := p.SystemPrompt(t.View.Session)
	r.Fixed = p.overhead() + p.headTokens(p.head(sys, nil, nil, ""))
	r.Instructions = p.InstructionTokens()
	r.Summaries = p.overhead() + p.headTokens(p.head(sys, t.View.Summaries, t.View.Blocks, t.First)) - r.Fixed
	r.User, r.Assistant, r.Masked = user, assistant, masked
	r.ToolOutputs = msgs - user - assistant - masked
	r.Tokens = r.Fixed + r.Summaries + msgs
	return r, nil
}
