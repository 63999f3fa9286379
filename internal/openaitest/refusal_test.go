package openaitest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestLlamaCppRefusal: past the window, a server given LlamaCppRefusal
// answers as llama.cpp's server does, and records the refusal as one for
// the window; a request that fits is served.
func TestLlamaCppRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		prompt     int
		wantStatus int
	}{
		{name: "over the window", prompt: 5000, wantStatus: http.StatusBadRequest},
		{name: "fits", prompt: 4000, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithContextRefusal(openaitest.LlamaCppRefusal),
				openaitest.WithContextWindow(4096, func(openaitest.Request) int { return tt.prompt }))
			srv.Enqueue(openaitest.Text("ok"))
			status, _, body, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
			require.NoError(t, err)
			require.Equal(t, tt.wantStatus, status, body)
			accts := srv.Accounts()
			require.Len(t, accts, 1)
			if tt.wantStatus == http.StatusOK {
				require.Empty(t, accts[0].Rejected)
				return
			}
			require.Equal(t, openaitest.RejectWindow, accts[0].Rejected)
			var e struct {
				Error struct {
					Code          int    `json:"code"`
					Type          string `json:"type"`
					Message       string `json:"message"`
					NPromptTokens int    `json:"n_prompt_tokens"`
					NCtx          int    `json:"n_ctx"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Equal(t, 400, e.Error.Code)
			require.Equal(t, "exceed_context_size_error", e.Error.Type)
			require.Equal(t, 4096, e.Error.NCtx)
			require.Equal(t, tt.prompt, e.Error.NPromptTokens)
			require.Contains(t, e.Error.Message, "exceeds the available context size (4096 tokens)")
		})
	}
}
