package chat

import (
	"crypto/sha256"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// viewIdle is how long a session's model view is kept without a turn:
// after that a turn shows the model its context afresh (providers keep a
// cached prefix for minutes, not hours).
const viewIdle = time.Hour

// maxViewBytes bounds the text all sessions' views hold (their blocks):
// past it the least recently used views are dropped (their next turn shows
// the context afresh, as after a restart).
const maxViewBytes = 32 << 20

// minStale is how many tokens of superseded file text a conversation may
// carry before the context is shown afresh, whatever the files' size.
const minStale = 2000

// modelView is what one session's model has been shown of its context, and
// where: the <ctxls-context> block each of its user messages was sent with,
// and for each part of the context (a relevant file, the reminder, the open
// files) the message whose block holds its newest text. A turn sends only
// what is new or changed since, and the earlier messages are given again
// with their blocks as sent, so each turn's input begins with the whole of
// the previous one (what providers' prompt caches reuse). A view lives in
// memory only: after a restart, an idle hour or in another process, the
// first turn shows the context afresh before its message (and the history
// goes without blocks).
type modelView struct {
	mu   sync.Mutex
	used time.Time    // guarded by Engine.mu
	size atomic.Int64 // the bytes of blocks

	// blocks holds each user message as it was sent, its block before
	// it (prompts.WithContext), by id: the history gives it again as it
	// is, so the text is held once.
	blocks map[int64]string
	// parts says where each part's newest text was shown: "file:" and the
	// path, "reminder:" and a reminder part's key, "candidates".
	parts map[string]shownPart
	// copies are the file texts the blocks hold, superseded ones included
	// (what showing the context afresh would save).
	copies []fileCopy

	// The session's model history as the last turn read it, so the next
	// reads only what is new (session.HistoryMark): the messages after
	// the summary heldSummary (0: none), through heldThrough, all settled.
	heldSummary, heldThrough int64
	held                     []session.Message
	// costs are the tokens history messages take as the model is given
	// them (with or without their block), counted by costCounter.
	costs       map[costKey]int
	costCounter prompts.Counter
	// grouped is the history's whole turns but the last, as the last turn
	// grouped them; blocksGen counts the times blocks were taken away
	// (which regroups).
	grouped   groupedTurns
	blocksGen int
}

// groupedTurns are a history's first turns as groupTurns made them, for
// the next turn to group only what follows.
type groupedTurns struct {
	summary   int64 // the summary the history follows
	blocks    bool  // with the view's blocks (not afresh)
	blocksGen int
	counter   prompts.Counter
	msgs      int   // how many messages of the history the turns hold
	lastID    int64 // the last of them
	turns     []histTurn
}

// group is groupTurns(history, counter, blocks, v), reusing the turns the
// last call grouped when the history begins with the same messages and
// nothing about them changed (the same summary before them, the same
// blocks, the same counter).
func (v *modelView) group(history []session.Message, summary int64, counter prompts.Counter, blocks map[int64]string, withBlocks bool) []histTurn {
	if v == nil {
		return groupTurns(history, counter, blocks, nil)
	}
	v.mu.Lock()
	g := v.grouped
	gen := v.blocksGen
	v.mu.Unlock()
	var turns []histTurn
	if g.msgs > 0 && g.summary == summary && g.blocks == withBlocks && g.blocksGen == gen && g.counter == counter &&
		len(history) >= g.msgs && history[g.msgs-1].ID == g.lastID {
		turns = append(g.turns[:len(g.turns):len(g.turns)], groupTurns(history[g.msgs:], counter, blocks, v)...)
	} else {
		turns = groupTurns(history, counter, blocks, v)
	}
	// Keep all but the last turn, which later messages may continue.
	g = groupedTurns{summary: summary, blocks: withBlocks, blocksGen: gen, counter: counter}
	if len(turns) > 1 {
		g.turns = turns[: len(turns)-1 : len(turns)-1]
		for _, h := range g.turns {
			g.msgs += len(h.stored)
		}
		g.lastID = history[g.msgs-1].ID
	}
	v.mu.Lock()
	v.grouped = g
	v.mu.Unlock()
	return turns
}

// costKey names a history message as the model is given it.
type costKey struct {
	id    int64
	block bool
}

// mark is what the view holds of the session's history (nil: nothing).
func (v *modelView) mark() *session.HistoryMark {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.heldThrough == 0 {
		return nil
	}
	return &session.HistoryMark{Summary: v.heldSummary, Through: v.heldThrough}
}

// history completes a TurnState read with a mark: the messages the view
// holds, then those read (st.History when the store read it whole).
func (v *modelView) history(st *session.TurnState) []session.Message {
	if v == nil || st.Since == 0 {
		return st.History
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]session.Message, 0, len(v.held)+len(st.History))
	for _, m := range v.held {
		if m.ID <= st.Since {
			out = append(out, m)
		}
	}
	return append(out, st.History...)
}

