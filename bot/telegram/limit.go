package telegram

import (
	"sync"
	"time"
)

// gcra is one rate limit (the generic cell rate algorithm): on average one
// event per interval, bursts of up to burst events. tat is the theoretical
// arrival time of the next event.
type gcra struct {
	tat time.Time
}

// reserve takes the next slot and returns how long to wait for it.
func (g *gcra) reserve(now time.Time, interval time.Duration, burst int) time.Duration {
	if g.tat.Before(now) {
		g.tat = now
	}
	allowAt := g.tat.Add(-time.Duration(burst-1) * interval)
	g.tat = g.tat.Add(interval)
	if allowAt.After(now) {
		return allowAt.Sub(now)
	}
	return 0
}

// allow takes a slot if one is free now and reports whether it did.
func (g *gcra) allow(now time.Time, interval time.Duration, burst int) bool {
	tat := g.tat
	if tat.Before(now) {
		tat = now
	}
	if tat.Add(-time.Duration(burst-1) * interval).After(now) {
		return false
	}
	g.tat = tat.Add(interval)
	return true
}

// Pacing holds Telegram's sending limits: about one message a second per
// chat, 20 a minute per group, 30 a second overall.
type Pacing struct {
	Chat      time.Duration // interval per private chat (1s)
	Group     time.Duration // interval per group chat (3s)
	Global    time.Duration // interval across all chats (1/30 s)
	ChatBurst int           // messages a chat may get at once before pacing (3)
}

// pacer spaces outgoing messages per chat and overall, so that one chatty
// conversation waits for its own slots and not for everyone's.
type pacer struct {
	cfg    Pacing
	now    func() time.Time
	mu     sync.Mutex
	global gcra
	chats  map[int64]*gcra
}

func newPacer(cfg Pacing, now func() time.Time) *pacer {
	return &pacer{cfg: cfg, now: now, chats: make(map[int64]*gcra)}
}

// reserve returns how long a message to chatID must wait.
func (p *pacer) reserve(chatID int64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if len(p.chats) > 10000 {
		for id, g := range p.chats {
			if g.tat.Before(now) {
				delete(p.chats, id)
			}
		}
	}
	g := p.chats[chatID]
	if g == nil {
		g = &gcra{}
		p.chats[chatID] = g
	}
	interval := p.cfg.Chat
	if chatID < 0 {
		interval = p.cfg.Group
	}
	d := g.reserve(now, interval, p.cfg.ChatBurst)
	return max(d, p.global.reserve(now, p.cfg.Global, int(time.Second/max(p.cfg.Global, time.Millisecond))))
}

// wait returns how long a message to chatID would wait now, without
// taking the slot: the outbox waits this long before it takes what is
// queued, so what piles up meanwhile goes out in one message.
func (p *pacer) wait(chatID int64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	interval := p.cfg.Chat
	if chatID < 0 {
		interval = p.cfg.Group
	}
	g := gcra{}
	if c := p.chats[chatID]; c != nil {
		g = *c
	}
	return g.reserve(now, interval, p.cfg.ChatBurst)
}

// floodGuard limits incoming updates per stranger (never an allowed user,
// whose updates are all stored and handled), so that a stranger flooding
// the bot costs a bounded amount of work.
type floodGuard struct {
	interval time.Duration
	burst    int
	mu       sync.Mutex
	users    map[int64]*floodState
}

type floodState struct {
	gcra
	warned bool // the user was told to slow down in this flood
}

// check reports whether an update from userID may be handled and, when not,
// whether this is the first refusal of the flood (the one to answer).
func (f *floodGuard) check(userID int64, now time.Time) (ok, firstRefusal bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.users) > 10000 {
		for id, s := range f.users {
			if s.tat.Before(now) {
				delete(f.users, id)
			}
		}
	}
	s := f.users[userID]
	if s == nil {
		s = &floodState{}
		f.users[userID] = s
	}
	if s.allow(now, f.interval, f.burst) {
		s.warned = false
		return true, false
	}
	first := !s.warned
	s.warned = true
	return false, first
}
