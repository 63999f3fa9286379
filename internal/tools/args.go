package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// decodeArgs unmarshals the model's JSON arguments into dst. Unknown fields
// are ignored. On failure the message names the tool and its expected
// arguments, for the model to retry.
func decodeArgs(tool string, raw json.RawMessage, dst any, required ...string) (string, bool) {
	usage := fmt.Sprintf("; expected arguments: %s", argsUsage(tool))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fmt.Sprintf("invalid arguments for %s: not a JSON object%s", tool, usage), false
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		var ae *argError
		switch {
		case errors.As(err, &ae):
			return fmt.Sprintf("invalid arguments for %s: %s %v%s", tool, fieldOf(obj, ae.raw), ae, usage), false
		case errors.As(err, &te) && te.Field != "":
			return fmt.Sprintf("invalid arguments for %s: %s must be %s, not %s%s", tool, te.Field, jsonKind(te.Type.Kind().String()), te.Value, usage), false
		default:
			return fmt.Sprintf("invalid arguments for %s: not a JSON object (%v)%s", tool, err, usage), false
		}
	}
	var missing []string
	for _, name := range required {
		if v, ok := obj[name]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("invalid arguments for %s: missing %s%s", tool, strings.Join(missing, ", "), usage), false
	}
	return "", true
}

// fieldOf names the argument whose raw value is raw.
func fieldOf(obj map[string]json.RawMessage, raw []byte) string {
	for k, v := range obj {
		if bytes.Equal(bytes.TrimSpace(v), bytes.TrimSpace(raw)) {
			return k
		}
	}
	return "an argument"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	default:
		return "a " + goKind
	}
}

func argsUsage(tool string) string {
	switch tool {
	case ToolRead:
		return `{"file_path": string, "offset"?: integer, "limit"?: integer}`
	case ToolWrite:
		return `{"file_path": string, "content": string}`
	case ToolEdit:
		return `{"file_path": string, "old_string": string, "new_string": string, "replace_all"?: boolean}`
	case ToolBash:
		return `{"command": string, "timeout"?: integer seconds}`
	case ToolGlob:
		return `{"pattern": string, "path"?: string}`
	case ToolGrep:
		return `{"pattern": string, "path"?: string, "include"?: string}`
	case ToolLS:
		return `{"path"?: string}`
	}
	return "{}"
}

// argError is a typed argument's complaint, reported to the model as is.
type argError struct {
	msg string
	raw []byte
}

func (e *argError) Error() string { return e.msg }

// intArg is an integer argument that also accepts integral floats (3.0) and
// numeric strings ("3"), which small models often send.
type intArg struct {
	set bool
	v   int
}

func (a *intArg) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
		if s == "" {
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return &argError{"must be an integer, not " + string(b), b}
	}
	a.set, a.v = true, int(f)
	return nil
}

// IntArg is the lenient integer argument the tools use, for other tools
// (recall's) to read their arguments the same way.
type IntArg = intArg

// Value returns the integer and whether the argument was given.
func (a intArg) Value() (int, bool) { return a.v, a.set }

// boolArg is a boolean argument that also accepts "true"/"false" strings.
type boolArg bool

func (a *boolArg) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	switch strings.ToLower(s) {
	case "true":
		*a = true
	case "false", "null", "":
		*a = false
	default:
		return &argError{"must be true or false, not " + string(b), b}
	}
	return nil
}
