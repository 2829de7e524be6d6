package connsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

// How many new instances the sync logs by itself. A person rents a few
// machines at a time and a handful a day; a platform (or whoever holds
// the key) that lists hundreds of new instances would otherwise become
// hundreds of rentals and chat lines, hours of both. Beyond these the
// connector gets one card and nothing is logged from the listing until
// the user answers it.
const (
	// MaxNewPerRound is the most new instances one round logs by itself.
	MaxNewPerRound = 5
	// MaxNewPerDay is the most new instances of one connector logged by
	// themselves in 24 hours (counted from the stored instances' first
	// sightings, so a restart does not reset it).
	MaxNewPerDay = 20
	// LogAllPerRound is how many instances a round logs after [Log all]:
	// each is its own short transaction, so the chat's writes go between
	// them, and a round stays well under a second of the writer.
	LogAllPerRound = 200
	// FloodShown is how many instances [Show them] lists.
	FloodShown = 20
)

// The flood card's button actions (at most 4 bytes, no ':'); the payload
// is the platform.
const (
	actFloodLog    = "syfl" // Log all
	actFloodShow   = "syfs" // Show them
	actFloodIgnore = "syfi" // Ignore
)

// floodCard returns the connector's stored card, read once per process
// and kept in st afterwards (only the round and the card's buttons change
// it, both under the connector's lock); nil: none.
func (s *Syncer) floodCard(ctx context.Context, c ledger.Connector, st *connState) (*ledger.SyncFlood, error) {
	if st.floodRead {
		return st.flood, nil
	}
	f, err := s.store.SyncFlood(ctx, c.UserID, c.Platform)
	switch {
	case isCode(err, ledger.ENOTFOUND):
		st.flood = nil
	case err != nil:
		return nil, err
	default:
		st.flood = &f
	}
	st.floodRead = true
	return st.flood, nil
}

// createdToday counts the connector's instances bound in the 24 hours
// before the poll and after since (the last flood answer carried out):
// the rentals the sync, or the user's answers to its questions, made.
func createdToday(known []ledger.PlatformInstance, poll, since time.Time) int {
	n := 0
	for _, in := range known {
		if in.Status == ledger.PlatformBound && poll.Sub(in.FirstSeen) < 24*time.Hour && in.FirstSeen.After(since) {
			n++
		}
	}
	return n
}

// flooded reports whether the new instances of a round are more than
// the sync logs by itself.
func flooded(news int, today int) bool {
	return news > MaxNewPerRound || today+news > MaxNewPerDay
}

// newInstances applies the round's new instances (listed, not stored,
// not terminated): each as fresh when there are few, else through the
// connector's flood card.
func (p *pass) newInstances(ctx context.Context, known []ledger.PlatformInstance, news []connector.Instance) error {
	f, err := p.s.floodCard(ctx, p.c, p.st)
	if err != nil {
		return err
	}
	p.st.held = news
	if f == nil && len(news) == 0 {
		return nil
	}
	switch {
	case f != nil && f.State == ledger.FloodLogAll:
		return p.logAll(ctx, f, news)
	case f != nil && f.State == ledger.FloodIgnore:
		return p.ignoreAll(ctx, f, news)
	case f != nil || flooded(len(news), createdToday(known, p.poll, p.st.answered)):
		return p.flood(ctx, f, len(news))
	}
	var errs []error
	for _, li := range news {
		if err := p.fresh(ctx, li); err != nil {
			errs = append(errs, fmt.Errorf("connsync: %s %s: %w", p.c.Platform, li.ID, err))
		}
	}
	return errors.Join(errs...)
}

// floodButtons are the open card's [Log all] [Show them] [Ignore].
func (s *Syncer) floodButtons(userID int64, platform, lang string) ([][]chat.Button, error) {
	var row []chat.Button
	for _, b := range []struct{ act, key string }{{actFloodLog, "btn_flood_log"}, {actFloodShow, "btn_flood_show"}, {actFloodIgnore, "btn_flood_ignore"}} {
		d, err := s.cfg.Buttons.Sign(userID, b.act, platform)
		if err != nil {
			return nil, err
		}
		row = append(row, chat.Button{Text: messages.Text(lang, b.key), Data: d})
	}
	return [][]chat.Button{row}, nil
}

