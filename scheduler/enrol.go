package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Enrolment: the cards of instances that announce themselves with an
// enrolment token (one tap logs one as a rental), and what a host's
// shutdown or new boot does to the ledger (DecideHost).

// EnrolStore is what the enrolment cards read of the store
// (ledger.EnrolStore).
type EnrolStore interface {
	Instance(ctx context.Context, userID, id int64) (ledger.Instance, error)
	PendingInstances(ctx context.Context, userID int64) ([]ledger.Instance, error)
	SetInstanceCard(ctx context.Context, userID, id int64, messageID int) error
	EnrolTokens(ctx context.Context, userID int64) ([]ledger.EnrolToken, error)
}

// Enrolment is what the enrolment cards' buttons ask of the agent hub
// (agent/hub.Enrolment): log an instance, ignore it, hand it a new token,
// revoke the user's enrolment tokens.
type Enrolment interface {
	Adopt(ctx context.Context, a ledger.Action, instanceID int64, offer *ledger.PriceOffer) (*ledger.Rental, error)
	Ignore(ctx context.Context, a ledger.Action, instanceID int64) (ledger.Instance, error)
	Reconnect(ctx context.Context, userID, instanceID int64) (*ledger.Rental, error)
	Revoke(ctx context.Context, userID int64) (int, error)
}

// Button actions of the enrolment and host cards. Payloads: an instance
// ID (ea, ep, en, ec), 0 (ex), "RID.FROMUNIX.TOUNIX" with TO 0 for a stop
// alone (hs), a rental ID (hb).
const (
	ActAdopt       = "ea" // Log at the offered price (or unpriced)
	ActOtherPrice  = "ep" // Other price: how to /adopt at another
	ActNotMine     = "en" // Not mine: announce nothing more for it
	ActReconnect   = "ec" // Reconnect: a new token for the rental it is logged as
	ActRevokeEnrol = "ex" // Revoke the user's enrolment tokens
	ActHostStopped = "hs" // Stopped (at FROM, until TO)
	ActHostBilled  = "hb" // It billed / still billing: nothing recorded
)

// Card kinds of the host cards (one per rental and incident).
const (
	CardHost     ledger.CardKind = "host"     // a shutdown or new boot: did billing stop?
	CardReturned ledger.CardKind = "returned" // an instance reports again without its token
)

// decisionHost is the decision-log kind of the stops and resumes a host's
// shutdown or boot recorded, and of the questions it raised.
const decisionHost ledger.DecisionKind = "host"

// maxMergedList is how many instances the merged card names.
const maxMergedList = 10

// ebutton is an enrolment or host card button before signing.
type ebutton struct {
	text, action, payload string
}

func (s *Scheduler) signE(userID int64, rows [][]ebutton) ([][]chat.Button, error) {
	out := make([][]chat.Button, 0, len(rows))
	for _, row := range rows {
		var r []chat.Button
		for _, b := range row {
			d, err := s.cfg.Buttons.ButtonData(userID, b.action, b.payload)
			if err != nil {
				return nil, err
			}
			r = append(r, chat.Button{Text: b.text, Data: d})
		}
		out = append(out, r)
	}
	return out, nil
}

// sendE sends (edit 0) or edits a message with buttons; silent makes no
// sound. It returns the message's ID.
func (s *Scheduler) sendE(ctx context.Context, u *ledger.User, edit int, msg string, rows [][]ebutton, silent bool) (int, error) {
	m := chat.Outgoing{ChatID: s.cfg.ChatID(u.ID), Text: msg, EditMessageID: edit, Silent: silent}
	if rows != nil {
		b, err := s.signE(u.ID, rows)
		if err != nil {
			return 0, err
		}
		m.Buttons = b
	}
	id, err := s.cfg.Sender.Send(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("send: %w", err)
	}
	if id == 0 {
		id = edit
	}
	return id, nil
}

// platformName is the profile's name of a platform key ("RunPod"), or ""
// for none.
func platformName(key string) string {
	if key == "" || key == ledger.UnknownPlatform {
		return ""
	}
	if p, ok := ledger.LookupProfile(key); ok {
		return p.Name
	}
	return key
}

// when is a time on a card: "18:02", "yesterday 18:02", in the user's
// zone, to the minute.
func (s *Scheduler) when(u *ledger.User, t time.Time) string {
	return view.FormatTime(t.Truncate(time.Minute), u.Location(), s.now(), lang(u))
}

