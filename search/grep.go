package search

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxls/ctxls/internal/human"
)

// GrepQuery is what Grep looks for.
type GrepQuery struct {
	// Pattern is a Go (RE2) regular expression, matched against each line.
	Pattern string
	// Glob, optional, keeps only the files it matches (see Find).
	Glob string
	// IgnoreCase matches letters in either case.
	IgnoreCase bool
	// ContextLines shows that many lines before and after each match
	// (at most maxContext).
	ContextLines int
}

const (
	// maxLine is how much of a long line is shown, around the match.
	maxLine = 300
	// maxContext caps GrepQuery.ContextLines.
	maxContext = 10
	// binaryProbe: a NUL byte in a file's first binaryProbe bytes makes
	// it binary.
	binaryProbe = 8 << 10
	// keepBuffer: a worker keeps its read buffer for the next file up to
	// this size.
	keepBuffer = 1 << 20
)

// Line is a line of Grep's output.
type Line struct {
	Number int    // 1-based
	Text   string // without the line break; a long line cut around its match, marked with …
	Match  bool   // false for a context line
	// Unsaved: the match is in the editor's unsaved text and not in the
	// file on disk.
	Unsaved bool
}

// FileMatches are one file's matching lines.
type FileMatches struct {
	Path    string // as results show paths
	Matches int    // matching lines in the file
	Lines   []Line // the lines shown: matches and context, in order
}

// GrepResult is what Grep found.
type GrepResult struct {
	Files        []FileMatches // the files shown, by path
	Matches      int           // matching lines in every file
	FilesMatched int           // files with a matching line
	Shown        int           // matching lines in the text
	Skipped      Skipped
	text         string
}

// String is the text the model gets.
func (r *GrepResult) String() string { return r.text }

// Summary is one line for the user: "12 matches in 4 files".
func (r *GrepResult) Summary() string {
	if r.Matches == 0 {
		return "no matches"
	}
	s := count(r.Matches, "match", "matches") + " in " + count(r.FilesMatched, "file", "files")
	if r.Shown < r.Matches {
		s += " (" + human.Thousands(r.Shown) + " shown)"
	}
	return s
}

// Grep searches the files of the scope for lines matching q: open buffers
// with their current text, every other file from the disk.
func Grep(ctx context.Context, opts Options, q GrepQuery, ov Overlay) (*GrepResult, error) {
	m, err := newMatcher(q.Pattern, q.IgnoreCase)
	if err != nil {
		return nil, err
	}
	var glob *globber
	if q.Glob != "" {
		if glob, err = newGlobber(q.Glob); err != nil {
			return nil, err
		}
	}
	s, err := newScope(opts, defaultGrepResults, ov)
	if err != nil {
		return nil, err
	}
	g := &grepper{s: s, m: m, glob: glob, context: min(max(q.ContextLines, 0), maxContext)}
	g.col.max = s.maxResults
	g.bufs = overlayIn(s, ov)
	w := newWalker(s, g.visit)
	if glob != nil {
		w.filter = g.globMatch
	}
	g.workers = make([]grepWorker, w.workers)
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	g.newFiles(ctx, w)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g.result(w), nil
}

// A grepper is one Grep call's state.
type grepper struct {
	s       *scope
	m       *matcher
	glob    *globber
	context int
	bufs    map[string]*buffer // open buffers in the roots, by absolute path
	workers []grepWorker
	col     collector
}

// A grepWorker is a walk worker's scratch space and counts.
type grepWorker struct {
	buf, disk []byte
	spans     []span
	skipped   Skipped
}

// A buffer is an open buffer under a root.
type buffer struct {
	root    int
	rel     string
	abs     string
	text    string
	visited atomic.Bool // the walk met its file on disk
}

// overlayIn collects the open buffers under the roots.
func overlayIn(s *scope, ov Overlay) map[string]*buffer {
	if ov == nil {
		return nil
	}
	bufs := map[string]*buffer{}
	ov.Each(func(p, text string) bool {
		if !isAbs(p) {
			return true
		}
		ri, rel, ok := s.rootOf(cleanPath(p))
		if !ok {
			return true
		}
		abs := joinRel(s.roots[ri].abs, rel)
		bufs[abs] = &buffer{root: ri, rel: rel, abs: abs, text: text}
		return true
	})
	return bufs
}

