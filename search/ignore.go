package search

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// A pattern is one line of a .gitignore or .ignore file (`man gitignore`).
type pattern struct {
	negate  bool // "!x": a match re-includes
	dirOnly bool // "x/": matches directories only
	// base patterns (no slash but a trailing one) match an entry's name
	// at any depth; the others match its path relative to the file's
	// folder, component by component, "**" standing for any number.
	base  bool
	glob  string   // base: the name's glob
	comps []string // !base: the components' globs
}

// parsePattern reads one line; ok is false for blank lines and comments.
func parsePattern(line string) (p pattern, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return p, false
	}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return p, false
	}
	if !strings.Contains(line, "/") {
		p.base, p.glob = true, line
		return p, true
	}
	for _, c := range strings.Split(strings.TrimPrefix(line, "/"), "/") {
		if c != "" {
			p.comps = append(p.comps, c)
		}
	}
	switch {
	case len(p.comps) == 0:
		return p, false
	case len(p.comps) == 2 && p.comps[0] == "**" && p.comps[1] != "**":
		// "**/x" is "x" at any depth.
		p.base, p.glob, p.comps = true, p.comps[1], nil
	}
	return p, true
}

// match reports whether the pattern matches the entry whose path relative
// to the pattern's folder is rel and whose name is name.
func (p *pattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.base {
		return wildmatch(p.glob, name)
	}
	return matchComps(p.comps, rel)
}

// matchComps matches a slash-separated path against component globs, where
// a "**" component matches zero or more components, or one or more when it
// is the last ("x/**" matches what is inside x, not x).
func matchComps(comps []string, path string) bool {
	for len(comps) > 0 {
		c := comps[0]
		if c == "**" {
			rest := comps[1:]
			if len(rest) == 0 {
				return path != ""
			}
			for {
				if matchComps(rest, path) {
					return true
				}
				i := strings.IndexByte(path, '/')
				if i < 0 {
					return false
				}
				path = path[i+1:]
			}
		}
		if path == "" {
			return false
		}
		seg, next := path, ""
		if i := strings.IndexByte(path, '/'); i >= 0 {
			seg, next = path[:i], path[i+1:]
			if next == "" { // a trailing slash is no component
				return false
			}
		}
		if !wildmatch(c, seg) {
			return false
		}
		comps, path = comps[1:], next
	}
	return path == ""
}