// whenSpan is a range's two ends on a card: to the minute, or to the
// second when the range is short, so a stop and a boot in the same minute
// do not read "18:02–18:02" (view.FormatSpan).
func (s *Scheduler) whenSpan(u *ledger.User, from, to time.Time) (string, string) {
	return view.FormatSpan(from, to, u.Location(), s.now(), lang(u))
}

// instanceWhat is "RunPod (ID abc123)" or "a host called NAME": the
// instance as the user knows it.
func instanceWhat(lg string, in ledger.Instance) string {
	var sb strings.Builder
	if n := platformName(in.Platform); n != "" {
		sb.WriteString(n)
	} else {
		sb.WriteString(text(lg, "inst_platform_unknown"))
	}
	if in.PlatformID != "" {
		sb.WriteString(text(lg, "inst_id", in.PlatformID))
	} else if in.Hostname != "" {
		sb.WriteString(text(lg, "inst_host", in.Hostname))
	}
	return sb.String()
}

func gpuWhat(lg string, in ledger.Instance) string {
	if in.GPUCount <= 0 || in.GPUModel == "" {
		return text(lg, "inst_no_gpu")
	}
	return text(lg, "inst_gpus", in.GPUCount, in.GPUModel)
}

// bootClaimed reports whether the boot time shown is not the instance's
// word as it is: it was moved (ClampBoot) or is unknown.
func bootClaimed(in ledger.Instance, u *ledger.User) bool {
	if in.BootAt.IsZero() || in.BootAt.Equal(in.FirstSeen) || !in.BootAt.After(in.FirstSeen.Add(-ledger.MaxBootAge)) {
		return true
	}
	_, clamped := ledger.ClampBoot(in.BootAt, in.FirstSeen, u.CreatedAt)
	return clamped
}