// explicitFile: Path names a file, searched whatever the glob says.
func (g *grepper) explicitFile() bool {
	return g.s.explicit && !g.s.starts[0].isDir
}

// fromStart is rel relative to Options.Path when that is a folder under
// the root, for globs.
func (s *scope) fromStart(ri int, rel string) string {
	if !s.explicit || len(s.starts) != 1 {
		return ""
	}
	st := s.starts[0]
	if st.root != ri || st.rel == "" || !st.isDir {
		return ""
	}
	if r, ok := strings.CutPrefix(rel, st.rel+"/"); ok {
		return r
	}
	return ""
}

func (g *grepper) globMatch(ri int, rel, name string) bool {
	if g.glob == nil || g.explicitFile() {
		return true
	}
	if g.glob.base {
		return g.glob.match(name, rel, rel, "")
	}
	return g.glob.match(name, rel, g.s.roots[ri].display(rel), g.s.fromStart(ri, rel))
}

func (g *grepper) visit(id int, e *entry) {
	wk := &g.workers[id]
	if !g.globMatch(e.root, e.rel, e.name) {
		return
	}
	if g.s.withheld(e.abs, e.real) {
		wk.skipped.Withheld++
		return
	}
	if b := g.bufs[e.abs]; b != nil {
		b.visited.Store(true)
		g.searchBuffer(wk, b, true)
		return
	}
	data, _, err := readFile(e.dir, e.name, e.abs, wk.buf, g.s.maxFileSize)
	if cap(data) <= keepBuffer {
		wk.buf = data[:0]
	} else {
		wk.buf = nil
	}
	switch {
	case err == errTooLarge:
		wk.skipped.TooLarge++
		return
	case err != nil:
		wk.skipped.Unreadable++
		return
	case isBinary(data):
		wk.skipped.Binary++
		return
	}
	g.search(wk, e.root, e.rel, data, nil)
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
}

// searchBuffer searches an open buffer's text; onDisk says its file exists.
func (g *grepper) searchBuffer(wk *grepWorker, b *buffer, onDisk bool) {
	if int64(len(b.text)) > g.s.maxFileSize {
		wk.skipped.TooLarge++
		return
	}
	// Read, never written: the text is searched where it lies.
	data := unsafe.Slice(unsafe.StringData(b.text), len(b.text))
	g.search(wk, b.root, b.rel, data, func(spans []span) []bool {
		return g.unsaved(wk, b, data, spans, onDisk)
	})
}

// unsaved marks the buffer's matching lines that the file on disk does
// not have: a matching line is saved when the disk's matching lines hold
// one with the same text (each used once).
func (g *grepper) unsaved(wk *grepWorker, b *buffer, data []byte, spans []span, onDisk bool) []bool {
	marks := make([]bool, len(spans))
	var disk []byte
	var err error
	if onDisk {
		disk, _, err = readFile(noDir, "", b.abs, wk.disk, g.s.maxFileSize)
		if cap(disk) <= keepBuffer {
			wk.disk = disk[:0]
		} else {
			wk.disk = nil
		}
	}
	if !onDisk || err != nil {
		for i := range marks {
			marks[i] = true
		}
		return marks
	}
	if bytes.Equal(disk, data) {
		return marks
	}
	saved := map[string]int{}
	g.m.scan(disk, func(sp span) { saved[string(disk[sp.start:sp.end])]++ })
	for i, sp := range spans {
		line := string(data[sp.start:sp.end])
		if saved[line] > 0 {
			saved[line]--
			continue
		}
		marks[i] = true
	}
	return marks
}

// search finds the matching lines of one file's text and hands them to
// the collector; marks, for an open buffer, says which are unsaved.
func (g *grepper) search(wk *grepWorker, ri int, rel string, data []byte, marks func([]span) []bool) {
	spans := wk.spans[:0]
	n := 0
	limit := g.s.maxResults
	g.m.scan(data, func(sp span) {
		n++
		if len(spans) < limit {
			spans = append(spans, sp)
		}
	})
	wk.spans = spans[:0]
	if n == 0 {
		return
	}
	if g.s.withholdText != nil && g.s.withholdText(data) {
		wk.skipped.Withheld++
		return
	}
	key := fileKey{ri, rel}
	f := &fileResult{key: key, matches: n}
	if g.col.wants(key) {
		var unsaved []bool
		if marks != nil {
			unsaved = marks(spans)
		}
		f.lines = g.lines(data, spans, unsaved)
	}
	g.col.add(f)
}

