package shellfx

import (
	"regexp"
	"strings"
	"sync"
)

// Literal-path writes in script source, per language. They find what a
// script written earlier in a session does when it is run
// (python3 apply_fix.py), not everything a program can do.
var (
	pyAssignRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*([A-Za-z_]\w*)\s*=\s*(?:Path\(\s*)?[rbuf]?(['"])([^'"\n]+)['"]\s*\)?\s*$`)
	})
	pyOpenRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bopen\(\s*(?:[rbuf]?(['"])([^'"\n]+)['"]|([A-Za-z_]\w*))\s*(?:,\s*(?:mode\s*=\s*)?[rbf]?['"]([rwxab+t]+)['"])?\s*[,)]`)
	})
	pyPathRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:Path\(\s*[rbuf]?['"]([^'"\n]+)['"]\s*\)|\b([A-Za-z_]\w*))\.(write_text|write_bytes|open\(\s*['"][wax])`)
	})
	pyRemoveRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:os\.remove|os\.unlink|shutil\.rmtree)\(\s*(?:[rbuf]?['"]([^'"\n]+)['"]|([A-Za-z_]\w*))\s*\)`)
	})
	pyRenameRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:os\.rename|os\.replace|shutil\.move)\(\s*[rbuf]?['"]([^'"\n]+)['"]\s*,\s*[rbuf]?['"]([^'"\n]+)['"]`)
	})
	// A library call whose first argument is the file it writes: a figure
	// (savefig), a data frame (to_csv ...), an array (numpy.save ...).
	pyWriterRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:\.(?:savefig|to_csv|to_json|to_excel|to_parquet|to_pickle|to_html|to_feather)|\b(?:np|numpy)\.(?:save|savez|savez_compressed|savetxt))\(\s*(?:[rbuf]?(['"])([^'"\n]+)['"]|([A-Za-z_]\w*))\s*[,)]`)
	})
	pyCopyRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bshutil\.copy(?:file|2)?\(\s*[^,]+,\s*[rbuf]?['"]([^'"\n]+)['"]`)
	})
	jsWriteRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("\\b(writeFileSync|writeFile|appendFileSync|appendFile|outputFileSync|outputFile|unlinkSync|rmSync)\\(\\s*(['\"`])([^'\"`\\n]+)['\"`]")
	})
	jsRenameRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("\\brenameSync\\(\\s*['\"`]([^'\"`\\n]+)['\"`]\\s*,\\s*['\"`]([^'\"`\\n]+)['\"`]")
	})
	rbWriteRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bFile\.(write|open)\(\s*['"]([^'"\n]+)['"](?:\s*,\s*['"]([wa+]+)['"])?`)
	})
	plOpenRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"](>>?|\+<)['"]\s*,\s*['"]([^'"\n]+)['"]`)
	})
)

// ScanScript lists the literal-path writes, deletions and renames in a
// script's source. lang is "python", "node", "shell", "ruby" or "perl"
// (as Op.Lang says); paths are as written, relative to where the script
// runs.
func ScanScript(lang, source string) []Op {
	var ops []Op
	switch lang {
	case "python":
		vars := map[string]string{}
		for _, m := range pyAssignRe().FindAllStringSubmatch(source, -1) {
			vars[m[1]] = m[3]
		}
		read := map[string]bool{} // a file read and then written is changed, not new
		for _, m := range pyOpenRe().FindAllStringSubmatch(source, -1) {
			p := m[2]
			if p == "" {
				p = vars[m[3]]
			}
			mode := m[4]
			switch {
			case p == "":
			case strings.ContainsAny(mode, "wx") && read[p]:
				ops = append(ops, Op{Kind: Modify, Path: p})
			case strings.ContainsAny(mode, "wx"):
				ops = append(ops, Op{Kind: Write, Path: p})
			case strings.ContainsAny(mode, "a+"):
				ops = append(ops, Op{Kind: Modify, Path: p})
			default:
				read[p] = true
			}
		}
		// named is the path a match names: the literal in group i, else
		// the value of the variable in group i+1.
		named := func(m []string, i int) string {
			if m[i] != "" {
				return m[i]
			}
			return vars[m[i+1]]
		}
		for _, m := range pyPathRe().FindAllStringSubmatch(source, -1) {
			if p := named(m, 1); p != "" {
				ops = append(ops, Op{Kind: Write, Path: p})
			}
		}
		for _, m := range pyRemoveRe().FindAllStringSubmatch(source, -1) {
			if p := named(m, 1); p != "" {
				ops = append(ops, Op{Kind: Delete, Path: p})
			}
		}
		for _, m := range pyRenameRe().FindAllStringSubmatch(source, -1) {
			ops = append(ops, Op{Kind: Rename, Path: m[1], To: m[2]})
		}
		for _, m := range pyWriterRe().FindAllStringSubmatch(source, -1) {
			if p := named(m, 2); p != "" {
				ops = append(ops, Op{Kind: Write, Path: p})
			}
		}
		for _, m := range pyCopyRe().FindAllStringSubmatch(source, -1) {
			ops = append(ops, Op{Kind: Write, Path: m[1]})
		}
	case "node":
		for _, m := range jsWriteRe().FindAllStringSubmatch(source, -1) {
			kind := Write
			switch {
			case strings.HasPrefix(m[1], "append"):
				kind = Modify
			case m[1] == "unlinkSync" || m[1] == "rmSync":
				kind = Delete
			}
			ops = append(ops, Op{Kind: kind, Path: m[3]})
		}
		for _, m := range jsRenameRe().FindAllStringSubmatch(source, -1) {
			ops = append(ops, Op{Kind: Rename, Path: m[1], To: m[2]})
		}
	case "ruby":
		for _, m := range rbWriteRe().FindAllStringSubmatch(source, -1) {
			switch {
			case m[1] == "write" || strings.Contains(m[3], "w"):
				ops = append(ops, Op{Kind: Write, Path: m[2]})
			case strings.ContainsAny(m[3], "a+"):
				ops = append(ops, Op{Kind: Modify, Path: m[2]})
			}
		}
	case "perl":
		for _, m := range plOpenRe().FindAllStringSubmatch(source, -1) {
			kind := Write
			if m[1] != ">" {
				kind = Modify
			}
			ops = append(ops, Op{Kind: kind, Path: m[2]})
		}
	case "shell":
		e, err := Parse(source, "")
		if err != nil {
			return nil
		}
		for _, op := range e.Ops {
			if op.Kind != Read && op.Kind != Run {
				ops = append(ops, op)
			}
		}
	}
	return ops
}
