package chat

import (
	"os"
	"slices"
	"strconv"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// QuestionFiles is a question's files, absolute, and the lines the user
// selected in them: the ones the client sent, then each file the message
// mentions ("@auth/login.go", "@main.go:5-8", see workspace.Mentions) that
// is not among them; an item "main.go:5-8" that names no file is main.go
// with those lines.
func QuestionFiles(sent []string, message string, roots []string) ([]string, map[string]Lines, error) {
	return turnFiles(withMentions(sent, message, roots), roots)
}

// withMentions is a turn's files: the ones the client sent, then each file
// the message mentions ("@auth/login.go", "@main.go:5-8", see
// workspace.Mentions) that is not among them, as turnFiles takes them.
func withMentions(files []string, message string, roots []string) []string {
	out := files
	for _, item := range workspace.Mentions(message, roots, maxMentions) {
		if !slices.Contains(out, item) {
			out = append(slices.Clip(out), item)
		}
	}
	return out
}

// maxMentions caps the files one message's mentions send.
const maxMentions = 20

// turnFiles normalises a turn's files to absolute paths, and reads the
// lines a file names (main.go:5-8: the user's selection) into lines.
func turnFiles(items, roots []string) (files []string, lines map[string]Lines, err error) {
	files = make([]string, 0, len(items))
	for _, f := range items {
		var sel *Lines
		if m := workspace.LineRange.FindStringSubmatch(f); m != nil {
			if _, statErr := os.Stat(f); statErr != nil { // not a file named so
				first, _ := strconv.Atoi(m[2])
				last := first
				if m[3] != "" {
					last, _ = strconv.Atoi(m[3])
				}
				if last < first {
					return nil, nil, api.Errorf(api.KindInvalidArgument, "files: %q: the lines end before they start", f)
				}
				f, sel = m[1], &Lines{First: first, Last: last}
			}
		}
		p, err := session.NormalizeFileItem(f, roots)
		if err != nil {
			return nil, nil, err
		}
		if slices.Contains(files, p) { // sent and mentioned, say: once, with the first one's lines
			continue
		}
		files = append(files, p)
		if sel != nil {
			if lines == nil {
				lines = map[string]Lines{}
			}
			lines[p] = *sel
		}
	}
	return files, lines, nil
}