// offerFor is the price a new instance's card offers: the user's last
// price for its platform and GPU (ledger.OfferFor), or nil.
func (s *Scheduler) offerFor(ctx context.Context, u *ledger.User, in ledger.Instance) (*ledger.PriceOffer, error) {
	b, err := s.store.Book(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	o, ok := ledger.OfferFor(b, in)
	if !ok {
		return nil, nil
	}
	return &o, nil
}

func offerText(lg string, o *ledger.PriceOffer) string {
	return view.FormatPrice(o.Price, o.Currency, lg)
}

// instanceCard is the card of one new instance: what it is, and
// [Log at PRICE] (or [Log, price later]) [Other price] [Not mine].
func (s *Scheduler) instanceCard(u *ledger.User, in ledger.Instance, offer *ledger.PriceOffer) (string, [][]ebutton) {
	lg := lang(u)
	// The time shown is the one a Log press starts the rental at.
	start, _ := ledger.ClampBoot(in.BootAt, in.FirstSeen, u.CreatedAt)
	up := s.when(u, start)
	host := in.Hostname
	if host == "" {
		host = "?"
	}
	var msg string
	if in.Platform == "" {
		msg = tr(lg, "inst_new_unknown", instanceID(lg, in), gpuWhat(lg, in), host, up)
	} else {
		msg = tr(lg, "inst_new", platformName(in.Platform), instanceID(lg, in), gpuWhat(lg, in), host, up)
	}
	if bootClaimed(in, u) {
		msg += " " + tr(lg, "inst_claimed")
	}
	id := strconv.FormatInt(in.ID, 10)
	other, notMine := ebutton{text(lg, "btn_other_price"), ActOtherPrice, id}, ebutton{text(lg, "btn_not_mine"), ActNotMine, id}
	if offer == nil && !currencyKnown(in) {
		// Neither a price nor a platform to take the currency from: a
		// rental cannot be logged without one, so the user gives both.
		msg += "\n" + tr(lg, "inst_no_offer_currency", id)
		return msg, [][]ebutton{{other, notMine}}
	}
	log := ebutton{text(lg, "btn_log_later"), ActAdopt, id}
	if offer != nil {
		log.text = text(lg, "btn_log_at", offerText(lg, offer))
	} else {
		msg += "\n" + tr(lg, "inst_no_offer")
	}
	return msg, [][]ebutton{{log, other, notMine}}
}

// currencyKnown reports whether the instance's platform has a profile,
// and so a currency an unpriced rental can be logged in.
func currencyKnown(in ledger.Instance) bool {
	_, ok := ledger.LookupProfile(in.Platform)
	return ok
}

func instanceID(lg string, in ledger.Instance) string {
	if in.PlatformID == "" {
		return ""
	}
	return text(lg, "inst_id", in.PlatformID)
}

// InstanceAnnounced shows the user a new instance an enrolment token
// announced: a card of its own while its token has brought fewer than
// ledger.MaxCardsPerHour cards in the last hour, else a line in the one
// merged card, edited in place. A new instance is not urgent: in quiet
// hours its card comes silently, not held.
func (s *Scheduler) InstanceAnnounced(ctx context.Context, in ledger.Instance) {
	if err := s.instanceAnnounced(ctx, in); err != nil {
		s.log.Error("scheduler: instance announced", "user", in.UserID, "instance", in.ID, "err", err)
	}
}

func (s *Scheduler) instanceAnnounced(ctx context.Context, in ledger.Instance) error {
	defer s.lockUser(in.UserID)()
	es := s.store
	u, err := s.store.User(ctx, in.UserID)
	if err != nil {
		return err
	}
	pending, err := es.PendingInstances(ctx, in.UserID)
	if err != nil {
		return err
	}
	now := s.now()
	cards := 0
	for _, p := range pending {
		if p.ID != in.ID && p.Carded && p.TokenID == in.TokenID && p.FirstSeen.After(now.Add(-time.Hour)) {
			cards++
		}
	}
	if cards < ledger.MaxCardsPerHour {
		return s.cardInstance(ctx, es, &u, in)
	}
	return s.updateMerged(ctx, es, &u)
}

// InstanceCard returns a fresh card of the user's instance when it waits
// for an answer again: /undo of a Log or a Not mine asks for it, so that
// the instance the store put back to pending is not left without a way
// to answer it. The core sends the card after its reply, stored with it,
// so it is returned rather than sent. An instance that had a card of its
// own gets a fresh one in its place (the old one lost its buttons to the
// answer, and may be far up the chat); the cap counts instances with a
// card, so this adds none. One that waited on the merged card is shown as
// a new announcement is (its own card or the merged card, sent here; ok
// false). Another state (it was ignored before it was logged) has no card.
func (s *Scheduler) InstanceCard(ctx context.Context, userID, instanceID int64) (card chat.Outgoing, ok bool, err error) {
	unlock := s.lockUser(userID)
	u, err := s.store.User(ctx, userID)
	if err != nil {
		unlock()
		return card, false, err
	}
	in, err := s.store.Instance(ctx, userID, instanceID)
	if err != nil || in.State != ledger.InstancePending {
		unlock()
		return card, false, err
	}
	if !in.Carded {
		unlock()
		return card, false, s.instanceAnnounced(ctx, in)
	}
	defer unlock()
	offer, err := s.offerFor(ctx, &u, in)
	if err != nil {
		return card, false, err
	}
	msg, rows := s.instanceCard(&u, in, offer)
	buttons, err := s.signE(u.ID, rows)
	if err != nil {
		return card, false, err
	}
	return chat.Outgoing{ChatID: s.cfg.ChatID(u.ID), Text: msg, Buttons: buttons}, true, nil
}

// cardInstance sends an instance its own card and records it.
func (s *Scheduler) cardInstance(ctx context.Context, es EnrolStore, u *ledger.User, in ledger.Instance) error {
	offer, err := s.offerFor(ctx, u, in)
	if err != nil {
		return err
	}
	msg, rows := s.instanceCard(u, in, offer)
	id, err := s.sendE(ctx, u, 0, msg, rows, ledger.InQuietHours(u, s.now()))
	if err != nil {
		return err
	}
	return es.SetInstanceCard(ctx, u.ID, in.ID, id)
}

// updateMerged shows the pending instances that have no card of their own
// on the user's one merged card, sent once and then edited in place; when
// none is left it says so (and loses its button).
func (s *Scheduler) updateMerged(ctx context.Context, es EnrolStore, u *ledger.User) error {
	pending, err := es.PendingInstances(ctx, u.ID)
	if err != nil {
		return err
	}
	var waiting []ledger.Instance
	for _, p := range pending {
		if !p.Carded {
			waiting = append(waiting, p)
		}
	}
	s.mu.Lock()
	msgID := s.merged[u.ID]
	s.mu.Unlock()
	lg := lang(u)
	if len(waiting) == 0 {
		if msgID == 0 {
			return nil
		}
		_, err := s.sendE(ctx, u, msgID, tr(lg, "inst_merged_none"), nil, true)
		s.mu.Lock()
		delete(s.merged, u.ID)
		s.mu.Unlock()
		return err
	}
	var list []string
	for i, p := range waiting {
		if i == maxMergedList {
			list = append(list, text(lg, "inst_merged_more", len(waiting)-maxMergedList))
			break
		}
		host := p.Hostname
		if host == "" {
			host = "?"
		}
		list = append(list, "• "+clip.Runes(host, 40, "…")+" · "+instanceWhat(lg, p)+" · "+gpuWhat(lg, p))
	}
	msg := tr(lg, "inst_merged", len(waiting), chat.RawHTML(chat.Escape(strings.Join(list, "\n"))))
	rows := [][]ebutton{{{text(lg, "btn_revoke_enrol"), ActRevokeEnrol, "0"}}}
	id, err := s.sendE(ctx, u, msgID, msg, rows, ledger.InQuietHours(u, s.now()))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.merged[u.ID] = id
	s.mu.Unlock()
	return nil
}

// nextCard gives the oldest pending instance without a card of its own a
// card (the user answered one), and updates the merged card. The caller
// holds the user's lock.
func (s *Scheduler) nextCard(ctx context.Context, es EnrolStore, u *ledger.User) {
	pending, err := es.PendingInstances(ctx, u.ID)
	if err != nil {
		s.log.Error("scheduler: next instance card", "user", u.ID, "err", err)
		return
	}
	for _, p := range pending {
		if !p.Carded {
			if err := s.cardInstance(ctx, es, u, p); err != nil {
				s.log.Error("scheduler: next instance card", "user", u.ID, "instance", p.ID, "err", err)
				return
			}
			break
		}
	}
	if err := s.updateMerged(ctx, es, u); err != nil {
		s.log.Error("scheduler: merged instance card", "user", u.ID, "err", err)
	}
}

// lockUser serialises a user's enrolment cards (the merged card is one
// message per user). The rental locks use positive IDs; users take the
// negative side of the same map.
func (s *Scheduler) lockUser(id int64) func() { return s.lockRental(-id - 1) }

// InstanceReturned tells the user that an instance logged as r reports
// again without its own token: [Reconnect it to NAME] [Not mine]. Once per
// boot of the instance.
func (s *Scheduler) InstanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) {
	if err := s.instanceReturned(ctx, in, r); err != nil {
		s.log.Error("scheduler: instance returned", "rental", r.ID, "instance", in.ID, "err", err)
	}
}

