// Package search is the engine behind the model's tools grep, find_files
// and list_directory: it searches, finds and lists files in the
// workspace folders, as the editor sees them.
//
//	Grep(ctx, opts, GrepQuery{Pattern, Glob, IgnoreCase, ContextLines}, overlay) (*GrepResult, error)
//	Find(ctx, opts, glob) (*FindResult, error)   // files, most recently modified first
//	List(ctx, opts) (*ListResult, error)         // a folder's entries
//
// Each result's String is the text the model gets and Summary one line for
// the user's tool card ("12 matches in 4 files", "37 files", "14
// entries"); the exported fields carry the same facts for callers.
//
// # Where
//
// Options.Roots are the workspace folders; nothing outside them is read or
// listed. Options.Path narrows to a folder or file under a root (absolute,
// or relative to the first root); a path that leaves the roots, by ".." or
// through a symbolic link, is an error. Paths in results are relative to
// the root they are under; with several roots they start with the root's
// folder name ("api/main.go"), or with the root's absolute path when two
// roots share a name, and Path accepts them in that form.
//
// What is searched: every file under the roots except
//   - what .gitignore files (at every level, with negation, folder-only
//     patterns, anchors and **), .ignore files (same syntax, and taking
//     precedence over .gitignore as in ripgrep), .git/info/exclude and git's
//     global excludes file (core.excludesFile in ~/.gitconfig or
//     $XDG_CONFIG_HOME/git/config, by default $XDG_CONFIG_HOME/git/ignore
//     or ~/.config/git/ignore) exclude. The rules of the repository a root
//     sits inside apply from the repository's top. A Path named
//     explicitly is searched even when ignored; the rules still apply
//     inside it. Hidden files are searched.
//   - .git folders, never entered.
//   - /proc, /sys and /dev (a workspace folder at / holds them), never
//     entered, by a link either; a Path there is an error.
//   - symbolic links whose target is outside every root (counted); links
//     inside are followed, and a link to a folder the walk is already
//     inside (a loop) is not.
//   - for Grep: binary files (a NUL byte in the first 8 KiB), files over
//     Options.MaxFileSize, unreadable files and folders, pipes and other
//     special files (never opened), and files Options.Withhold holds back:
//     all counted and reported, never an error for the whole search.
//
// Withheld files: Grep never returns their text; Find and List show their
// names (List marks them withheld), never their text.
//
// # Grep
//
// The pattern is a Go (RE2) regular expression matched against each line
// (a pattern with a literal line break is an error). Output, ripgrep's
// style, files in path order with a blank line between them:
//
//	search/grep.go:12: func Grep(
//	search/grep.go-13- 	ctx context.Context,
//	--
//	search/grep.go:80: 	return Grep(  (unsaved)
//
// Matches are lines ("path:line: text"), context lines "path-line- text",
// "--" between separate groups. Lines are shown without a carriage return,
// invalid UTF-8 replaced with U+FFFD, and cut to 300 bytes around the
// match. The editor's open buffers (Overlay) are searched with their
// current text instead of the file on disk; a matching line that the disk
// does not have (by text) is marked "(unsaved)", and a match the unsaved
// text removed is not shown. Open buffers of files not on disk (new,
// unsaved files) under the roots are searched too, when not ignored.
// Options.MaxResults caps the matching lines shown (default 100) and
// MaxBytes the text (default 64 KiB); every match is still counted, and
// the text ends with how many were left out and how to narrow the search.
//
// # Find and List
//
// Find's glob uses doublestar's syntax (*, ?, [...], {a,b}, ** for any
// number of folders): without a slash ("*.go", "**/*.go") it matches file
// names at any depth, with one a path relative to the root (or as results
// show it, or relative to Path). Files only, most recently modified first,
// then by path; files on disk only (an unsaved new file's buffer is not
// listed). List shows a folder's entries, folders first ("name/"),
// files with their size, links with their target; entries the ignore rules
// exclude are counted, not shown. With several roots and no Path, List
// shows the roots.
//
// # How
//
// The walk runs GOMAXPROCS workers that take folders from a shared stack,
// push the subfolders they list and search the files they find on the
// spot, reading each into the worker's reused buffer with plain system
// calls. A pattern whose matches all contain some literal text (found in
// its syntax tree: "Handler(" in `func \w+Handler\(`) is searched for with
// bytes.Index over the whole file, and the expression runs only on the
// lines holding that text, or not at all when the pattern is that text;
// case-insensitive literals are searched in an ASCII lower-cased copy.
// Other patterns run line by line. The collector counts every match but
// keeps only the lines that can be shown, so memory stays flat however
// many lines match. Find keeps the MaxResults most recent files per
// worker in a heap.
//
// # Libraries
//
// Globs are github.com/bmatcuk/doublestar/v4 (small, no dependencies).
// The gitignore rules are our own (ignore.go, about 450 lines with git's
// config lookup, following `man gitignore`) rather than go-git's
// plumbing/format/gitignore (v5.19.3). That package links go-billy, gcfg,
// x/net/context and six more packages (about 0.8 MB of binary) into a
// daemon whose start-up is benchmarked against a minimal server; its
// ReadPatterns walks the whole tree through go-billy to gather every
// .gitignore before matching, a second walk beside ours, and knows no
// .ignore files; its Match takes a path split into a slice. Ours reads a
// folder's ignore files when the walk lists it (only when the listing
// shows them) and matches a path's suffix in place, with fast paths for
// the common "name" and "*.ext" patterns.
package search
