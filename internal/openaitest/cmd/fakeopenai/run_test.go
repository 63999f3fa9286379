package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

func TestRunServesScriptUntilStdinCloses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"replies":[{"content":"hello from the fake","chunks":3}],"models":["m"]}`), 0o600))
	logPath := filepath.Join(dir, "requests.jsonl")

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"-script", script, "-log", logPath}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
	}()

	url, err := bufio.NewReader(stdoutR).ReadString('\n')
	require.NoError(t, err)
	url = strings.TrimSpace(url)
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/v1$`, url)

	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = url
	client := openai.NewClientWithConfig(cfg)
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	require.NoError(t, err)
	var got strings.Builder
	for {
		c, err := stream.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if len(c.Choices) > 0 {
			got.WriteString(c.Choices[0].Delta.Content)
		}
	}
	stream.Close()
	require.Equal(t, "hello from the fake", got.String())

	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	var logged struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []openai.ChatCompletionMessage
	}
	require.NoError(t, json.Unmarshal(b, &logged), string(b))
	require.Equal(t, "m", logged.Model)
	require.True(t, logged.Stream)
	require.Equal(t, "hi", logged.Messages[0].Content)

	stdinW.Close()
	select {
	case c := <-code:
		require.Equal(t, 0, c, stderr.String())
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after stdin closed")
	}
}

func TestRunStopsOnContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	stdoutR, stdoutW := io.Pipe()
	code := make(chan int, 1)
	go func() { code <- run(ctx, nil, nil, stdoutW, io.Discard) }()
	_, err := bufio.NewReader(stdoutR).ReadString('\n')
	require.NoError(t, err)
	cancel()
	require.Equal(t, 0, <-code)
}

func TestRunBadArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "unknown flag", args: []string{"-nope"}, wantCode: 2, wantErr: "flag provided but not defined"},
		{name: "stray argument", args: []string{"x.json"}, wantCode: 2, wantErr: "unexpected arguments"},
		{name: "missing script", args: []string{"-script", "/nonexistent/s.json"}, wantCode: 1, wantErr: "read script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.args, nil, &stdout, &stderr)
			require.Equal(t, tt.wantCode, got)
			require.Contains(t, stderr.String(), tt.wantErr)
			require.Empty(t, stdout.String())
		})
	}
}
