package service

import (
	"context"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// ContextSet sets (replace) or extends (merge) one relevant-context set of
// the session, made on first need, and publishes the change.
func (s *Service) ContextSet(ctx context.Context, a *api.ContextSetArgs) (*api.ContextSetResult, error) {
	if a.SetName == "" {
		return nil, required(api.ContextSet, "setName")
	}
	if a.Items == nil {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: items is required (an empty array deletes the set)", api.ContextSet)
	}
	mode := session.Mode(a.Mode)
	switch mode {
	case "", session.ModeReplace, session.ModeMerge:
	default:
		return nil, api.Errorf(api.KindInvalidArgument, "%s: mode must be \"replace\" or \"merge\", got %q", api.ContextSet, truncate(a.Mode, 40))
	}
	roots := s.Roots()
	if a.SetName == prompts.SetFiles {
		// Checked before a session is made for the change.
		for _, it := range a.Items {
			if _, err := session.NormalizeFileItem(it, roots); err != nil {
				return nil, fail(err)
			}
		}
	}
	sess, err := s.sessionOf(ctx, a.SessionID, true)
	if err != nil {
		return nil, fail(err)
	}
	s.recordEnv(ctx, sess.ID, nil)
	ch, err := s.changeContext(ctx, sess.ID, a.SetName, a.Items, mode, roots)
	if err != nil {
		return nil, err
	}
	return &api.ContextSetResult{V: api.V, SetName: ch.SetName, Items: nonNil(ch.Items), Warnings: nonNil(ch.Warnings)}, nil
}

// AddFiles adds (remove false) or drops paths from the session's relevant
// files, relative paths taken from roots: ACP's /add and /drop, the CLI's
// "sessions context --add/--drop". It publishes the change.
func (s *Service) AddFiles(ctx context.Context, id string, paths []string, remove bool, roots []string) (*api.FilesChange, error) {
	mode := session.ModeMerge
	if remove {
		mode = session.ModeRemove
	}
	ch, err := s.changeContext(ctx, id, prompts.SetFiles, paths, mode, roots)
	if err != nil {
		return nil, err
	}
	return &api.FilesChange{Items: nonNil(ch.Items), Added: nonNil(ch.Added), Removed: nonNil(ch.Removed), Warnings: nonNil(ch.Warnings)}, nil
}

// changeContext is every change a person makes to a context set (the
// model's tool goes through the same store call).
func (s *Service) changeContext(ctx context.Context, id, set string, items []string, mode session.Mode, roots []string) (*session.ContextChange, error) {
	ch, err := s.store.UpdateContext(ctx, id, set, items, mode, session.AddedByUser, roots)
	if err != nil {
		return nil, fail(err)
	}
	s.contextChanged(id, "changed", ch.Context, ch.Added, ch.Removed)
	return ch, nil
}

// ContextGet returns the sets, all or the one named; with no session given
// and none current, an empty context.
func (s *Service) ContextGet(ctx context.Context, a *api.ContextGetArgs) (*api.ContextGetResult, error) {
	sess, err := s.sessionOf(ctx, a.SessionID, false)
	if err != nil {
		return nil, fail(err)
	}
	res := &api.ContextGetResult{V: api.V, Context: api.Context{}}
	if sess == nil {
		if a.SetName == "" {
			res.Instructions = s.instructions(nil)
		}
		return res, nil
	}
	sets, err := s.store.Context(ctx, sess.ID)
	if err != nil {
		return nil, fail(err)
	}
	if a.SetName == "" {
		res.Context = wireContext(sets)
		res.Instructions = s.instructions(sets[prompts.SetFiles])
	} else if items, ok := sets[a.SetName]; ok {
		res.Context[a.SetName] = items
	}
	return res, nil
}

// instructions are the project's instructions files a turn with these
// relevant files would give the model (none when they are off).
func (s *Service) instructions(files []string) []api.InstructionFile {
	if s.instructionsOff() {
		return nil
	}
	return wireInstructions(s.engine.Instructions(s.Roots(), files, nil))
}

// ContextState is a session's context with its missing files, as a
// context event carries it (ACP's session state and /context).
func (s *Service) ContextState(ctx context.Context, id string) (*api.ContextChangedParams, error) {
	sets, err := s.store.Context(ctx, id)
	if err != nil {
		return nil, fail(err)
	}
	ev := s.contextEvent(id, "resume", sets, nil, nil)
	return &ev.ContextChangedParams, nil
}

// ContextCandidates lists the open and recently edited files.
func (s *Service) ContextCandidates(_ context.Context, _ *api.EmptyArgs) (*api.CandidatesResult, error) {
	return &api.CandidatesResult{V: api.V, Files: wireCandidates(s.docs.Candidates())}, nil
}

// truncate cuts s to n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