// wildmatch matches one path component against a glob with *, ?, [...]
// (negated by ! or ^, with ranges) and backslash escapes.
func wildmatch(glob, name string) bool {
	// The common shapes first: "name", "*.ext", "prefix*".
	if !strings.ContainsAny(glob, `*?[\`) {
		return glob == name
	}
	if glob[0] == '*' && !strings.ContainsAny(glob[1:], `*?[\`) {
		return strings.HasSuffix(name, glob[1:])
	}
	var gi, ni int
	starG, starN := -1, -1
	for ni < len(name) {
		if gi < len(glob) {
			switch c := glob[gi]; c {
			case '*':
				for gi < len(glob) && glob[gi] == '*' {
					gi++
				}
				starG, starN = gi, ni
				continue
			case '?':
				gi++
				ni++
				continue
			case '[':
				if ok, width, valid := matchClass(glob[gi:], name[ni]); valid {
					if ok {
						gi += width
						ni++
						continue
					}
				} else if name[ni] == '[' { // an unclosed [ is itself
					gi++
					ni++
					continue
				}
			case '\\':
				if gi+1 < len(glob) && glob[gi+1] == name[ni] {
					gi += 2
					ni++
					continue
				}
			default:
				if c == name[ni] {
					gi++
					ni++
					continue
				}
			}
		}
		if starG < 0 {
			return false
		}
		starN++
		gi, ni = starG, starN
	}
	for gi < len(glob) && glob[gi] == '*' {
		gi++
	}
	return gi == len(glob)
}

// matchClass matches c against the bracket expression at the start of
// glob; width is the expression's length and valid false when it is not
// closed.
func matchClass(glob string, c byte) (ok bool, width int, valid bool) {
	i := 1
	neg := false
	if i < len(glob) && (glob[i] == '!' || glob[i] == '^') {
		neg = true
		i++
	}
	first := true
	for i < len(glob) {
		if glob[i] == ']' && !first {
			return ok != neg, i + 1, true
		}
		first = false
		if strings.HasPrefix(glob[i:], "[:") {
			if j := strings.Index(glob[i+2:], ":]"); j >= 0 {
				ok = ok || inClass(glob[i+2:i+2+j], c)
				i += j + 4
				continue
			}
		}
		lo := glob[i]
		if lo == '\\' && i+1 < len(glob) {
			i++
			lo = glob[i]
		}
		i++
		hi := lo
		if i+1 < len(glob) && glob[i] == '-' && glob[i+1] != ']' {
			hi = glob[i+1]
			if hi == '\\' && i+2 < len(glob) {
				i++
				hi = glob[i+1]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			ok = true
		}
	}
	return false, 0, false
}

func inClass(class string, c byte) bool {
	switch class {
	case "alnum":
		return isAlpha(c) || isDigit(c)
	case "alpha":
		return isAlpha(c)
	case "digit":
		return isDigit(c)
	case "lower":
		return 'a' <= c && c <= 'z'
	case "upper":
		return 'A' <= c && c <= 'Z'
	case "space":
		return c == ' ' || ('\t' <= c && c <= '\r')
	case "blank":
		return c == ' ' || c == '\t'
	case "punct":
		return c > ' ' && c < 0x7f && !isAlpha(c) && !isDigit(c)
	case "xdigit":
		return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
	}
	return false
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// An ignoreNode holds the patterns one folder contributes (its .gitignore
// and .ignore, or a repository's info/exclude, or the global excludes
// file); nodes chain from the deepest folder to the root, and the first
// node with a matching pattern decides.
type ignoreNode struct {
	parent *ignoreNode
	// dir is the patterns' folder relative to the root ("" for the root);
	// above, for folders above the root, is the root's path relative to
	// that folder with a trailing slash (prefixed to paths before
	// matching).
	dir   string
	above string
	pats  []pattern // in file order: the last match wins
}

// ignored reports whether the entry at rel (relative to the root, with
// slashes) is excluded by the chain.
func (n *ignoreNode) ignored(rel, name string, isDir bool) bool {
	for ; n != nil; n = n.parent {
		sub := rel
		switch {
		case n.above != "":
			sub = "" // built only if a pattern needs it
		case n.dir != "":
			sub = rel[len(n.dir)+1:]
		}
		for i := len(n.pats) - 1; i >= 0; i-- {
			p := &n.pats[i]
			if n.above != "" && !p.base && sub == "" {
				sub = n.above + rel
			}
			if p.match(sub, name, isDir) {
				return !p.negate
			}
		}
	}
	return false
}

// parseIgnore reads the patterns of one ignore file's text.
func parseIgnore(data []byte, into []pattern) []pattern {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p, ok := parsePattern(sc.Text()); ok {
			into = append(into, p)
		}
	}
	return into
}

// The ignore files a folder may hold, in increasing precedence (ripgrep's:
// .ignore over .gitignore).
var ignoreNames = [...]string{".gitignore", ".ignore"}

// folderNode reads the ignore files of the folder at abs that the folder's
// listing says are present (has reports a name's presence; nil: look), and
// returns the chain extended by them (or parent when there are none).
func folderNode(parent *ignoreNode, abs, dir, above string, has func(string) bool) *ignoreNode {
	var pats []pattern
	for _, name := range ignoreNames {
		if has != nil && !has(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(abs, name))
		if err != nil {
			continue
		}
		pats = parseIgnore(data, pats)
	}
	if len(pats) == 0 {
		return parent
	}
	return &ignoreNode{parent: parent, dir: dir, above: above, pats: pats}
}

// excludeNode extends the chain by a repository's info/exclude; gitPath is
// the repository's ".git" (a folder, or a file "gitdir: …" for worktrees
// and submodules).
func excludeNode(parent *ignoreNode, gitPath, dir, above string) *ignoreNode {
	gitDir := gitPath
	if fi, err := os.Stat(gitPath); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(gitPath)
		if err != nil {
			return parent
		}
		d, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return parent
		}
		gitDir = strings.TrimSpace(d)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(filepath.Dir(gitPath), gitDir)
		}
		// A linked worktree shares its main repository's info/exclude.
		if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
			gitDir = common
		}
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "info", "exclude"))
	if err != nil {
		return parent
	}
	if pats := parseIgnore(data, nil); len(pats) > 0 {
		return &ignoreNode{parent: parent, dir: dir, above: above, pats: pats}
	}
	return parent
}

// globalExcludes reads git's global excludes file: core.excludesFile from
// $XDG_CONFIG_HOME/git/config and ~/.gitconfig (the latter wins, as in
// git), else $XDG_CONFIG_HOME/git/ignore ($XDG_CONFIG_HOME defaulting to
// ~/.config).
func globalExcludes() []pattern {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var file string
	for _, cfg := range []string{filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")} {
		if xdg == "" && home == "" {
			break
		}
		if v, ok := configExcludesFile(cfg); ok {
			file = v
		}
	}
	switch {
	case file == "" && xdg != "":
		file = filepath.Join(xdg, "git", "ignore")
	case strings.HasPrefix(file, "~/") && home != "":
		file = filepath.Join(home, file[2:])
	}
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return parseIgnore(data, nil)
}

// configExcludesFile finds core.excludesFile in a git config file: the
// last value set wins; include directives are not followed.
func configExcludesFile(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var section, value string
	found := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if section != "core" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "excludesfile") {
			continue
		}
		value, found = configValue(val), true
	}
	return value, found
}

// configValue unquotes a git config value and drops a trailing comment.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
