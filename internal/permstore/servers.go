package permstore

import (
	"fmt"
	"path/filepath"
	"slices"
)

// ServersFileName holds the project's approved MCP servers, beside its
// rules.
const ServersFileName = "mcp-servers.toml"

const serversHeader = `# MCP servers of this project's .mcp.json that the user approved: each
# runs code, so gencode starts one only once it is approved here, and asks
# again when its command, arguments, environment or URL change.
# "/mcp revoke NAME" (or deleting its table) takes an approval back.
`

// ApprovedServer is one approval: the server's name in .mcp.json and what
// it was when approved (mcp.ServerConfig.Fingerprint).
type ApprovedServer struct {
	Name        string `toml:"name"`
	Fingerprint string `toml:"fingerprint"`
}

type serversFile struct {
	Project string           `toml:"project"`
	Servers []ApprovedServer `toml:"server"`
}

func (s *Store) serversPath() string { return filepath.Join(filepath.Dir(s.path), ServersFileName) }

// ApprovedServers lists the project's approved MCP servers; a missing
// file is none.
func (s *Store) ApprovedServers() ([]ApprovedServer, error) {
	var f serversFile
	if _, err := readTOML(s.serversPath(), &f); err != nil {
		return nil, fmt.Errorf("the project's approved mcp servers: %w", err)
	}
	return f.Servers, nil
}

// ServerApproved reports whether the server name, as fingerprint says it
// is now, was approved. A file that cannot be read approves nothing.
func (s *Store) ServerApproved(name, fingerprint string) bool {
	list, err := s.ApprovedServers()
	return err == nil && slices.Contains(list, ApprovedServer{Name: name, Fingerprint: fingerprint})
}

// ApproveServer records the approval of a project server as it is now,
// replacing an earlier one of the same name.
func (s *Store) ApproveServer(name, fingerprint string) error {
	return s.changeServers(func(list []ApprovedServer) ([]ApprovedServer, error) {
		list = slices.DeleteFunc(list, func(a ApprovedServer) bool { return a.Name == name })
		return append(list, ApprovedServer{Name: name, Fingerprint: fingerprint}), nil
	})
}

// RevokeServer takes back the approval of server name.
func (s *Store) RevokeServer(name string) error {
	return s.changeServers(func(list []ApprovedServer) ([]ApprovedServer, error) {
		n := len(list)
		list = slices.DeleteFunc(list, func(a ApprovedServer) bool { return a.Name == name })
		if len(list) == n {
			return nil, fmt.Errorf("revoke mcp server %s: it is not approved", name)
		}
		return list, nil
	})
}

// changeServers rewrites the approvals under the project's lock.
func (s *Store) changeServers(change func([]ApprovedServer) ([]ApprovedServer, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return fmt.Errorf("save mcp server approval: %w", err)
	}
	defer unlock()
	list, err := s.ApprovedServers()
	if err != nil {
		return err
	}
	if list, err = change(list); err != nil {
		return err
	}
	return writeTOML(s.serversPath(), serversHeader, serversFile{Project: s.project, Servers: list})
}
