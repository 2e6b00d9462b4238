package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// The files the model reads (the workspace's, the session folder's) and
// writes (its outputs, into the session folder).

// maxReadBytes is how much read_file returns.
const maxReadBytes = 256 << 10

type readFileArgs struct {
	Path string `json:"path"`
}

var readFileTool = define(Tool{
	Name:        "read_file",
	Kind:        "read",
	Description: "Read a file: sources/NAME for files uploaded to the session, a path relative to the workspace, or an absolute path inside the workspace or the session folder.",
	ReadOnly:    true,
}, nil, func(ctx context.Context, c *Call, a readFileArgs) (string, error) {
	p := a.Path
	if p == "" {
		return "", errors.New("path is required")
	}
	if err := workspace.CheckPath(p); err != nil {
		return "", err
	}
	tt := c.TT
	var path string
	switch {
	case strings.HasPrefix(p, "sources/") || strings.HasPrefix(p, "results/") || strings.HasPrefix(p, "scripts/") || strings.HasPrefix(p, "data/"):
		path = filepath.Join(tt.Folder(), filepath.Clean("/" + p)[1:])
	case filepath.IsAbs(p):
		path = filepath.Clean(p)
	case len(tt.Roots) > 0:
		path = filepath.Join(tt.Roots[0], p)
	default:
		return "", errors.New("relative path with no workspace folder")
	}
	if why := tt.Refusal(path); why != "" {
		return "", fmt.Errorf("%s %s", p, why)
	}
	c.emit(chat.Activity{Message: "reading " + filepath.Base(path)})
	content, ok := tt.Buffers.TextByPath(path)
	if !ok {
		data, err := workspace.ReadLimited(path, maxReadBytes+1)
		if err != nil {
			return "", fmt.Errorf("cannot read %s: %v", p, err)
		}
		content = data
	}
	if tt.Withheld(path, content) {
		return "", fmt.Errorf("%s looks like it holds secrets and is withheld; the user can add it by name", p)
	}
	onDisk := path
	if ok {
		onDisk = "" // the editor's text
	}
	if note := workspace.BinaryNote(p, onDisk, content); note != "" {
		return note, nil
	}
	if len(content) > maxReadBytes {
		content = content[:maxReadBytes] + fmt.Sprintf("\n[truncated: first %d bytes shown]", maxReadBytes)
	}
	return content, nil
})

type listSessionFilesArgs struct {
	Subdir string `json:"subdir,omitempty"`
}

var listSessionFilesTool = define(Tool{
	Name:        "list_session_files",
	Kind:        "read",
	Description: "List the files in one folder of the session folder: sources (uploaded by the user, the default), results, scripts or data. Files in folders below results, scripts and data are listed as sub/name.",
	ReadOnly:    true,
}, map[string][]string{"subdir": session.Subdirs}, func(ctx context.Context, c *Call, a listSessionFilesArgs) (string, error) {
	names, err := c.store().ListFiles(ctx, c.TT.SessionID, a.Subdir)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(names)
	return string(b), nil
})

type writeFileArgs struct {
	Path    string  `json:"path" jsonschema:"results/NAME, scripts/NAME, data/NAME, or a bare NAME for results/"`
	Content *string `json:"content" jsonschema:"the whole content of the file"`
}

var writeFileTool = func() Tool {
	t := define(Tool{
		Name: "write_file",
		Kind: "edit",
		Description: "Write a text file into the session folder: results/NAME for final outputs (the default: a bare NAME goes there), scripts/NAME for programs you write, data/NAME for intermediate data. " +
			"Folders below those are made as needed (results/charts/q1.csv). An existing file is replaced. sources/ holds the user's files and cannot be written; nothing outside the session folder can. At most 25 MiB.",
	}, nil, writeFile)
	t.stored = storedWrite
	return t
}()

// writeFile runs write_file: the store checks the path and writes; the
// client is told with FilesChanged.
func writeFile(ctx context.Context, c *Call, a writeFileArgs) (string, error) {
	if a.Content == nil {
		return "", errors.New("content is required (an empty string for an empty file)")
	}
	if err := workspace.CheckPath(a.Path); err != nil {
		return "", err
	}
	if sub, name, err := session.ParseOutputPath(a.Path); err == nil {
		c.emit(chat.Activity{Message: "writing " + sub + "/" + name})
	}
	w, err := c.write(ctx, a.Path, *a.Content)
	if err != nil {
		return "", err
	}
	c.emit(chat.FilesChanged{SessionID: c.TT.SessionID, Subdir: w.Subdir, Name: w.Name, Size: w.Size, By: session.AddedByModel})
	verb := "created"
	if w.Replaced {
		verb = "replaced the existing file"
	}
	return fmt.Sprintf("%s %s/%s (%s)", verb, w.Subdir, w.Name, session.Bytes(w.Size)), nil
}

// write writes a model's output: through the turn's WriteFile when the
// front door has one (an ACP client's fs/write_text_file, so the editor
// sees the file change), else, or when that fails, straight to the disk.
func (c *Call) write(ctx context.Context, path, content string) (*session.Written, error) {
	st, id := c.store(), c.TT.SessionID
	if c.TT.WriteFile != nil {
		target, w, err := st.OutputTarget(ctx, id, path, int64(len(content)))
		if err != nil {
			return nil, err
		}
		werr := c.TT.WriteFile(ctx, target, content)
		if werr == nil {
			// A store whose folders mirror a database takes the content too.
			werr = st.OutputWritten(ctx, id, path, []byte(content))
		}
		if werr == nil {
			return w, nil
		}
		c.box.log.Info("the front door's write failed; writing to the disk", "path", target, "err", werr)
	}
	return st.WriteOutput(ctx, id, path, []byte(content))
}

// storedWrite is what is stored of write_file's arguments: its content
// becomes a note of its size, since the file itself is in the session
// folder. Stored whole, a 25 MiB output was kept twice more, in the
// database and in history.md (re-rendered on every message change).
func storedWrite(args string) string {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil {
		return args
	}
	content, ok := a["content"].(string)
	if !ok {
		return args
	}
	a["content"] = fmt.Sprintf("[%s, not stored here: see the file]", session.Bytes(int64(len(content))))
	b, _ := json.Marshal(a)
	return string(b)
}