func (s *Scheduler) instanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	c, seen, err := s.cardFor(ctx, &u, r, CardReturned, strconv.FormatInt(in.BootAt.Unix(), 10))
	if err != nil || seen {
		return err
	}
	lg := lang(&u)
	msg := tr(lg, "inst_returned", r.Name, instanceID(lg, in))
	id := strconv.FormatInt(in.ID, 10)
	rows := [][]ebutton{{{text(lg, "btn_reconnect", r.Name), ActReconnect, id}, {text(lg, "btn_not_mine"), ActNotMine, id}}}
	mid, err := s.sendE(ctx, &u, 0, msg, rows, ledger.InQuietHours(&u, s.now()))
	if err != nil {
		return err
	}
	c.MessageID, c.Text, c.FirstAt, c.LastAt = mid, msg, s.now(), s.now()
	if _, err := s.store.SaveCard(ctx, c); err != nil {
		return err
	}
	s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_returned"), ledger.Msg("e_instance", in.Key))
	return nil
}

// HostShutdown handles an agent's shutdown report (DecideHost).
func (s *Scheduler) HostShutdown(ctx context.Context, r *ledger.Rental, at time.Time, host bool) {
	if err := s.hostEvent(ctx, r, HostEvent{ShutdownAt: at, Host: host}); err != nil {
		s.log.Error("scheduler: host shutdown", "rental", r.ID, "err", err)
	}
}

// HostBooted handles a new boot of a rental's host (DecideHost).
func (s *Scheduler) HostBooted(ctx context.Context, r *ledger.Rental, b ledger.Boot) {
	ev := HostEvent{Boot: true, LastSeen: b.LastSeen, BootAt: b.BootAt, ShutdownAt: b.ShutdownAt, Host: b.ShutdownHost}
	if err := s.hostEvent(ctx, r, ev); err != nil {
		s.log.Error("scheduler: host booted", "rental", r.ID, "err", err)
	}
}

// profileRule is what a shutdown from inside does to billing on the
// rental's platform.
func profileRule(r *ledger.Rental) ledger.ShutdownRule {
	if p, ok := ledger.LookupProfile(r.Platform); ok {
		return p.Shutdown
	}
	return ledger.ShutdownUnknown
}

// stopKey and bootKey make the stops and resumes a host's shutdown and
// boot record apply once, whether the report is handled twice or the
// user's button makes the same change.
func stopKey(rentalID int64, at time.Time) string {
	return "shutdown:" + strconv.FormatInt(rentalID, 10) + ":" + strconv.FormatInt(at.Unix(), 10)
}

