package permstore

import (
	"fmt"
	"path/filepath"
	"slices"
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
	var f hooksFile
	if _, err := readTOML(s.hooksPath(), &f); err != nil {
		return nil, fmt.Errorf("the project's approved hooks: %w", err)
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
	if err := writeTOML(s.hooksPath(), hooksHeader, hooksFile{Project: s.project, Approved: have}); err != nil {
		return fmt.Errorf("approve hooks: %w", err)
	}
	return nil
}
