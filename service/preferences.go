package service

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/ctxls/ctxls/session"
)

// The user's choices that outlive a connection are kept in the data
// directory, beside the store: one small JSON file, read when needed (so
// another daemon's choice counts at once) and written whole. It holds the
// default model (ctxls.session.setModel with default): the model's name,
// never a key or anything read from the environment.

// prefsFile is the file, in the data directory.
const prefsFile = "preferences.json"

// prefsMu serialises this process's read-modify-writes of the file
// (between processes the last write wins: each writes the whole file).
var prefsMu sync.Mutex

// prefsDefaultModel is the file's key for the default model.
const prefsDefaultModel = "defaultModel"

// readPrefs reads the file's keys; a missing file is none, an unreadable
// one is logged and read as none.
func (s *Service) readPrefs() map[string]json.RawMessage {
	prefs := map[string]json.RawMessage{}
	dir := s.dataDir()
	if dir == "" {
		return prefs
	}
	data, err := os.ReadFile(filepath.Join(dir, prefsFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("the preferences cannot be read", "err", err)
		}
		return prefs
	}
	if err := json.Unmarshal(data, &prefs); err != nil || prefs == nil {
		s.log.Warn("the preferences cannot be read; ignored", "file", prefsFile, "err", err)
		return map[string]json.RawMessage{}
	}
	return prefs
}

// dataDir is the store's data directory ("" without a store).
func (s *Service) dataDir() string {
	if s.store == nil {
		return ""
	}
	return s.store.DataDir()
}

// defaultModel is the model new sessions get as their own ("" for none):
// the one ctxls.session.setModel made the default.
func (s *Service) defaultModel() string {
	var m string
	if raw, ok := s.readPrefs()[prefsDefaultModel]; ok {
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		if v, err := session.ValidModel(m); err == nil {
			return v
		}
	}
	return ""
}

// setDefaultModel keeps model as the default model ("" forgets it),
// keeping the file's other keys.
func (s *Service) setDefaultModel(model string) error {
	dir := s.dataDir()
	if dir == "" {
		return errors.New("no data directory to keep the default model in")
	}
	prefsMu.Lock()
	defer prefsMu.Unlock()
	prefs := s.readPrefs()
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
	return session.WriteFileAtomic(filepath.Join(dir, prefsFile), append(data, '\n'))
}

// madeWithDefaults gives a session just made the default model as its
// own, when there is one: what makes it the model of new sessions. A
// failure is logged and the session kept as made.
func (s *Service) madeWithDefaults(ctx context.Context, sess *session.Session) *session.Session {
	m := s.defaultModel()
	if m == "" || sess.Meta.Model != "" {
		return sess
	}
	withModel, err := s.store.SetModel(ctx, sess.ID, m)
	if err != nil {
		s.log.Warn("the default model was not given to the new session", "session", sess.ID, "err", err)
		return sess
	}
	return withModel
}
