package window

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Memory keeps, across runs, the windows servers showed only by cutting a
// prompt (Ollama before v0.10, or one whose /api/ps does not list the
// model): print mode runs once a turn, and each run would otherwise be cut
// once before it learns. A window is kept with what the server's own
// endpoints said at the time (Told); it is recalled only while they still
// say the same, so a server restarted with another window is not held to
// the old one. The file is small JSON, rewritten whole by rename; the
// last writer wins.
type Memory struct {
	path string
	now  func() time.Time
	mu   sync.Mutex // one writer in this process
}

// Remembered is a window a server showed.
type Remembered struct {
	Tokens int    `json:"tokens"`
	Source string `json:"source"`
	// Told is the window the server's endpoints reported then (0: none).
	Told int       `json:"told"`
	At   time.Time `json:"at"`
}

// OpenMemory uses the file at path (created on the first Keep).
func OpenMemory(path string, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{path: path, now: now}
}

func memoryKey(base, model string) string { return base + " " + model }

func (m *Memory) read() (map[string]Remembered, error) {
	b, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Remembered{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read remembered windows: %w", err)
	}
	all := map[string]Remembered{}
	if err := json.Unmarshal(b, &all); err != nil {
		return map[string]Remembered{}, nil // damaged: start over, it is only a cache
	}
	return all, nil
}

// Recall returns the window kept for model at base, if its server's
// endpoints still report told.
func (m *Memory) Recall(base, model string, told int) (Remembered, bool) {
	all, err := m.read()
	if err != nil {
		return Remembered{}, false
	}
	r, ok := all[memoryKey(base, model)]
	if !ok || r.Told != told || r.Tokens <= 0 {
		return Remembered{}, false
	}
	return r, true
}

// Keep stores a window model at base showed, with what its endpoints told.
func (m *Memory) Keep(base, model string, r Remembered) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	all, err := m.read()
	if err != nil {
		return err
	}
	r.At = m.now().UTC()
	all[memoryKey(base, model)] = r
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("encode remembered windows: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return fmt.Errorf("keep a window: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.path), ".windows-*.json")
	if err != nil {
		return fmt.Errorf("keep a window: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("keep a window: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keep a window: %w", err)
	}
	if err := os.Rename(tmp.Name(), m.path); err != nil {
		return fmt.Errorf("keep a window: %w", err)
	}
	return nil
}