// flood keeps the open card true: stored before it is first sent (a
// crash between the two sends it after the restart), edited in place
// when the number changes, closed when nothing new is listed any more.
// No rental is made from the listing.
func (p *pass) flood(ctx context.Context, f *ledger.SyncFlood, n int) error {
	lang := p.user(ctx).Lang
	if f == nil {
		f = &ledger.SyncFlood{UserID: p.c.UserID, Platform: p.c.Platform, State: ledger.FloodOpen, Since: p.poll}
	}
	if n == 0 {
		// Nothing new listed any more: the card is over.
		if f.MessageID != 0 {
			p.s.sendMsg(ctx, chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), EditMessageID: f.MessageID,
				Text: messages.Render(lang, "flood_gone", platformName(p.c.Platform))})
		}
		return p.s.closeFlood(ctx, p.c.UserID, p.c.Platform, p.st)
	}
	text := messages.Render(lang, "flood", platformName(p.c.Platform), n)
	if n == 1 {
		text = messages.Render(lang, "flood_one", platformName(p.c.Platform), MaxNewPerDay)
	}
	if f.MessageID != 0 && f.Text == text && f.Count == n {
		return nil // told as it is: a steady flood writes and sends nothing
	}
	f.Count = n
	if f.MessageID == 0 {
		// Stored first: what the user must be told survives a crash.
		if err := p.s.saveFlood(ctx, p.st, *f); err != nil {
			return err
		}
	}
	if p.s.sender() == nil {
		return nil
	}
	rows, err := p.s.floodButtons(p.c.UserID, p.c.Platform, lang)
	if err != nil {
		return err
	}
	m := chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), Text: text, Buttons: rows, EditMessageID: f.MessageID}
	id, ok := p.s.sendMsg(ctx, m)
	if !ok {
		return nil // the next round tries again
	}
	if f.MessageID == 0 {
		f.MessageID = id
	}
	f.Text = text
	return p.s.saveFlood(ctx, p.st, *f)
}

// saveFlood stores f and keeps it as the connector's card.
func (s *Syncer) saveFlood(ctx context.Context, st *connState, f ledger.SyncFlood) error {
	if err := s.store.SaveSyncFlood(ctx, f); err != nil {
		return err
	}
	st.flood, st.floodRead = &f, true
	return nil
}

// closeFlood deletes the connector's card: new instances count afresh.
func (s *Syncer) closeFlood(ctx context.Context, userID int64, platform string, st *connState) error {
	if err := s.store.DeleteSyncFlood(ctx, userID, platform); err != nil {
		return err
	}
	st.flood, st.floodRead = nil, true
	return nil
}

// logAll logs, after [Log all], at most LogAllPerRound of the new
// instances a round and at most the number the card told, quietly; the
// card says how far it got, and once all are logged it becomes the one
// summary.
func (p *pass) logAll(ctx context.Context, f *ledger.SyncFlood, news []connector.Instance) error {
	lang := p.user(ctx).Lang
	var errs []error
	budget := min(LogAllPerRound, max(f.Count-f.Logged, 0))
	done := 0
	for _, li := range news[:min(len(news), budget)] {
		in := ledger.PlatformInstance{UserID: p.c.UserID, Platform: p.c.Platform, PlatformID: li.ID, FirstSeen: p.poll, LastSeen: p.poll}
		listedFacts(&in, li)
		start, _ := p.startOf(li)
		in.StateAt = start
		if err := p.create(ctx, in, li, start, "", false); err != nil {
			errs = append(errs, fmt.Errorf("connsync: %s %s: %w", p.c.Platform, li.ID, err))
			continue
		}
		done++
	}
	f.Logged += done
	if f.Logged >= f.Count || len(news) <= budget {
		text := messages.Render(lang, "flood_logged", platformName(p.c.Platform), f.Logged)
		if f.MessageID != 0 {
			p.s.sendMsg(ctx, chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), EditMessageID: f.MessageID, Text: text})
		} else {
			p.s.send(ctx, p.c.UserID, text, true)
		}
		errs = append(errs, p.s.closeFlood(ctx, p.c.UserID, p.c.Platform, p.st))
		p.st.answered = p.poll
		return errors.Join(errs...)
	}
	text := messages.Render(lang, "flood_logging", platformName(p.c.Platform), f.Logged, f.Count)
	if f.MessageID != 0 && text != f.Text {
		if _, ok := p.s.sendMsg(ctx, chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), EditMessageID: f.MessageID, Text: text}); ok {
			f.Text = text
		}
	}
	errs = append(errs, p.s.saveFlood(ctx, p.st, *f))
	return errors.Join(errs...)
}