func bootKey(rentalID int64, at time.Time) string {
	return "boot:" + strconv.FormatInt(rentalID, 10) + ":" + strconv.FormatInt(at.Unix(), 10)
}

func (s *Scheduler) hostEvent(ctx context.Context, given *ledger.Rental, ev HostEvent) error {
	defer s.lockRental(given.ID)()
	r, err := s.store.RentalByID(ctx, given.ID)
	if err != nil {
		return err
	}
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	ev.Rule, ev.State = profileRule(r), r.State()
	for _, e := range r.Events {
		if e.Kind == ledger.EventStop && e.At.After(ev.LastStop) {
			ev.LastStop = e.At
		}
	}
	d := DecideHost(ev)
	lg := lang(&u)
	pname := platformName(r.Platform)
	switch d.Do {
	case HostNothing:
		return nil
	case HostRecordStop:
		if _, dup, err := s.recordStop(ctx, &u, r, d.From, time.Time{}); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_stop"), ledger.Msg("e_shutdown_stops", d.From, pname))
		return s.quietLine(ctx, &u, tr(lg, "host_stop_recorded", r.Name, s.when(&u, d.From), pname))
	case HostRecordBoot:
		if _, dup, err := s.recordResume(ctx, &u, r, d.To); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_resume"), ledger.Msg("e_boot", d.To, ev.LastSeen))
		return s.quietLine(ctx, &u, tr(lg, "host_resume_recorded", r.Name, s.when(&u, d.To)))
	case HostRecordCycle:
		if _, dup, err := s.recordStop(ctx, &u, r, d.From, d.To); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_cycle"), ledger.Msg("e_stop_range", d.From, d.To))
		from, to := s.whenSpan(&u, d.From, d.To)
		return s.quietLine(ctx, &u, tr(lg, "host_cycle_recorded", r.Name, from, to, pname))
	}
	// Ask: one host card per incident (the shutdown, or the boot).
	incident := "boot:" + strconv.FormatInt(d.To.Unix(), 10)
	if d.Do == HostAskStop {
		incident = "shutdown:" + strconv.FormatInt(d.From.Unix(), 10)
	}
	old, open, err := s.openCard(ctx, r.ID, CardHost)
	if err != nil {
		return err
	}
	if open && old.Incident == incident {
		return nil
	}
	if open && !old.Closed && old.MessageID != 0 {
		// An earlier question about the same host (its shutdown) is
		// answered by the new one: its buttons go.
		old.Closed = true
		if err := s.sendCard(ctx, &u, &old, old.Text, nil, false, true); err != nil {
			s.log.Error("scheduler: close host card", "rental", r.ID, "err", err)
		}
	}
	var msg string
	rid := strconv.FormatInt(r.ID, 10)
	var rows [][]ebutton
	from := strconv.FormatInt(d.From.Unix(), 10)
	if d.Do == HostAskStop {
		msg = tr(lg, "host_ask_shutdown", r.Name, s.when(&u, d.From))
		rows = [][]ebutton{{{text(lg, "btn_stopped_at", s.when(&u, d.From)), ActHostStopped, rid + "." + from + ".0"},
			{text(lg, "btn_still_billing"), ActHostBilled, rid}}}
	} else {
		fromAt, toAt := s.whenSpan(&u, d.From, d.To)
		if ev.ShutdownAt.IsZero() {
			msg = tr(lg, "host_ask_gap", r.Name, fromAt, toAt)
		} else {
			msg = tr(lg, "host_ask_cycle", r.Name, fromAt, toAt)
		}
		rows = [][]ebutton{{{text(lg, "btn_stopped_range", fromAt, toAt), ActHostStopped,
			rid + "." + from + "." + strconv.FormatInt(d.To.Unix(), 10)}, {text(lg, "btn_it_billed"), ActHostBilled, rid}}}
	}
	msg += " " + ruleText(lg, ev.Rule, pname)
	c := ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: CardHost, Incident: incident}
	mid, err := s.sendE(ctx, &u, 0, msg, rows, ledger.InQuietHours(&u, s.now()))
	if err != nil {
		return err
	}
	c.MessageID, c.Text, c.FirstAt, c.LastAt = mid, msg, s.now(), s.now()
	if _, err := s.store.SaveCard(ctx, c); err != nil {
		return err
	}
	what := ledger.Msg("e_shutdown_ask", d.From, pname)
	if d.Do == HostAskCycle {
		what = ledger.Msg("e_down_ask", d.From, d.To)
	}
	s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_ask"), what)
	return nil
}