// hold keeps the session's model history as this turn read it (without
// its own message), through the last message before any still streaming.
func (v *modelView) hold(summary *session.Message, history []session.Message) {
	if v == nil {
		return
	}
	n := len(history)
	for i, m := range history {
		if m.Status == session.StatusStreaming {
			n = i
			break
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.heldSummary, v.held, v.heldThrough = session.SummaryID(summary), history[:n:n], 0
	if n > 0 {
		v.heldThrough = history[n-1].ID
	}
}

// costOf returns a cached cost, or counts it with count and keeps it.
func (v *modelView) costOf(counter prompts.Counter, key costKey, count func() int) int {
	if v == nil {
		return count()
	}
	v.mu.Lock()
	if v.costCounter != counter || v.costs == nil {
		v.costs, v.costCounter = map[costKey]int{}, counter
	}
	n, ok := v.costs[key]
	v.mu.Unlock()
	if ok {
		return n
	}
	n = count()
	v.mu.Lock()
	if v.costCounter == counter {
		v.costs[key] = n
	}
	v.mu.Unlock()
	return n
}

// shownPart is where a part of the context was last shown.
type shownPart struct {
	hash [sha256.Size]byte
	msg  int64 // the user message whose block holds it
	// set: a file of the session's files set then (not only the turn's):
	// when it leaves the set, the model is told it is no longer relevant.
	set bool
}

// fileCopy is one file text a block holds.
type fileCopy struct {
	path   string
	hash   [sha256.Size]byte
	msg    int64
	tokens int
}

// viewState is a copy of a view taken for one assembly: the view may change
// under a preview while it is being built.
type viewState struct {
	blocks map[int64]string
	parts  map[string]shownPart
	copies []fileCopy
}

// viewFor returns the session's view (made when there is none) and drops
// the views of sessions idle for more than viewIdle.
func (e *Engine) viewFor(id string) *modelView {
	now := e.clock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.views == nil {
		e.views = map[string]*modelView{}
	}
	var total int64
	for sid, v := range e.views {
		if sid != id && now.Sub(v.used) > viewIdle {
			delete(e.views, sid)
			continue
		}
		total += v.size.Load()
	}
	for total > maxViewBytes {
		oldest := ""
		for sid, v := range e.views {
			if sid != id && (oldest == "" || v.used.Before(e.views[oldest].used)) {
				oldest = sid
			}
		}
		if oldest == "" {
			break
		}
		total -= e.views[oldest].size.Load()
		delete(e.views, oldest)
	}
	v := e.views[id]
	if v == nil || now.Sub(v.used) > viewIdle {
		v = &modelView{}
		e.views[id] = v
	}
	v.used = now
	return v
}

// state copies the view; a nil view (a preview of a session's first turn)
// has shown nothing.
func (v *modelView) state() viewState {
	if v == nil {
		return viewState{}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return viewState{blocks: maps.Clone(v.blocks), parts: maps.Clone(v.parts), copies: append([]fileCopy(nil), v.copies...)}
}

// plan decides what a turn's block says, given the turn's relevant files
// (in.Relevant, their current text), the reminder and open files it would
// show, and present: whether a user message of the kept history is given
// again with its block. It moves the files shown before and unchanged
// from in.Relevant to in.Shown, marks changed ones, names files no longer
// relevant, and omits a reminder or open-files list the conversation
// holds as it is. It returns the tokens of the conversation's file texts
// that are superseded (stale) and of the relevant files' current text
// (live), for the decision to show the context afresh.
func (s viewState) plan(in *prompts.Input, present func(int64) bool, counter prompts.Counter) (stale, live int) {
	shown := func(key string, text string) bool {
		p, ok := s.parts[key]
		return ok && present(p.msg) && p.hash == sha256.Sum256([]byte(text))
	}
	current := map[string][sha256.Size]byte{}
	var send []prompts.File
	for _, f := range in.Relevant {
		h := sha256.Sum256([]byte(f.Content))
		current[f.Path] = h
		if shown("file:"+f.Path, f.Content) {
			in.Shown = append(in.Shown, f)
			continue
		}
		if p, ok := s.parts["file:"+f.Path]; ok && present(p.msg) {
			in.Changed = append(in.Changed, f.Path)
		}
		send = append(send, f)
	}
	in.Relevant = send
	for key, p := range s.parts {
		path, ok := cutFile(key)
		if _, relevant := current[path]; ok && p.set && !relevant && present(p.msg) {
			in.Gone = append(in.Gone, path)
		}
	}
	slices.Sort(in.Gone)
	reminder := map[string]bool{}
	for _, p := range prompts.ReminderParts(in.Context, in.Missing, in.Env) {
		reminder[p.Key] = true
		if shown("reminder:"+p.Key, p.Text) {
			in.ReminderShown = append(in.ReminderShown, p.Key)
		}
	}
	for key, p := range s.parts {
		if k, ok := strings.CutPrefix(key, "reminder:"); ok && !reminder[k] && present(p.msg) {
			in.ReminderGone = append(in.ReminderGone, k)
		}
	}
	slices.Sort(in.ReminderGone)
	in.OmitCandidates = in.OmitCandidates || (prompts.CandidatesSection(*in) != "" && shown("candidates", prompts.CandidatesSection(*in)))
	for _, c := range s.copies {
		if !present(c.msg) {
			continue
		}
		if h, ok := current[c.path]; ok && h == c.hash && s.parts["file:"+c.path].msg == c.msg {
			live += c.tokens
		} else {
			stale += c.tokens
		}
	}
	for _, f := range send {
		live += counter.Count(f.Content)
	}
	return stale, live
}

// record notes what a turn's block (sent before user message msg) showed:
// in is the input as planned (in.Relevant the files whose text it holds),
// fresh whether the earlier blocks were left out (the context shown
// afresh), and kept whether a message is in the history the turn sent
// (blocks of messages it left out are forgotten).
func (v *modelView) record(msg int64, sent string, in prompts.Input, fresh bool, kept func(int64) bool, counter prompts.Counter) {
	if v == nil || msg == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if fresh || v.blocks == nil {
		v.blocks, v.parts, v.copies = map[int64]string{}, map[string]shownPart{}, nil
		v.blocksGen++
	}
	before := len(v.blocks)
	maps.DeleteFunc(v.blocks, func(id int64, _ string) bool { return !kept(id) })
	if len(v.blocks) < before {
		v.blocksGen++
	}
	maps.DeleteFunc(v.costs, func(k costKey, _ int) bool { return k.id < v.heldFirst() })
	maps.DeleteFunc(v.parts, func(_ string, p shownPart) bool { return !kept(p.msg) })
	v.copies = deleteCopies(v.copies, func(c fileCopy) bool { return !kept(c.msg) })
	for _, p := range in.Gone {
		delete(v.parts, "file:"+p)
	}
	for _, f := range in.Shown { // in the set now, or no longer
		if p, ok := v.parts["file:"+f.Path]; ok {
			p.set = slices.Contains(in.Context[prompts.SetFiles], f.Path)
			v.parts["file:"+f.Path] = p
		}
	}
	defer func() {
		n := 0
		for _, b := range v.blocks {
			n += len(b)
		}
		v.size.Store(int64(n))
	}()
	if block, _ := prompts.SplitContext(sent); block == "" {
		return
	}
	v.blocks[msg] = sent
	for _, f := range in.Relevant {
		h := sha256.Sum256([]byte(f.Content))
		v.parts["file:"+f.Path] = shownPart{hash: h, msg: msg, set: slices.Contains(in.Context[prompts.SetFiles], f.Path)}
		v.copies = append(v.copies, fileCopy{path: f.Path, hash: h, msg: msg, tokens: counter.Count(f.Content)})
	}
	for _, key := range in.ReminderGone {
		delete(v.parts, "reminder:"+key)
	}
	for _, p := range prompts.ReminderParts(in.Context, in.Missing, in.Env) {
		if in.Resumed || !slices.Contains(in.ReminderShown, p.Key) {
			v.parts["reminder:"+p.Key] = shownPart{hash: sha256.Sum256([]byte(p.Text)), msg: msg}
		}
	}
	if !in.OmitCandidates {
		if c := prompts.CandidatesSection(in); c != "" {
			v.parts["candidates"] = shownPart{hash: sha256.Sum256([]byte(c)), msg: msg}
		}
	}
}

func deleteCopies(c []fileCopy, del func(fileCopy) bool) []fileCopy {
	out := c[:0]
	for _, x := range c {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

func cutFile(key string) (string, bool) { return strings.CutPrefix(key, "file:") }

// heldFirst is the oldest history message the view holds (costs of older
// ones are dropped: a summary covers them). v.mu is held.
func (v *modelView) heldFirst() int64 {
	if len(v.held) == 0 {
		return 0
	}
	return v.held[0].ID
}