// lines turns matching spans into lines with their numbers and context.
func (g *grepper) lines(data []byte, spans []span, unsaved []bool) []Line {
	out := make([]Line, 0, len(spans)*(1+2*g.context))
	c := g.context
	lineNo, pos := 1, 0 // lineNo is the number of the line starting at pos
	last := 0           // the last line number emitted
	for i, sp := range spans {
		lineNo += bytes.Count(data[pos:sp.start], []byte{'\n'})
		pos = sp.start
		if c > 0 {
			var starts [maxContext]int
			k, s, n := 0, sp.start, lineNo
			for k < c && n-1 > last && s > 0 {
				s = bytes.LastIndexByte(data[:s-1], '\n') + 1
				starts[k] = s
				k++
				n--
			}
			for j := k - 1; j >= 0; j-- {
				out = append(out, Line{Number: lineNo - j - 1, Text: lineText(data, starts[j], -1, -1)})
			}
		}
		at := sp.at
		if at < 0 && sp.end-sp.start > maxLine {
			if loc := g.m.re.FindIndex(data[sp.start:sp.end]); loc != nil {
				at = loc[0]
			}
		}
		out = append(out, Line{Number: lineNo, Text: lineText(data, sp.start, sp.end, at), Match: true, Unsaved: unsaved != nil && unsaved[i]})
		last = lineNo
		if c > 0 {
			next := len(data)
			if i+1 < len(spans) {
				next = spans[i+1].start
			}
			s := len(data)
			if j := bytes.IndexByte(data[sp.end:], '\n'); j >= 0 {
				s = sp.end + j + 1
			}
			for k := 0; k < c && s < next; k++ {
				last++
				out = append(out, Line{Number: last, Text: lineText(data, s, -1, -1)})
				if j := bytes.IndexByte(data[s:], '\n'); j >= 0 {
					s += j + 1
				} else {
					s = len(data)
				}
			}
		}
	}
	return out
}

// lineText is the line starting at start (ending at end, or at its line
// break when end < 0) as shown: without a carriage return, invalid UTF-8
// replaced, a long line cut to maxLine bytes around at (the match).
func lineText(data []byte, start, end, at int) string {
	if end < 0 {
		end = len(data)
		if j := bytes.IndexByte(data[start:], '\n'); j >= 0 {
			end = start + j
		}
		if end > start && data[end-1] == '\r' {
			end--
		}
	}
	line := data[start:end]
	pre, post := "", ""
	if len(line) > maxLine {
		from := 0
		if at > maxLine/3 {
			from = at - maxLine/3
		}
		to := min(from+maxLine, len(line))
		from = max(0, to-maxLine)
		for from > 0 && from < len(line) && !utf8.RuneStart(line[from]) {
			from++
		}
		for to < len(line) && to > from && !utf8.RuneStart(line[to]) {
			to--
		}
		if from > 0 {
			pre = "…"
		}
		if to < len(line) {
			post = "…"
		}
		line = line[from:to]
	}
	var s string
	if utf8.Valid(line) {
		s = string(line)
	} else {
		s = string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
	}
	if pre != "" || post != "" {
		s = pre + s + post
	}
	return s
}

