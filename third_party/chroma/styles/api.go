// Package styles is chroma v2.20.0's styles package with its registry built
// on first use instead of at package initialisation (see ../PATCHED.md).
package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

var (
	mu       sync.Mutex
	registry map[string]*chroma.Style
)

// load returns the registry, parsing the embedded styles on the first call.
// The caller holds mu.
func load() map[string]*chroma.Style {
	if registry != nil {
		return registry
	}
	registry = map[string]*chroma.Style{}
	// Register all embedded styles.
	files, err := fs.ReadDir(embedded, ".")
	if err != nil {
		panic(err)
	}
	for _, file := range files {
		if file.IsDir() {
			continue
		}
		r, err := embedded.Open(file.Name())
		if err != nil {
			panic(err)
		}
		style, err := chroma.NewXMLStyle(r)
		if err != nil {
			panic(err)
		}
		registry[style.Name] = style
		_ = r.Close()
	}
	return registry
}

// Fallback style.
func Fallback() *chroma.Style {
	mu.Lock()
	defer mu.Unlock()
	return load()["swapoff"]
}

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	mu.Lock()
	defer mu.Unlock()
	load()[style.Name] = style
	return style
}

// Lookup returns the named style and whether it is registered.
func Lookup(name string) (*chroma.Style, bool) {
	mu.Lock()
	defer mu.Unlock()
	s, ok := load()[name]
	return s, ok
}

// Names of all available styles.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	out := []string{}
	for name := range load() {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	if style, ok := Lookup(name); ok {
		return style
	}
	return Fallback()
}
