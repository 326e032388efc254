package scenario

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Names that become path components of the output (a scenario's name in
// fleetsim-out/NAME, an arm's in arms/NAME/) and CSV fields (the arm column
// of cdf.csv) are restricted: letters, digits, '-', '_' and '.', not
// starting with a dot, at most MaxNameLen bytes. Nothing else can climb out
// of the output directory ("../x"), hide a file (".x") or break a CSV row
// (a comma, a quote, a newline).

// MaxNameLen is the longest scenario or arm name, in bytes (well under the
// 255-byte file-name limit of common file systems, leaving room for the
// "-sweep" suffix and temporary-file prefixes).
const MaxNameLen = 100

// CheckName reports why name cannot be a scenario or arm name, or nil.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("must not be empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("at most %d bytes, found %d", MaxNameLen, len(name))
	}
	if name[0] == '.' {
		return fmt.Errorf("%q must not start with a dot (it names a directory or file of the output)", name)
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Errorf("%q has %q: use only letters, digits, '-', '_' and '.' (it names a directory or file of the output)", name, r)
		}
	}
	return nil
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}

// NameFromFile is the default scenario name from a file name: its base
// name without the extension, with every character CheckName refuses
// replaced by '_' (and a leading dot too), so that a file may be named
// freely.
func NameFromFile(path string) string {
	b := []byte(baseName(path))
	if len(b) > MaxNameLen {
		b = b[:MaxNameLen]
	}
	for i, c := range b {
		if c >= 0x80 || !nameRune(rune(c)) || i == 0 && c == '.' {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "scenario"
	}
	return string(b)
}

// CheckPointName reports a sweep point name (its axes' KEY=VALUE pairs,
// the directory arms/NAME/ of the sweep) that could leave the output
// directory or break a CSV row.
func CheckPointName(name string) error {
	if strings.ContainsAny(name, "/\\,\"\r\n\x00") || strings.HasPrefix(name, ".") || len(name) > 200 {
		return fmt.Errorf("sweep point %q: a value must not contain '/', '\\', ',', '\"' or a line break (it names a directory of the output), nor make the name longer than 200 bytes", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("sweep point %q: a value must not contain control characters", name)
		}
	}
	return nil
}

// LocalPath reports whether rel, a path the writer is about to write
// below a run directory, stays there.
func LocalPath(rel string) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("refusing to write %q: it is not inside the run directory", rel)
	}
	return nil
}
