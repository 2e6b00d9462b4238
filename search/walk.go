package search

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	ws "github.com/ctxls/ctxls/workspace"
)

// An entry is a file the walk found: a regular file, or a symbolic link
// to one inside a root.
type entry struct {
	root int
	abs  string // lexical: under the root as given, through any links
	rel  string // abs relative to the root, with slashes
	name string
	dir  int         // the open folder holding it, or noDir
	real string      // a followed link's target, else ""
	de   fs.DirEntry // from the folder's listing, or nil
	fi   fs.FileInfo // a followed link's target's, or nil
}

// info stats the entry (a link's target for a link).
func (e *entry) info() (fs.FileInfo, error) {
	if e.fi != nil {
		return e.fi, nil
	}
	if e.de != nil {
		return e.de.Info()
	}
	return os.Stat(e.abs)
}

// A dirJob is a folder waiting to be listed.
type dirJob struct {
	root  int
	abs   string
	rel   string
	real  string // with links resolved: for loop checks
	chain *ignoreNode
	seg   *segment
}

// A segment is a stretch of the walk between symbolic links: it starts at
// start (a root's real path or a link's target) and went on to parentEnd
// (the real path of the folder holding the link that left it) when prev
// is its successor's. A link whose target is a folder the walk is inside
// (an ancestor in one of the segments) is a loop and not followed.
type segment struct {
	start     string
	parentEnd string
	prev      *segment
}

func isLoop(job *dirJob, target string) bool {
	end := job.real
	for seg := job.seg; seg != nil; seg = seg.prev {
		if _, in := under(end, target); in {
			if _, in := under(target, seg.start); in {
				return true
			}
		}
		end = seg.parentEnd
	}
	return false
}

// walkStats count what a walk skipped.
type walkStats struct {
	unreadable int // folders and files that could not be read, broken links, special files
	outside    int // links to places outside the workspace
}

// A walker lists folders concurrently (GOMAXPROCS workers taking folders
// from a shared stack) and hands each file to visit on the worker that
// found it. visit must not keep the entry.
type walker struct {
	s     *scope
	visit func(worker int, e *entry)
	// filter, if set, says which files the caller wants (its glob): only
	// those are counted when skipped.
	filter  func(root int, rel, name string) bool
	workers int
	global  []pattern
	done    <-chan struct{}

	mu    sync.Mutex // guards the fields below
	cond  sync.Cond
	stack []*dirJob
	busy  int // workers listing a folder

	stop  atomic.Bool
	stats []walkStats // one per worker
}

// stopped reports a cancelled walk; a worker checks it before each file.
func (w *walker) stopped() bool {
	if w.stop.Load() {
		return true
	}
	select {
	case <-w.done:
		w.stop.Store(true)
		return true
	default:
		return false
	}
}

// counts says whether a skipped file is worth counting.
func (w *walker) counts(root int, rel, name string) bool {
	return w.filter == nil || w.filter(root, rel, name)
}

func newWalker(s *scope, visit func(int, *entry)) *walker {
	n := runtime.GOMAXPROCS(0)
	w := &walker{s: s, visit: visit, workers: n, stats: make([]walkStats, n), global: globalExcludes()}
	w.cond.L = &w.mu
	return w
}

