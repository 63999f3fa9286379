package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// extraTransport merges a request's extra fields (Request.Extra) into its
// JSON body: go-openai's ChatCompletionRequest has no field for a
// server's own options, so they are added on the way out. It wraps the
// retry transport, which replays the merged body.
type extraTransport struct{ base http.RoundTripper }

func (t extraTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	extra := extraFields(req.Context())
	if extra == nil || req.Body == nil || req.Body == http.NoBody {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close() // read to its end; the merged copy is sent instead
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	merged, err := mergeFields(body, extra)
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(merged))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(merged)), nil }
	r.ContentLength = int64(len(merged))
	return t.base.RoundTrip(r)
}

// mergeFields sets each of extra's top-level fields in the JSON object
// body, replacing a field of the same name whole.
func mergeFields(body []byte, extra map[string]json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("add extra request fields: the body is not a JSON object: %w", err)
	}
	for k, v := range extra {
		fields[k] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the extra fields as written
	if err := enc.Encode(fields); err != nil {
		return nil, fmt.Errorf("add extra request fields: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// extraFieldsKey carries a request's extra fields from Stream or Complete
// to the transport, as retryObserverKey carries OnRetry: the only way
// through go-openai. It never leaves this package.
type extraFieldsKey struct{}

// withExtraFields encodes extra for the transport; nil or empty extra
// leaves ctx as it is.
func withExtraFields(ctx context.Context, extra map[string]any) (context.Context, error) {
	if len(extra) == 0 {
		return ctx, nil
	}
	enc := make(map[string]json.RawMessage, len(extra))
	for k, v := range extra {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return ctx, fmt.Errorf("extra request field %s: %w", k, err)
		}
		enc[k] = json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return context.WithValue(ctx, extraFieldsKey{}, enc), nil
}

func extraFields(ctx context.Context) map[string]json.RawMessage {
	m, _ := ctx.Value(extraFieldsKey{}).(map[string]json.RawMessage)
	return m
}
