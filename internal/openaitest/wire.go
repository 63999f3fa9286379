package openaitest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// splitRequest reads a chat request's body into a wireRequest as
// json.Unmarshal does, without running encoding/json's scanner over the
// messages: a session's requests repeat the ones before, and scanning
// every byte of every body twice (validating, then skipping each raw
// message) under -race was a third of the fake server's CPU. It finds
// where each member and message ends by skipping strings with
// bytes.IndexByte; whether a text is valid JSON is then left to what
// decodes it: a message already decoded once (decodeMessages keeps them
// by raw text) or decoded now, the tools likewise (decodeTools), each
// other member with json.Unmarshal or json.Valid. A valid JSON value
// ends where a string-aware bracket count says, so when each part is
// valid the body is, and json.Unmarshal would have read the same parts.
//
// It gives up (ok false; the caller runs json.Unmarshal) on anything a
// client marshalling with encoding/json does not send and json.Unmarshal
// reads in its own way: a key with an escape, a control character or a
// non-ASCII byte, a key
// matching a field only case-insensitively, a key given twice, messages
// that are not an array of objects.
func splitRequest(body []byte) (w wireRequest, ok bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return w, false
	}
	i = skipSpace(body, i+1)
	seen := map[string]bool{}
	if i < len(body) && body[i] == '}' {
		return w, skipSpace(body, i+1) == len(body)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return w, false
		}
		end := bytes.IndexByte(body[i+1:], '"')
		if end < 0 {
			return w, false
		}
		key := body[i+1 : i+1+end]
		for _, c := range key {
			if c == '\\' || c < 0x20 || c >= 0x80 {
				return w, false
			}
		}
		name := string(key)
		if seen[name] {
			return w, false
		}
		seen[name] = true
		i = skipSpace(body, i+2+end)
		if i >= len(body) || body[i] != ':' {
			return w, false
		}
		i = skipSpace(body, i+1)
		var vend int
		if name == "messages" {
			w.Messages, vend, ok = splitArray(body, i)
		} else {
			vend, ok = skipValue(body, i)
			if ok {
				ok = w.member(name, body[i:vend])
			}
		}
		if !ok {
			return w, false
		}
		i = skipSpace(body, vend)
		if i >= len(body) {
			return w, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return w, skipSpace(body, i+1) == len(body)
		default:
			return w, false
		}
	}
}

// wireFields are the keys wireRequest reads.
var wireFields = []string{"model", "messages", "tools", "stream", "stream_options", "max_tokens", "max_completion_tokens", "tool_choice"}

// member sets the field named by key from its raw value, validating it.
func (w *wireRequest) member(key string, raw []byte) bool {
	switch key {
	case "model":
		return json.Unmarshal(raw, &w.Model) == nil
	case "tools":
		w.Tools = raw // decodeTools decodes (and so validates) it
		return true
	case "stream":
		return json.Unmarshal(raw, &w.Stream) == nil
	case "stream_options":
		return json.Unmarshal(raw, &w.StreamOptions) == nil
	case "max_tokens":
		return json.Unmarshal(raw, &w.MaxTokens) == nil
	case "max_completion_tokens":
		return json.Unmarshal(raw, &w.MaxCompletionTokens) == nil
	case "tool_choice":
		w.ToolChoice = raw
		return json.Valid(raw)
	}
	for _, f := range wireFields {
		if strings.EqualFold(f, key) {
			return false // json.Unmarshal would set f from it
		}
	}
	return json.Valid(raw)
}

// splitArray splits the array of objects at body[i:] into its elements'
// raw texts, and returns where the array ends.
func splitArray(body []byte, i int) (elems []json.RawMessage, end int, ok bool) {
	if i >= len(body) || body[i] != '[' {
		return nil, 0, false
	}
	elems = []json.RawMessage{}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == ']' {
		return elems, i + 1, true
	}
	for {
		if i >= len(body) || body[i] != '{' {
			return nil, 0, false
		}
		e, ok := skipValue(body, i)
		if !ok {
			return nil, 0, false
		}
		elems = append(elems, body[i:e:e])
		i = skipSpace(body, e)
		if i >= len(body) {
			return nil, 0, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case ']':
			return elems, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

// skipValue returns where the JSON value starting at body[i] ends,
// without validating it: an object or array where its brackets, outside
// strings, balance; a string at its closing quote; anything else before
// the next comma, bracket or space.
func skipValue(body []byte, i int) (int, bool) {
	if i >= len(body) {
		return 0, false
	}
	switch body[i] {
	case '"':
		return skipString(body, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(body); j++ {
			switch body[j] {
			case '"':
				e, ok := skipString(body, j)
				if !ok {
					return 0, false
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for ; j < len(body); j++ {
		if c := body[j]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
	}
	return j, j > i
}

// skipString returns where the string starting at body[i] (a quote)
// ends: after the first quote not escaped by an odd run of backslashes.
func skipString(body []byte, i int) (int, bool) {
	j := i + 1
	for {
		q := bytes.IndexByte(body[j:], '"')
		if q < 0 {
			return 0, false
		}
		j += q
		n := 0
		for k := j - 1; k > i && body[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

func skipSpace(body []byte, i int) int {
	for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
		i++
	}
	return i
}