// newFiles searches open buffers whose files are not on disk (new, unsaved
// files) that lie in the scope and are not ignored.
func (g *grepper) newFiles(ctx context.Context, w *walker) {
	var keys []string
	for k, b := range g.bufs {
		if !b.visited.Load() {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	wk := &g.workers[0]
	for _, k := range keys {
		if ctx.Err() != nil {
			return
		}
		b := g.bufs[k]
		if !g.s.inStarts(b.root, b.rel) {
			continue
		}
		if _, err := os.Lstat(b.abs); err == nil {
			continue // on disk, and left out by the rules
		}
		from := ""
		if g.s.explicit {
			from = g.s.starts[0].rel
		}
		if w.ignoredPath(b.root, b.rel, from) {
			continue
		}
		if !g.globMatch(b.root, b.rel, baseName(b.rel)) {
			continue
		}
		if g.s.withheld(b.abs, "") {
			wk.skipped.Withheld++
			continue
		}
		g.searchBuffer(wk, b, false)
	}
}

// inStarts reports whether the path is in the scope.
func (s *scope) inStarts(ri int, rel string) bool {
	for _, st := range s.starts {
		if st.root != ri {
			continue
		}
		if st.rel == "" || rel == st.rel || strings.HasPrefix(rel, st.rel+"/") {
			return true
		}
	}
	return false
}

// result sorts what was found and writes the text.
func (g *grepper) result(w *walker) *GrepResult {
	r := &GrepResult{Matches: g.col.matches, FilesMatched: g.col.files}
	r.Skipped.maxSize = g.s.maxFileSize
	for i := range g.workers {
		r.Skipped.add(g.workers[i].skipped)
	}
	for _, st := range w.stats {
		r.Skipped.Unreadable += st.unreadable
		r.Skipped.Outside += st.outside
	}
	files := g.col.stored
	slices.SortFunc(files, func(a, b *fileResult) int { return a.key.compare(b.key) })
	// Room kept for the notes at the end.
	budget := max(g.s.maxBytes-footerRoom, g.s.maxBytes/2)
	var b strings.Builder
	for _, f := range files {
		path := g.s.roots[f.key.root].display(f.key.rel)
		fm := FileMatches{Path: path, Matches: f.matches}
		var text []string // fm.Lines as shown
		size := 0
		if b.Len() > 0 {
			size = 1 // the blank line between files
		}
		stop := false
		here := 0 // matches in fm.Lines
		for _, l := range f.lines {
			if l.Match && r.Shown+here == g.s.maxResults {
				stop = true
				break
			}
			t := g.lineString(path, l, fm.Lines)
			if b.Len()+size+len(t) > budget {
				stop = true
				break
			}
			text = append(text, t)
			fm.Lines = append(fm.Lines, l)
			size += len(t)
			if l.Match {
				here++
			}
		}
		if stop {
			// Keep the last shown match's context after it, not the
			// context before the next one.
			keep := len(fm.Lines)
			for keep > 0 && !fm.Lines[keep-1].Match {
				keep--
			}
			if keep > 0 {
				lastMatch := fm.Lines[keep-1].Number
				for keep < len(fm.Lines) && fm.Lines[keep].Number <= lastMatch+g.context {
					keep++
				}
			}
			fm.Lines, text = fm.Lines[:keep], text[:keep]
		}
		if n := countMatches(fm.Lines); n > 0 {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			for _, t := range text {
				b.WriteString(t)
			}
			r.Shown += n
			r.Files = append(r.Files, fm)
		}
		if stop {
			break
		}
	}
	if r.Matches == 0 {
		b.WriteString("No matches.\n")
	}
	if left := r.Matches - r.Shown; left > 0 {
		// Files with a match not shown.
		nf := r.FilesMatched - len(r.Files)
		if n := len(r.Files); n > 0 {
			last := r.Files[n-1]
			if countMatches(last.Lines) < last.Matches {
				nf++
			}
		}
		b.WriteString("\n[" + count(left, "more match", "more matches") + " in " + count(nf, "file", "files") +
			" not shown: narrow the search with a path or a glob, or a more specific pattern]\n")
	}
	if s := r.Skipped.String(); s != "" {
		b.WriteString("\n(" + s + ")\n")
	}
	r.text = b.String()
	return r
}

// footerRoom is kept free of matches under MaxBytes, for the notes on
// what was left out and skipped.
const footerRoom = 400

// lineString formats a line: "path:12: text" for a match, "path-11- text"
// for context, after "--" when lines were skipped since the file's
// previous line shown.
func (g *grepper) lineString(path string, l Line, before []Line) string {
	var b strings.Builder
	if g.context > 0 && len(before) > 0 && l.Number > before[len(before)-1].Number+1 {
		b.WriteString("--\n")
	}
	sep := byte('-')
	if l.Match {
		sep = ':'
	}
	b.WriteString(path)
	b.WriteByte(sep)
	b.WriteString(itoa(l.Number))
	b.WriteByte(sep)
	b.WriteByte(' ')
	b.WriteString(l.Text)
	if l.Unsaved {
		b.WriteString("  (unsaved)")
	}
	b.WriteByte('\n')
	return b.String()
}

func countMatches(lines []Line) int {
	n := 0
	for _, l := range lines {
		if l.Match {
			n++
		}
	}
	return n
}