// ruleText says what the profile knows of a shutdown from inside.
func ruleText(lg string, rule ledger.ShutdownRule, pname string) string {
	switch {
	case rule == ledger.ShutdownBills:
		return tr(lg, "rule_bills", pname)
	case pname == "":
		return tr(lg, "rule_unknown_platform")
	}
	return tr(lg, "rule_unknown", pname)
}

// quietLine sends one line without a sound.
func (s *Scheduler) quietLine(ctx context.Context, u *ledger.User, msg string) error {
	_, err := s.cfg.Sender.Send(ctx, chat.Outgoing{ChatID: s.cfg.ChatID(u.ID), Text: msg, Silent: true})
	return err
}

// recordStop records a stop at from (and a resume at to, when not zero)
// as the user's undoable actions, keyed so that each applies once, and
// has the hub read the rental again. It returns the rental after the
// change; dup is true when the change was recorded before (a report or a
// press handled twice): nothing more is to be said. The caller holds the
// rental's lock.
func (s *Scheduler) recordStop(ctx context.Context, u *ledger.User, r *ledger.Rental, from, to time.Time) (got *ledger.Rental, dup bool, err error) {
	now := s.now()
	got, err = s.store.AppendEvent(ctx, ledger.Action{UserID: u.ID, At: now, Key: stopKey(r.ID, from)}, r.Name, ledger.Event{Kind: ledger.EventStop, At: from})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		return r, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.changed(ctx, got, from)
	if !to.IsZero() && got.State() == ledger.Stopped {
		return s.recordResume(ctx, u, got, to)
	}
	return got, false, nil
}

func (s *Scheduler) recordResume(ctx context.Context, u *ledger.User, r *ledger.Rental, to time.Time) (*ledger.Rental, bool, error) {
	got, err := s.store.AppendEvent(ctx, ledger.Action{UserID: u.ID, At: s.now(), Key: bootKey(r.ID, to)}, r.Name, ledger.Event{Kind: ledger.EventResume, At: to})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		return r, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.changed(ctx, got, time.Time{})
	return got, false, nil
}

// changed tells the hub the rental changed (it caches rentals), and ends
// the idle time at a stop.
func (s *Scheduler) changed(ctx context.Context, r *ledger.Rental, stoppedAt time.Time) {
	if s.hub == nil {
		return
	}
	s.hub.Refresh(r.ID)
	if !stoppedAt.IsZero() && r.State() != ledger.Running {
		if err := s.hub.CloseIdleAt(ctx, r.ID, stoppedAt); err != nil {
			s.log.Error("scheduler: close idle interval", "rental", r.ID, "err", err)
		}
	}
}

// enrolPress handles a verified press of an enrolment or host card button.
func (s *Scheduler) enrolPress(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	lg, loc := chat.LangEN, time.UTC
	u, uerr := s.store.User(ctx, p.Update.UserID)
	if uerr == nil {
		lg, loc = lang(&u), u.Location()
	} else if ledger.ErrorCode(uerr) != ledger.ENOTFOUND {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_internal"))
	}
	answer := func(t string) error {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(chat.StripHTML(t), 190, "…"))
	}
	if uerr != nil {
		return answer(text(lg, "t_broken"))
	}
	// Adopt and Not mine pass the update's key to their one store call;
	// the others record it first, so a redelivered press changes nothing.
	if p.Action != ActAdopt && p.Action != ActNotMine {
		err := s.store.MarkHandled(ctx, ledger.Action{UserID: p.Update.UserID, At: p.Now, Key: p.Update.Key})
		if ledger.ErrorCode(err) == ledger.EDUPLICATE {
			return answer("")
		}
		if err != nil && p.Update.Key != "" {
			return err
		}
	}
	var toast string
	var err error
	switch p.Action {
	case ActHostStopped:
		toast, err = s.pressStopped(ctx, &u, p)
	case ActHostBilled:
		toast, err = s.pressBilled(ctx, &u, p)
	default:
		toast, err = s.pressInstance(ctx, &u, p)
	}
	if err != nil {
		if ledger.ErrorCode(err) == ledger.EDUPLICATE {
			return answer("")
		}
		if ledger.ErrorCode(err) == ledger.EINTERNAL || ledger.Transient(err) {
			s.log.Error("scheduler: button", "action", p.Action, "payload", p.Payload, "err", err)
			toast = text(lg, "t_internal")
		} else {
			toast = view.LedgerMessage(err, lg, loc, p.Now)
		}
	}
	return answer(toast)
}

