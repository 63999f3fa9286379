package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// WithContextRefusal sets how the server words its refusal of a request
// larger than the window WithContextWindow enforces: refuse gets the
// window, the request's prompt tokens and the completion tokens it asked
// for, and returns the status and JSON body to send. The refusal is
// recorded as RejectWindow. Without it the body is OpenAI's.
func WithContextRefusal(refuse func(window, prompt, completion int) (status int, body string)) Option {
	return func(s *Server) { s.refusal = refuse }
}

// LlamaCppRefusal is llama.cpp's server refusing a prompt larger than its
// slot's context (tools/server: exceed_context_size_error, with
// n_prompt_tokens and n_ctx in the error object).
func LlamaCppRefusal(window, prompt, completion int) (int, string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code":            http.StatusBadRequest,
		"message":         fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt+completion, window),
		"type":            "exceed_context_size_error",
		"n_prompt_tokens": prompt + completion,
		"n_ctx":           window,
	}})
	return http.StatusBadRequest, string(b)
}
