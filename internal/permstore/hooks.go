package permstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// HooksFileName is the file, beside the project's rules, that lists the
// project hooks the user approved.
const HooksFileName = "approved-hooks.toml"

const hooksHeader = `# The project's hooks (.claude/settings.json, .gencode/hooks.toml) that the
# user approved, by the id of their event, matcher and command: a changed
# hook needs approving again. gencode hooks lists them.
`

type hooksFile struct {
	Project  string   `toml:"project"`
	Approved []string `toml:"approved"`
}

func (s *Store) hooksPath() string { return filepath.Join(filepath.Dir(s.path), HooksFileName) }

// approvedHooks reads the approved ids; a missing file is none.
func (s *Store) approvedHooks() ([]string, error) {
	data, err := os.ReadFile(s.hooksPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the project's approved hooks: %w", err)
	}
	var f hooksFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read the project's approved hooks %s: %w", s.hooksPath(), err)
	}
	return f.Approved, nil
}

// HookApproved reports whether the user approved the project hook id
// (see hooks.Hook.ID). A file that cannot be read approves nothing.
func (s *Store) HookApproved(id string) bool {
	ids, err := s.approvedHooks()
	return err == nil && slices.Contains(ids, id)
}

// ApproveHooks records the user's approval of the project hooks ids.
func (s *Store) ApproveHooks(ids ...string) error {
	unlock, err := s.lock()
	if err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	defer unlock()
	have, err := s.approvedHooks()
	if err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	for _, id := range ids {
		if !slices.Contains(have, id) {
			have = append(have, id)
		}
	}
	body, err := toml.Marshal(hooksFile{Project: s.project, Approved: have})
	if err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".hooks-*.toml") // 0600
	if err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // after the rename: nothing left to remove
	if _, err := tmp.WriteString(hooksHeader + "\n" + string(body)); err != nil {
		_ = tmp.Close() // the write's error is the one to report
		return fmt.Errorf("approve hooks: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.hooksPath()); err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	return nil
}