// ignoreAll, after [Ignore], declines the new instances listed (in
// bounded transactions: DeclinePlatformInstances), so they never become
// rentals or cards; instances listed later count afresh. The card says
// so and is closed.
func (p *pass) ignoreAll(ctx context.Context, f *ledger.SyncFlood, news []connector.Instance) error {
	ins := make([]ledger.PlatformInstance, 0, len(news))
	for _, li := range news {
		in := ledger.PlatformInstance{UserID: p.c.UserID, Platform: p.c.Platform, PlatformID: li.ID, FirstSeen: p.poll, LastSeen: p.poll}
		listedFacts(&in, li)
		ins = append(ins, in)
	}
	n, err := p.s.store.DeclinePlatformInstances(ctx, ins)
	if err != nil {
		return err
	}
	lang := p.user(ctx).Lang
	text := messages.Render(lang, "flood_ignored", platformName(p.c.Platform), n)
	if f.MessageID != 0 {
		p.s.sendMsg(ctx, chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), EditMessageID: f.MessageID, Text: text})
	}
	p.st.held, p.st.answered = nil, p.poll
	return p.s.closeFlood(ctx, p.c.UserID, p.c.Platform, p.st)
}

// pressFlood loads the connector's open card a press names and locks the
// connector; ok is false when the press was answered (no card, or one
// already answered).
func (s *Syncer) pressFlood(ctx context.Context, p chat.ButtonPress, snd chat.Sender) (st *connState, f *ledger.SyncFlood, unlock func(), ok bool, err error) {
	lang := s.user(ctx, p.ActsOn()).Lang
	platform := p.Payload
	if !s.supports(platform) {
		return nil, nil, nil, false, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "gone"))
	}
	unlock = s.lockConn(p.ActsOn(), platform)
	st = s.connState(p.ActsOn(), platform)
	f, err = s.floodCard(ctx, ledger.Connector{UserID: p.ActsOn(), Platform: platform}, st)
	if err != nil {
		unlock()
		return nil, nil, nil, false, err
	}
	if f == nil || f.State != ledger.FloodOpen {
		unlock()
		return nil, nil, nil, false, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "answered"))
	}
	return st, f, unlock, true, nil
}

// answerFlood stores the user's answer, edits the card to say it is
// under way, and has the connector's next round run at once.
func (s *Syncer) answerFlood(ctx context.Context, p chat.ButtonPress, snd chat.Sender, state ledger.FloodState, key string) error {
	if refused, err := s.adminOnly(ctx, p, snd); refused {
		return err
	}
	st, f, unlock, ok, err := s.pressFlood(ctx, p, snd)
	if !ok {
		return err
	}
	defer unlock()
	g := *f
	g.State = state
	lang := s.user(ctx, p.ActsOn()).Lang
	g.Text = messages.Render(lang, key, platformName(f.Platform), f.Count)
	if err := s.saveFlood(ctx, st, g); err != nil {
		return s.pressFailed(ctx, p, snd, err)
	}
	s.kickNow(st)
	return s.answer(ctx, p, snd, g.Text)
}

// kickNow makes the connector due and wakes Run.
func (s *Syncer) kickNow(st *connState) {
	s.schedule(st, time.Time{})
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Syncer) pressFloodLog(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	return s.answerFlood(ctx, p, snd, ledger.FloodLogAll, "flood_logging_soon")
}

func (s *Syncer) pressFloodIgnore(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	return s.answerFlood(ctx, p, snd, ledger.FloodIgnore, "flood_ignoring_soon")
}

// pressFloodShow lists the first FloodShown of the new instances the
// last round held back (by ID), and how many more: a new message, the
// card keeps its buttons.
func (s *Syncer) pressFloodShow(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	st, f, unlock, ok, err := s.pressFlood(ctx, p, snd)
	if !ok {
		return err
	}
	held := slices.Clone(st.held)
	unlock()
	lang := s.user(ctx, p.ActsOn()).Lang
	if len(held) == 0 {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "flood_not_read"))
	}
	slices.SortFunc(held, func(a, b connector.Instance) int { return strings.Compare(a.ID, b.ID) })
	var b strings.Builder
	b.WriteString(messages.Render(lang, "flood_list", platformName(f.Platform), len(held)))
	for _, li := range held[:min(len(held), FloodShown)] {
		in := ledger.PlatformInstance{Platform: f.Platform, PlatformID: li.ID}
		listedFacts(&in, li)
		b.WriteString("\n")
		b.WriteString(messages.Render(lang, "flood_item", label(in), describe(in, lang), string(li.State)))
	}
	if more := len(held) - FloodShown; more > 0 {
		b.WriteString("\n")
		b.WriteString(messages.Render(lang, "flood_more", more))
	}
	if _, err := snd.Send(ctx, chat.Outgoing{ChatID: p.Update.ChatID, Text: b.String()}); err != nil {
		return fmt.Errorf("connsync: show the new instances: %w", err)
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, "")
}
