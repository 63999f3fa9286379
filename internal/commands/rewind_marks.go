package commands

import "context"

// rewoundOf says which of a session's messages a rewind took out of the
// view, when the store records rewinds (session.Store does); the log
// keeps them, and /history marks them.
func rewoundOf(ctx context.Context, st Store, id string) func(seq int64) bool {
	none := func(int64) bool { return false }
	rs, ok := st.(interface {
		Rewound(ctx context.Context, id string) (func(seq int64) bool, error)
	})
	if !ok {
		return none
	}
	f, err := rs.Rewound(ctx, id)
	if err != nil {
		return none
	}
	return f
}
