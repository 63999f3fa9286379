package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// A submodule registered in a repository's index whose directory has no
// .git yet (not initialised) is where an auto-allowed command could make
// one: `git status` in the repository then runs git inside it, with that
// new config (core.fsmonitor). So the .git of every gitlink in the index
// is kept read-only too, also before it exists.

// maxIndexBytes bounds the index read before a command: past it the
// submodules cannot be listed and an auto-allowed command asks.
const maxIndexBytes = 256 << 20

// gitlinkMode is a submodule's mode in the index (0160000).
const gitlinkMode = 0o160000

// gitlinks returns the paths (slash-separated, relative to the work tree)
// of the submodules in the index of the git directory gd: the entries
// with gitlinkMode, also those of a shared index (core.splitIndex). A
// missing index has none; one that cannot be read is an error.
func gitlinks(gd string) ([]string, error) {
	links, shared, err := readIndex(filepath.Join(gd, "index"), hashSize(gd))
	if err != nil || shared == "" {
		return links, err
	}
	more, _, err := readIndex(filepath.Join(gd, "sharedindex."+shared), hashSize(gd))
	return append(links, more...), err
}

// objectFormat finds extensions.objectFormat = sha256 in a git config.
var objectFormat = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?im)^\s*objectformat\s*=\s*"?sha256"?\s*$`) })

// hashSize is the object id size of the repository of gd: 32 bytes for
// SHA-256 (its config, or its common dir's, says so), else 20.
func hashSize(gd string) int {
	for _, c := range []string{filepath.Join(gd, "config"), filepath.Join(gd, "commondir")} {
		text := readSmallN(c, 1<<16)
		if filepath.Base(c) == "commondir" {
			dir := string(bytes.TrimSpace([]byte(text)))
			if dir == "" {
				continue
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(gd, dir)
			}
			text = readSmallN(filepath.Join(dir, "config"), 1<<16)
		}
		if objectFormat().MatchString(text) {
			return 32
		}
	}
	return 20
}

// readIndex parses a git index file (versions 2 to 4) and returns the
// paths of its gitlinks and, when it is split, the name (hex) of its
// shared index.
func readIndex(name string, hashLen int) (links []string, shared string, err error) {
	fi, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s for its submodules: %w", name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return nil, "", fmt.Errorf("read %s for its submodules: not a regular file of at most %d MiB", name, maxIndexBytes>>20)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, "", fmt.Errorf("read %s for its submodules: %w", name, err)
	}
	bad := func(why string) error { return fmt.Errorf("read %s for its submodules: %s", name, why) }
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, "", bad("not a git index")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, "", bad(fmt.Sprintf("index version %d", version))
	}
	count := binary.BigEndian.Uint32(b[8:12])
	end := len(b) - hashLen // the trailing checksum
	off := 12
	var prev []byte
	for range count {
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return nil, "", bad("truncated entry")
		}
		mode := binary.BigEndian.Uint32(b[off+24 : off+28])
		flags := binary.BigEndian.Uint16(b[off+40+hashLen : off+fixed])
		p := off + fixed
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, "", bad("extended flags before version 3")
			}
			p += 2
		}
		var path []byte
		if version == 4 {
			strip, n := offsetVarint(b[min(p, end):end])
			if n == 0 || strip > len(prev) {
				return nil, "", bad("bad path compression")
			}
			p += n
			nul := bytes.IndexByte(b[min(p, end):end], 0)
			if nul < 0 {
				return nil, "", bad("unterminated path")
			}
			path = append(append([]byte(nil), prev[:len(prev)-strip]...), b[p:p+nul]...)
			off = p + nul + 1
		} else {
			nul := bytes.IndexByte(b[min(p, end):end], 0)
			if nul < 0 {
				return nil, "", bad("unterminated path")
			}
			path = b[p : p+nul]
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off += (p - off + nul + 8) &^ 7
		}
		prev = path
		if mode&0o170000 == gitlinkMode {
			links = append(links, string(path))
		}
	}
	// Extensions: a 4-byte signature and a 4-byte size each; "link" is
	// a split index's, naming its shared index first.
	for off+8 <= end {
		sig, size := string(b[off:off+4]), int(binary.BigEndian.Uint32(b[off+4:off+8]))
		off += 8
		if size < 0 || off+size > end {
			return nil, "", bad("truncated extension")
		}
		if sig == "link" && size >= hashLen {
			if id := hex.EncodeToString(b[off : off+hashLen]); id != hex.EncodeToString(make([]byte, hashLen)) {
				shared = id
			}
		}
		off += size
	}
	return links, shared, nil
}

// offsetVarint decodes git's offset varint (index v4 path compression):
// the value and the bytes it took (0: malformed).
func offsetVarint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := int(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 8 {
			return 0, 0
		}
		c = b[n]
		n++
		v = ((v + 1) << 7) | int(c&127)
	}
	return v, n
}

// readSmallN returns the start of the regular file name, at most max
// bytes ("" when it is missing or not a regular file: a FIFO is not
// waited for).
func readSmallN(name string, max int64) string {
	f, err := os.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return string(b)
}
