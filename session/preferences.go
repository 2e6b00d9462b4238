package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The user's choices that outlive a connection are kept in the data
// directory, beside the store: one small JSON file, read when needed (so
// another daemon's choice counts at once) and written whole. It holds the
// default model (ctxls.session.setModel with default): the model's name,
// never a key or anything read from the environment.

// PrefsFile is the file, in the data directory.
const PrefsFile = "preferences.json"

// prefsMu serialises this process's read-modify-writes of the file
// (between processes the last write wins: each writes the whole file).
var prefsMu sync.Mutex

// prefsDefaultModel is the file's key for the default model.
const prefsDefaultModel = "defaultModel"

// readPrefs reads the file's keys in data directory dir; a missing file is
// none, and so is an unreadable one (with the error).
func readPrefs(dir string) (map[string]json.RawMessage, error) {
	prefs := map[string]json.RawMessage{}
	data, err := os.ReadFile(filepath.Join(dir, PrefsFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return prefs, nil
		}
		return prefs, err
	}
	if err := json.Unmarshal(data, &prefs); err != nil || prefs == nil {
		return map[string]json.RawMessage{}, fmt.Errorf("%s: %v", PrefsFile, err)
	}
	return prefs, nil
}

// DefaultModel is the default model kept in data directory dir ("" for
// none, or when the file cannot be read: the error says why).
func DefaultModel(dir string) (string, error) {
	prefs, err := readPrefs(dir)
	var m string
	if raw, ok := prefs[prefsDefaultModel]; ok {
		if json.Unmarshal(raw, &m) != nil {
			return "", err
		}
		if v, verr := ValidModel(m); verr == nil {
			return v, err
		}
	}
	return "", err
}

// SetDefaultModel keeps model as the default model in data directory dir
// ("" forgets it), keeping the file's other keys.
func SetDefaultModel(dir, model string) error {
	prefsMu.Lock()
	defer prefsMu.Unlock()
	prefs, _ := readPrefs(dir) // an unreadable file is replaced
	if model == "" {
		delete(prefs, prefsDefaultModel)
	} else {
		raw, _ := json.Marshal(model)
		prefs[prefsDefaultModel] = raw
	}
	data, err := json.MarshalIndent(prefs, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, PrefsFile), append(data, '\n'))
}