// pressInstance handles Log, Other price, Not mine, Reconnect and Revoke.
func (s *Scheduler) pressInstance(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || id < 0 {
		return text(lg, "t_broken"), nil
	}
	es := s.store
	if s.cfg.Enrolment == nil {
		return text(lg, "t_no_enrolment"), nil
	}
	defer s.lockUser(u.ID)()
	if p.Action == ActRevokeEnrol {
		n, err := s.cfg.Enrolment.Revoke(ctx, u.ID)
		if err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_revoked", n), nil, true); err != nil {
				s.log.Error("scheduler: merged card", "user", u.ID, "err", err)
			}
			s.mu.Lock()
			if s.merged[u.ID] == p.Update.MessageID {
				delete(s.merged, u.ID)
			}
			s.mu.Unlock()
		}
		if n == 0 {
			return text(lg, "t_none_to_revoke"), nil
		}
		return text(lg, "t_revoked", n), nil
	}
	in, err := es.Instance(ctx, u.ID, id)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return text(lg, "t_inst_unknown"), nil
	}
	if err != nil {
		return "", err
	}
	boundName := func() string {
		if r, err := s.store.RentalByID(ctx, in.RentalID); err == nil && r.UserID == u.ID {
			return r.Name
		}
		return "?"
	}
	a := ledger.Action{UserID: u.ID, At: p.Now, Key: p.Update.Key}
	switch p.Action {
	case ActAdopt:
		if in.State == ledger.InstanceBound {
			return text(lg, "t_inst_bound", boundName()), nil
		}
		offer, err := s.offerFor(ctx, u, in)
		if err != nil {
			return "", err
		}
		if offer == nil && !currencyKnown(in) {
			return chat.StripHTML(tr(lg, "inst_no_offer_currency", strconv.FormatInt(in.ID, 10))), nil
		}
		r, err := s.cfg.Enrolment.Adopt(ctx, a, in.ID, offer)
		if err != nil {
			return "", err
		}
		msg := AdoptedText(lg, u.Location(), s.now(), r)
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, msg, nil, true); err != nil {
				s.log.Error("scheduler: instance card", "user", u.ID, "err", err)
			}
		}
		s.decideAdopted(ctx, u, r, in, offer)
		s.nextCard(ctx, es, u)
		return text(lg, "t_logged", r.Name), nil
	case ActOtherPrice:
		if in.State == ledger.InstanceBound {
			return text(lg, "t_inst_bound", boundName()), nil
		}
		hint := tr(lg, "inst_other_price", strconv.FormatInt(in.ID, 10))
		if err := s.quietLine(ctx, u, hint); err != nil {
			s.log.Error("scheduler: other price", "user", u.ID, "err", err)
		}
		return chat.StripHTML(hint), nil
	case ActNotMine:
		if in.State == ledger.InstanceBound {
			// A returned copy of a logged instance: nothing changes; it
			// gets no token, and its rental stays.
			name := boundName()
			if p.Update.MessageID != 0 {
				if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_not_reconnected", name), nil, true); err != nil {
					s.log.Error("scheduler: returned card", "user", u.ID, "err", err)
				}
			}
			if err := s.store.MarkHandled(ctx, a); err != nil && ledger.ErrorCode(err) != ledger.EDUPLICATE && a.Key != "" {
				return "", err
			}
			return text(lg, "t_not_reconnected", name), nil
		}
		if _, err := s.cfg.Enrolment.Ignore(ctx, a, in.ID); err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_ignored", instanceWhat(lg, in)), nil, true); err != nil {
				s.log.Error("scheduler: instance card", "user", u.ID, "err", err)
			}
		}
		s.nextCard(ctx, es, u)
		return text(lg, "t_ignored"), nil
	case ActReconnect:
		if in.State != ledger.InstanceBound {
			return text(lg, "t_inst_not_bound"), nil
		}
		r, err := s.cfg.Enrolment.Reconnect(ctx, u.ID, in.ID)
		if err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if c, err := s.store.CardByMessage(ctx, u.ID, p.Update.MessageID); err == nil && c.RentalID == r.ID {
				c.Closed = true
				c.Text = tr(lg, "inst_reconnected", r.Name)
				if err := s.sendCard(ctx, u, &c, c.Text, nil, false, true); err != nil {
					s.log.Error("scheduler: returned card", "user", u.ID, "err", err)
				}
			}
		}
		s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_reconnect_pressed"), ledger.Msg("e_instance", in.Key))
		return text(lg, "t_reconnected", r.Name), nil
	}
	return text(lg, "t_broken"), nil
}

