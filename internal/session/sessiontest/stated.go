package sessiontest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// SeedStatedLog appends n messages to session id in which every fourth
// user message states a value ("The port of service 8 is 7008."), as a
// long session's user does: the sentences a summary keeps verbatim
// (user_constraints). It returns those sentences, oldest first.
func SeedStatedLog(tb testing.TB, store *session.Store, id string, n int) []string {
	tb.Helper()
	var stated []string
	batch := make([]session.Message, 0, 1000)
	for i := range n {
		m := session.Message{Role: session.RoleAssistant, Content: fmt.Sprintf("done with step %d", i), Tokens: 6}
		if i%2 == 0 {
			m = session.Message{Role: session.RoleUser, Content: fmt.Sprintf("go on with step %d", i), Tokens: 6}
			if i%8 == 0 {
				m.Content = fmt.Sprintf("The port of service %d is %d.", i, 7000+i)
				stated = append(stated, m.Content)
			}
		}
		batch = append(batch, m)
		if len(batch) == cap(batch) || i == n-1 {
			_, err := store.Append(context.Background(), id, batch...)
			require.NoError(tb, err)
			batch = batch[:0]
		}
	}
	return stated
}