// run walks the scope's starts; it returns ctx's error when cancelled.
func (w *walker) run(ctx context.Context) error {
	stopWatch := context.AfterFunc(ctx, func() {
		w.stop.Store(true)
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stopWatch()
	w.done = ctx.Done()
	if w.stopped() {
		return ctx.Err()
	}
	for _, st := range w.s.starts {
		if st.missing {
			continue
		}
		rootSeg := &segment{start: st.real}
		if _, in := under(st.real, w.s.roots[st.root].real); in {
			rootSeg.start = w.s.roots[st.root].real
		}
		if st.isDir {
			chain := w.chainTo(st.root, st.rel)
			w.stack = append(w.stack, &dirJob{root: st.root, abs: st.abs, rel: st.rel, real: st.real, chain: chain, seg: rootSeg})
			continue
		}
		e := &entry{root: st.root, abs: st.abs, rel: st.rel, name: filepath.Base(st.abs), dir: noDir}
		if st.real != st.abs {
			e.real = st.real
		}
		w.visit(0, e)
	}
	var wg sync.WaitGroup
	for i := range w.workers {
		wg.Go(func() { w.work(i) })
	}
	wg.Wait()
	if w.stop.Load() {
		return ctx.Err()
	}
	return nil
}

func (w *walker) work(id int) {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.busy > 0 && !w.stopped() {
			w.cond.Wait()
		}
		if len(w.stack) == 0 || w.stopped() {
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		job := w.stack[len(w.stack)-1]
		w.stack[len(w.stack)-1] = nil
		w.stack = w.stack[:len(w.stack)-1]
		w.busy++
		w.mu.Unlock()

		w.dir(id, job)

		w.mu.Lock()
		w.busy--
		if w.busy == 0 && len(w.stack) == 0 {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

// push hands folders to the other workers.
func (w *walker) push(jobs []*dirJob) {
	if len(jobs) == 0 {
		return
	}
	w.mu.Lock()
	// Reversed so that the stack pops them in listing order.
	for i := len(jobs) - 1; i >= 0; i-- {
		w.stack = append(w.stack, jobs[i])
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// dir lists one folder: its subfolders go on the stack first, then its
// files are visited.
func (w *walker) dir(id int, job *dirJob) {
	st := &w.stats[id]
	f, err := os.Open(job.abs)
	if err != nil {
		st.unreadable++
		return
	}
	defer f.Close() // after the files are read
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		st.unreadable++
		return
	}
	dirfd := int(f.Fd())
	has := func(name string) bool {
		for _, e := range ents {
			if e.Name() == name {
				return true
			}
		}
		return false
	}
	chain := job.chain
	if has(".git") {
		chain = excludeNode(chain, filepath.Join(job.abs, ".git"), job.rel, "")
	}
	if has(".gitignore") || has(".ignore") {
		chain = folderNode(chain, job.abs, job.rel, "", has)
	}
	prefix := job.abs + string(filepath.Separator)
	realPrefix := job.real + string(filepath.Separator)
	if strings.HasSuffix(job.real, string(filepath.Separator)) { // a root at /
		realPrefix = job.real
	}
	relPrefix := ""
	if job.rel != "" {
		relPrefix = job.rel + "/"
	}
	var subdirs []*dirJob
	var files []entry
	for _, de := range ents {
		if w.stopped() {
			return
		}
		name := de.Name()
		if name == ".git" {
			continue
		}
		abs := prefix + name
		rel := relPrefix + name
		typ := de.Type()
		switch {
		case typ.IsDir():
			real := realPrefix + name
			if chain.ignored(rel, name, true) || ws.SystemPath(real) {
				continue
			}
			subdirs = append(subdirs, &dirJob{root: job.root, abs: abs, rel: rel, real: real, chain: chain, seg: job.seg})
		case typ.IsRegular():
			if chain.ignored(rel, name, false) {
				continue
			}
			files = append(files, entry{root: job.root, abs: abs, rel: rel, name: name, dir: dirfd, de: de})
		case typ&fs.ModeSymlink != 0:
			fi, err := os.Stat(abs)
			if err != nil { // broken, or a loop of links
				if !chain.ignored(rel, name, false) && w.counts(job.root, rel, name) {
					st.unreadable++
				}
				continue
			}
			if chain.ignored(rel, name, fi.IsDir()) {
				continue
			}
			real, err := filepath.EvalSymlinks(abs)
			if err != nil {
				if fi.IsDir() || w.counts(job.root, rel, name) {
					st.unreadable++
				}
				continue
			}
			if ws.SystemPath(real) { // a root at / holds them; never entered
				continue
			}
			if w.s.realRoot(real) < 0 {
				if fi.IsDir() || w.counts(job.root, rel, name) {
					st.outside++
				}
				continue
			}
			switch {
			case fi.IsDir():
				if isLoop(job, real) {
					continue
				}
				seg := &segment{start: real, parentEnd: job.real, prev: job.seg}
				subdirs = append(subdirs, &dirJob{root: job.root, abs: abs, rel: rel, real: real, chain: chain, seg: seg})
			case fi.Mode().IsRegular():
				files = append(files, entry{root: job.root, abs: abs, rel: rel, name: name, dir: dirfd, real: real, fi: fi})
			default:
				if w.counts(job.root, rel, name) {
					st.unreadable++
				}
			}
		default: // sockets, pipes, devices: never opened
			if !chain.ignored(rel, name, false) && w.counts(job.root, rel, name) {
				st.unreadable++
			}
		}
	}
	w.push(subdirs)
	for i := range files {
		if w.stopped() {
			return
		}
		w.visit(id, &files[i])
	}
}

func readDir(abs string) ([]fs.DirEntry, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// chainTo builds the ignore rules that apply to the entry at rel: those of
// the root's repository above the root (when the root is inside one), the
// global excludes, and each of the entry's folders from the root down (a
// folder's own ignore files are read when the walk lists it).
func (w *walker) chainTo(ri int, rel string) *ignoreNode {
	r := &w.s.roots[ri]
	chain := w.aboveRoot(r)
	if rel == "" {
		return chain
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		d := strings.Join(parts[:i], "/")
		abs := filepath.Join(r.abs, filepath.FromSlash(d))
		if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
			chain = excludeNode(chain, filepath.Join(abs, ".git"), d, "")
		}
		chain = folderNode(chain, abs, d, "", nil)
	}
	return chain
}

// aboveRoot is the chain for a root: the global excludes and, when the
// root is inside a repository (not its top), the repository's
// info/exclude and the ignore files of the folders from its top down to
// the root's parent.
func (w *walker) aboveRoot(r *root) *ignoreNode {
	if _, err := os.Lstat(filepath.Join(r.real, ".git")); err != nil {
		var chain []string // folders above the root, nearest first
		top := ""
		for d := filepath.Dir(r.real); ; d = filepath.Dir(d) {
			chain = append(chain, d)
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				top = d
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if top != "" {
			aboveOf := func(d string) string {
				rel, _ := under(r.real, d)
				return rel + "/"
			}
			var node *ignoreNode
			if len(w.global) > 0 {
				node = &ignoreNode{above: aboveOf(top), pats: w.global}
			}
			node = excludeNode(node, filepath.Join(top, ".git"), "", aboveOf(top))
			for i := len(chain) - 1; i >= 0; i-- {
				node = folderNode(node, chain[i], "", aboveOf(chain[i]), nil)
			}
			return node
		}
	}
	if len(w.global) > 0 {
		return &ignoreNode{pats: w.global}
	}
	return nil
}

// ignoredPath applies the ignore rules to a path that may not exist (an
// unsaved buffer's), folder by folder from the root down, below from (a
// folder named explicitly, whose own rules do not apply to it).
func (w *walker) ignoredPath(ri int, rel, from string) bool {
	parts := strings.Split(rel, "/")
	for i := range parts {
		if parts[i] == ".git" {
			return true
		}
		sub := strings.Join(parts[:i+1], "/")
		if _, in := under(from, sub); in && from != "" {
			continue
		}
		chain := w.chainTo(ri, sub)
		if chain.ignored(sub, parts[i], i < len(parts)-1) {
			return true
		}
	}
	return false
}