// AdoptedText is the reply to a Log press or /adopt: "✓ Logged as
// runpod-abc123 from 10:02 at $0.79/h. /undo takes it back.", or without
// a price, how to set one.
func AdoptedText(lg string, loc *time.Location, now time.Time, r *ledger.Rental) string {
	from := view.FormatTime(r.StartedAt().Truncate(time.Minute), loc, now, lg)
	if !r.Priced {
		return tr(lg, "inst_logged_unpriced", r.Name, from)
	}
	return tr(lg, "inst_logged", r.Name, from, view.FormatPrice(r.Price, r.Currency, lg))
}

func (s *Scheduler) decideAdopted(ctx context.Context, u *ledger.User, r *ledger.Rental, in ledger.Instance, offer *ledger.PriceOffer) {
	why := ledger.Msg("e_adopted_unpriced", r.StartedAt())
	if offer != nil {
		why = ledger.Msg("e_adopted", r.StartedAt(), view.FormatPrice(offer.Price, offer.Currency, chat.LangEN))
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_adopted", in.Key), why)
}

// parseRange reads "RID.FROM.TO" (unix seconds; TO 0: no resume).
func parseRange(payload string) (rid int64, from, to time.Time, ok bool) {
	parts := strings.Split(payload, ".")
	if len(parts) != 3 {
		return 0, from, to, false
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return 0, from, to, false
		}
		n[i] = v
	}
	if n[0] == 0 || n[1] == 0 || n[2] != 0 && n[2] < n[1] {
		return 0, from, to, false
	}
	from = time.Unix(n[1], 0).UTC()
	if n[2] != 0 {
		to = time.Unix(n[2], 0).UTC()
	}
	return n[0], from, to, true
}

// pressStopped records what the user said: the host was stopped at FROM
// (until TO). It re-checks the rental: a rental no longer running at the
// stop is left as it is.
func (s *Scheduler) pressStopped(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	rid, from, to, ok := parseRange(p.Payload)
	if !ok {
		return text(lg, "t_broken"), nil
	}
	defer s.lockRental(rid)()
	r, _, err := s.ownRental(ctx, u.ID, rid)
	if err != nil {
		return "", err
	}
	if r.State() != ledger.Running {
		return text(lg, "t_host_not_running", r.Name), nil
	}
	got, dup, err := s.recordStop(ctx, u, r, from, to)
	if err != nil {
		return "", err
	}
	if dup {
		return text(lg, "t_host_not_running", r.Name), nil
	}
	var msg string
	if to.IsZero() {
		msg = tr(lg, "host_stopped_done", got.Name, s.when(u, from))
		s.decide(ctx, u, got, ledger.DecisionUser, ledger.Msg("d_host_stopped_pressed"), ledger.Msg("e_stop_at", from))
	} else {
		fromAt, toAt := s.whenSpan(u, from, to)
		msg = tr(lg, "host_cycle_done", got.Name, fromAt, toAt)
		s.decide(ctx, u, got, ledger.DecisionUser, ledger.Msg("d_host_stopped_pressed"), ledger.Msg("e_stop_range", from, to))
	}
	s.closeHostCard(ctx, u, got, p.Update.MessageID, msg)
	return text(lg, "t_recorded"), nil
}

// pressBilled records nothing: the user says the host billed.
func (s *Scheduler) pressBilled(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	rid, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || rid <= 0 {
		return text(lg, "t_broken"), nil
	}
	defer s.lockRental(rid)()
	r, _, err := s.ownRental(ctx, u.ID, rid)
	if err != nil {
		return "", err
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_host_billed_pressed"), ledger.Message{})
	s.closeHostCard(ctx, u, r, p.Update.MessageID, tr(lg, "host_billed_done", r.Name))
	return text(lg, "t_nothing_recorded"), nil
}

// closeHostCard edits the host card the press came from to msg, without
// buttons.
func (s *Scheduler) closeHostCard(ctx context.Context, u *ledger.User, r *ledger.Rental, messageID int, msg string) {
	if messageID == 0 {
		return
	}
	c, err := s.store.CardByMessage(ctx, u.ID, messageID)
	if err != nil || c.RentalID != r.ID {
		return
	}
	c.Closed = true
	if err := s.sendCard(ctx, u, &c, msg, nil, false, true); err != nil {
		s.log.Error("scheduler: host card", "rental", r.ID, "err", err)
	}
}
