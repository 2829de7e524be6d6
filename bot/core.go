package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// AgentTokens issues the token an on-instance agent uses to report for one
// rental (the agent hub implements it). Issue returns the token in clear,
// to be shown once.
type AgentTokens interface {
	// IssueBy issues the token of userID's rental by the person by (a
	// team's member acting on its ledger, else 0), revoking its earlier
	// one; the store keeps who issued it, so their removal from the team
	// revokes it.
	IssueBy(ctx context.Context, userID, by int64, rental string) (token string, err error)
}

// AgentDownloads says whether the server can hand out the agent binary
// that /agent's install command downloads (agent/hub.Downloads does).
// AgentBinary returns the path the binary is served from, and nil when it
// can be served, else why not.
type AgentDownloads interface {
	AgentBinary() (path string, err error)
}

// RentalWatcher is told when a chat command changed whether a rental runs
// (/stop, /resume, /release, or an /undo of one), after the change is
// stored. The agent hub implements it (agent/hub.Tokens): it forgets what
// it cached of the rental, so idle warnings follow the change at once, and
// revokes a released rental's agent token immediately. An error is logged;
// the ledger change stands.
type RentalWatcher interface {
	RentalChanged(ctx context.Context, r *ledger.Rental) error
}

// AutoPolicies keeps each rental's /autorelease policy and the log of
// automatic decisions that /why shows (ledger/sqlite's DB implements it).
type AutoPolicies interface {
	ledger.PolicyStore
}

// AgentStates gives the latest state of a rental's agent as the agent hub
// holds it (agent/hub.Tokens implements it).
type AgentStates interface {
	AgentState(rentalID int64) (ledger.AgentState, bool)
}

// TokenRecords knows whether a rental ever had an agent token
// (ledger/sqlite's DB implements it), so a release says that its token was
// revoked only when there was one.
type TokenRecords interface {
	TokenIssued(ctx context.Context, userID, rentalID int64) (bool, error)
}

// DashboardLinks makes the dashboard's sign-in links for /dashboard and
// the "Open dashboard" buttons (dashboard.Server implements it).
type DashboardLinks interface {
	// Link returns a one-time sign-in link for the user, valid until
	// expires; it signs in whoever opens it first, so it is only ever sent
	// to the user's private chat (or the console).
	Link(ctx context.Context, userID int64) (url string, expires time.Time, err error)
	// AppURL is the Mini App's URL for web-app buttons and the menu
	// button: GPULEDGER_PUBLIC_URL + "/app/" when that is https (Telegram
	// opens no other), "" otherwise.
	AppURL() string
}

// LinkRevoker is implemented by DashboardLinks that can take a link back
// (dashboard.Server does). The bot calls Revoke when a link could not be
// delivered, so that it neither works nor counts among the user's live
// links. An unknown or spent link is no error. It is a separate interface
// so that a DashboardLinks without it still works: its undelivered links
// then simply expire.
type LinkRevoker interface {
	Revoke(ctx context.Context, url string)
}

// Config configures a Core. Store is required; everything else has a
// default.
type Config struct {
	Store ledger.Store
	// Now is the clock, read once per update. Default time.Now.
	Now func() time.Time
	// Logger receives internal errors in full. Default slog.Default().
	Logger *slog.Logger
	// TZ is the IANA zone given to new users (GPULEDGER_TZ); "" means UTC.
	TZ string
	// AllowedUsers may use the bot (GPULEDGER_ALLOWED_USERS). When it is
	// empty and there is no Owner, the bot waits to be claimed: see
	// Core.ClaimCode.
	AllowedUsers []int64
	// Owner is a user who is the owner without claiming: the terminal
	// console's user. 0 for none.
	Owner int64
	// Access decides who may use the bot (LoadAccess), shared with the
	// dashboard and the transport; nil: New loads one from AllowedUsers
	// and Owner.
	Access *Access
	// Buttons signs and routes the buttons of the core, the scheduler
	// and the platform sync; New registers the core's actions with it.
	// nil: buttons made here with Secret (ButtonSecret's key when empty)
	// that word errors with view.ButtonErrors, for a core alone.
	Buttons *chat.Buttons
	// Secret keys the MAC of button data when Buttons is nil. Empty: a
	// random key kept in the store (created at first start), so buttons
	// stay valid across restarts.
	Secret []byte
	// PublicURL is the URL agents use (GPULEDGER_PUBLIC_URL), shown in the
	// install command of /agent.
	PublicURL string
	// AgentTokens issues agent tokens; nil means the agent hub is not
	// running and /agent says so.
	AgentTokens AgentTokens
	// Enrolment issues enrolment tokens (/agent with no name), revokes them
	// (/agent revoke) and logs announced instances (/adopt); nil: those
	// answer that the agent hub is not running.
	Enrolment Enrolment
	// Instances reads announced instances for /adopt; nil: the Store, when
	// it keeps them.
	Instances Instances
	// InstanceCards gives the card of an instance that waits for an answer
	// again after /undo of a Log or a Not mine (the scheduler, which makes
	// the enrolment cards). nil: the reply's /adopt line is the way back.
	InstanceCards InstanceCards
	// AgentDownloads tells /agent whether the install command's download
	// works, so that it can say so when it does not. nil: not checked.
	AgentDownloads AgentDownloads
	// SummaryChart draws the chart sent after /summary, the nightly
	// summary's (view.SummaryChart, which the scheduler draws with too).
	// nil: /summary is text only.
	SummaryChart func(b *ledger.Book, asOf time.Time) (*chat.File, error)
	// Rentals is told when a command stopped, resumed or released a
	// rental (the agent hub's Tokens). nil: nobody is told.
	Rentals RentalWatcher
	// AutoPolicies keeps /autorelease policies and the /why log. nil:
	// /autorelease answers that automatic actions are off, and /why shows
	// neither a policy nor decisions.
	AutoPolicies AutoPolicies
	// AgentStates gives /why who the rental's agent last saw connected.
	// nil: /why says nothing of the agent.
	AgentStates AgentStates
	// TokenRecords tells whether a released rental had an agent token to
	// revoke. nil: a release's reply assumes it had one.
	TokenRecords TokenRecords
	// BotName is the bot's username without '@', so that a group command
	// addressed to another bot is ignored. "" accepts any.
	BotName string
	// ProposalTTL is how long a proposed /rent waits for Confirm. Default 1h.
	ProposalTTL time.Duration
	// Connections connects platform accounts (/connect, /disconnect,
	// /reconcile, and /release's offer to terminate on the platform):
	// connsync.Syncer. nil: those commands answer that platform
	// connections are off, and how to turn them on.
	Connections Connections
	// Dashboard makes /dashboard's one-time links and the Mini App's URL
	// for the "Open dashboard" buttons. nil: /dashboard answers that the
	// dashboard is off, and no button is shown.
	Dashboard DashboardLinks
	// Jobs keeps the job runs of /job and reads what /compare is made
	// of (the benches, job runs and first works of ledger.BenchStore).
	// nil: the Store, when it keeps them; else both say they are off.
	Jobs JobStore
	// Teams keeps the teams (/team, /use, /project, a team's room). nil:
	// the Store, when it keeps them; else those commands say teams are off.
	Teams ledger.TeamStore
	// TeamOutsiders lets a team's invite admit a person outside
	// AllowedUsers (GPULEDGER_TEAM_OUTSIDERS); such a person reaches that
	// team's ledger only. Off by default.
	TeamOutsiders bool
}

// Core is the conversation core: it turns Updates into ledger operations
// and replies, independent of any transport. It is safe for concurrent
// use; updates of one user should be handled in order (the transports do).
type Core struct {
	store     ledger.Store
	now       func() time.Time
	log       *slog.Logger
	tz        string
	acc       *Access
	buttons   *chat.Buttons
	publicURL string
	agents    AgentTokens
	enrol     Enrolment
	insts     Instances
	cards     InstanceCards
	downloads AgentDownloads
	chart     func(b *ledger.Book, asOf time.Time) (*chat.File, error)
	watcher   RentalWatcher
	policies  AutoPolicies
	states    AgentStates
	tokens    TokenRecords
	botName   string
	props     *proposals
	conns     Connections
	dash      DashboardLinks
	links     *linkLimiter
	turns     turns // whether each user's last message was refused, for /undo
	jobs      JobStore
	teams     ledger.TeamStore
	outsiders bool // TeamOutsiders
}

var _ chat.Handler = (*Core)(nil)

// New returns a Core for cfg. It reads the owner, the claim code and the
// button secret from the store, creating the code and the secret on first
// start.
func New(ctx context.Context, cfg Config) (*Core, error) {
	if cfg.Store == nil {
		return nil, errors.New("bot: config: Store is required")
	}
	if cfg.TZ != "" {
		if _, err := time.LoadLocation(cfg.TZ); err != nil {
			return nil, fmt.Errorf("bot: config: TZ %q: %w", cfg.TZ, err)
		}
	}
	if cfg.Connections != nil {
		if err := checkPlatforms(cfg.Connections.Platforms()); err != nil {
			return nil, err
		}
	}
	c := &Core{
		store:     cfg.Store,
		now:       cfg.Now,
		log:       cfg.Logger,
		tz:        cfg.TZ,
		publicURL: cfg.PublicURL,
		agents:    cfg.AgentTokens,
		enrol:     cfg.Enrolment,
		insts:     cfg.Instances,
		cards:     cfg.InstanceCards,
		downloads: cfg.AgentDownloads,
		chart:     cfg.SummaryChart,
		watcher:   cfg.Rentals,
		policies:  cfg.AutoPolicies,
		states:    cfg.AgentStates,
		tokens:    cfg.TokenRecords,
		botName:   cfg.BotName,
		conns:     cfg.Connections,
		dash:      cfg.Dashboard,
		links:     newLinkLimiter(),
		buttons:   cfg.Buttons,
		jobs:      cfg.Jobs,
		teams:     cfg.Teams,
		outsiders: cfg.TeamOutsiders,
	}
	if c.teams == nil {
		c.teams, _ = cfg.Store.(ledger.TeamStore)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	ttl := cfg.ProposalTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	c.props = newProposals(ttl)
	c.acc = cfg.Access
	if c.acc == nil {
		acc, err := LoadAccess(ctx, cfg.Store, cfg.AllowedUsers, cfg.Owner)
		if err != nil {
			return nil, err
		}
		c.acc = acc
	}
	if !cfg.TeamOutsiders {
		c.acc.forgetOutsiders() // the operator turned it off: those admitted so far are strangers again
	}
	if c.buttons == nil {
		key, err := loadSecret(ctx, cfg.Store, cfg.Secret)
		if err != nil {
			return nil, err
		}
		c.buttons = chat.NewButtons(key, view.ButtonErrors(c.log))
	}
	c.handleButtons()
	return c, nil
}

// ClaimCode is the core's Access's ClaimCode.
func (c *Core) ClaimCode() string { return c.acc.ClaimCode() }

// WaitingForClaim is the core's Access's WaitingForClaim.
func (c *Core) WaitingForClaim() bool { return c.acc.WaitingForClaim() }

// req is one update being handled: the clock read once, the user and
// their language and zone.
type req struct {
	c    *Core
	ctx  context.Context
	u    chat.Update
	s    chat.Sender
	now  time.Time
	user ledger.User // the sender's own user: their language, zone and settings
	// ledgerID is the ledger this update reads and writes: the sender's
	// own (their user ID) or, after /use TEAM or in a team's room, the
	// team's (ledger.TeamLedger). team is that team with the sender's
	// place in it; nil on their own ledger. core_team.go sets both.
	ledgerID int64
	team     *ledger.Membership
	// lu is the user row of the ledger in use: r.user on their own, the
	// team ledger's row on a team (its settings, budget currency, summary
	// time and zone for money days). The reply's language stays r.lang.
	lu   ledger.User
	lang string
	loc  *time.Location
	// tagged is set once a reply on a team's ledger began with the
	// team's tag (teamTag), so only the first reply carries it.
	tagged bool
	// marked is set once the update's key is recorded, so an error after
	// that (a hub call) is still answered.
	marked bool
	// priv routes the answer of a command sent in a group to the sender's
	// private chat (group.go).
	priv privateReply
	// failed is set when the update was answered with an error (a line
	// of a multi-line message that did not apply).
	failed bool
	// inLines is set for a line of a multi-line message.
	inLines bool
	// confirmed is set while a proposal's choice runs: the user chose it,
	// so the checks that held it (typo.go) are not made again.
	confirmed bool
	// rejected is set when the message was answered as not understood
	// (an unknown command, text the bot cannot act on): a refusal as much
	// as a failed command, for /undo.
	rejected bool
	// editID, when set, is the message whose buttons were pressed: the
	// first plain reply edits it in place instead of following it, and
	// the press is answered "✓" just before.
	editID int
}

// lateAfter is how much earlier than the clock an update's SentAt must be
// for the core to take it as the command's time. Telegram's message dates
// are whole seconds, so for an update handled at once the clock is the
// finer measure; one handled later (a backlog, a full disk, a restart)
// is recorded when it was sent.
const lateAfter = 2 * time.Second

// commandTime is the moment an update's command happened: when it was
// sent if it is handled late, else the clock.
func commandTime(now time.Time, u chat.Update) time.Time {
	if !u.SentAt.IsZero() && u.SentAt.Before(now.Add(-lateAfter)) {
		return u.SentAt
	}
	return now
}

// Allowed reports whether userID may use the ledger (the allow list, the
// owner), so a transport can store allowed users' updates and treat
// others as strangers. It reads no store.
func (c *Core) Allowed(userID int64) bool { return c.acc.Allowed(userID) }

// Handle processes one update. It returns an error only when the update
// should be delivered again later (the database is unavailable); bad input
// is answered, and a redelivered update that was already applied changes
// nothing and is not answered twice, unless u.Redelivered says the first
// answer may be lost: then it is answered from what was stored.
func (c *Core) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	if u.RoomEvent() {
		return c.roomEvent(ctx, u, s) // Telegram's news about a group, whoever caused it (core_room.go)
	}
	r := &req{c: c, ctx: ctx, u: u, s: s, now: commandTime(c.now(), u), lang: chat.NormLang(u.LangCode), loc: time.UTC}
	if u.ChatType == chat.ChatChannel || u.UserID == 0 {
		return nil // channel posts have no sender to answer
	}
	if u.Edited {
		if holdsSecret(u.Text) {
			r.deleteSecret() // an API key edited into a message: not run, but not left in the chat
		}
		return r.fail(r.mark()) // the original was handled; a change is not re-run
	}
	if !c.acc.Allowed(u.UserID) {
		return r.fail(r.stranger())
	}
	user, err := c.ensureUser(ctx, u)
	if err != nil {
		return r.fail(err)
	}
	r.user, r.lang, r.loc = user, chat.NormLang(user.Lang), user.Location()
	if err := r.resolveLedger(); err != nil {
		return r.fail(err)
	}
	if r.team == nil && !c.acc.Personal(u.UserID) {
		// Admitted to a team from outside the allow list, and in none now:
		// a stranger again (a new invite code admits them again).
		c.acc.Forget(u.UserID)
		return r.fail(r.stranger())
	}
	if err := r.loadLedgerUser(); err != nil {
		return r.fail(err)
	}
	switch u.Kind {
	case chat.KindCallback:
		err := r.fail(r.callback())
		c.turns.set(u.UserID, r.refused())
		return err
	case chat.KindText:
		err := r.fail(r.text())
		c.turns.set(u.UserID, r.refused())
		if err == nil {
			r.tellGroup()
		}
		return err
	}
	// Stickers, photos, voice: a hint in private chats, nothing in groups.
	// A caption that may hold an API key (one that is not a command: a
	// command's is handled as text) is not run, but not left in the chat.
	if holdsSecret(u.Text) {
		r.deleteSecret()
	}
	if u.ChatType == chat.ChatPrivate {
		return r.fail(r.answer(r.plain(r.t("text_only"))))
	}
	return r.fail(r.mark())
}

// ensureUser returns the sender's user, registering a new one with the
// language of their client and the default zone. The read comes first so
// that the common case writes nothing.
func (c *Core) ensureUser(ctx context.Context, u chat.Update) (ledger.User, error) {
	user, err := c.store.User(ctx, u.UserID)
	if err == nil {
		return user, nil
	}
	if ledger.ErrorCode(err) != ledger.ENOTFOUND {
		return ledger.User{}, err
	}
	return c.store.EnsureUser(ctx, ledger.User{ID: u.UserID, Lang: chat.NormLang(u.LangCode), TZ: c.tz})
}

// text handles a text message from an allowed user.
func (r *req) text() error {
	if r.u.Forwarded && holdsConnect(r.u.Text) {
		return platforms{r}.connectNotRun("conn_forwarded")
	}
	if r.u.Forwarded {
		if r.u.ChatType != chat.ChatPrivate {
			return r.mark()
		}
		return r.answer(r.plain(r.t("forwarded")))
	}
	lines := commandLines(r.u.Text)
	if len(lines) > 1 && holdsConnect(r.u.Text) {
		return platforms{r}.connectNotRun("conn_alone")
	}
	if len(lines) > 1 {
		return r.lines(lines)
	}
	cmd, err := command.ParseFor(r.c.botName, r.u.Text, r.now, r.loc)
	if err != nil {
		var pe *command.ParseError
		if errors.As(err, &pe) && (pe.Key == "unknown_command" || pe.Key == "unknown_command_near") {
			if r.u.ChatType != chat.ChatPrivate {
				return r.mark() // perhaps another bot's: stay quiet in groups
			}
			r.rejected = true
			if pe.Key == "unknown_command_near" {
				return r.answer(r.plain(r.t("unknown_command_near", firstWord(r.u.Text), pe.Args[1]) + platforms{r}.nearConnect(pe.Args[1])))
			}
			return r.answer(r.plain(r.t("unknown_command", firstWord(r.u.Text))))
		}
		return err
	}
	if r.u.ChatType != chat.ChatPrivate && !isCommand(r.u.Text) {
		if _, ok := cmd.(command.HelpCmd); !ok {
			return r.mark() // a group's talk ("status", "stopped box1") is not addressed to the bot
		}
	}
	if err := r.dispatch(cmd); err != nil {
		return err
	}
	if !r.refused() && noUndo(cmd) {
		r.noteNoUndo()
	}
	return nil
}

// refused reports whether the update was answered with a refusal: a
// failed command, one line of several that failed, or a message not
// understood.
func (r *req) refused() bool { return r.failed || r.rejected }

// stranger answers someone who may not use the bot: the owner's claim,
// else one refusal and then silence.
func (r *req) stranger() error {
	c := r.c
	r.lang = chat.NormLang(r.u.LangCode)
	if r.u.Kind != chat.KindCallback && holdsSecret(r.u.Text) {
		// Nothing of a stranger's is stored or run, but an API key sent
		// to the bot should not stay readable in the chat either.
		r.deleteSecret()
	}
	if r.u.Kind == chat.KindText && !r.u.Forwarded {
		if cmd, err := command.Parse(r.u.Text, r.now, time.UTC); err == nil {
			if code, ok := joinCode(cmd); ok && r.u.ChatType == chat.ChatPrivate && c.outsiders && c.teams != nil {
				return r.strangerJoin(code) // GPULEDGER_TEAM_OUTSIDERS: a team's invite admits them
			}
			if code, ok := joinCode(cmd); ok && r.u.ChatType != chat.ChatPrivate && c.teams != nil {
				if !c.acc.joinAllowed(r.u.UserID) {
					return r.mark()
				}
				c.acc.joinFailed(r.u.UserID) // a stranger's codes in groups count as tries
				return r.burnGroupCode(code) // a code anyone in the group could use
			}
			// Claims only in private: the code is not for a group to read,
			// and the owner's private chat is where the bot answers.
			if st, ok := cmd.(command.StartCmd); ok && st.Code != "" && c.acc.claimable() && r.u.ChatType == chat.ChatPrivate {
				if err := r.mark(); err != nil {
					return err
				}
				res, err := c.acc.claim(r.ctx, r.u.UserID, st.Code)
				if err != nil {
					return err
				}
				switch res {
				case claimOK:
					if _, err := c.ensureUser(r.ctx, r.u); err != nil {
						return err
					}
					c.log.Info("bot: claimed by its owner", "user", r.u.UserID)
					return r.send(r.plain(r.t("claimed")))
				case claimWrong:
					return r.send(r.plain(r.t("claim_wrong")))
				case claimSilence:
					return nil
				}
			}
		}
	}
	if r.u.ChatType != chat.ChatPrivate && !(r.u.Kind == chat.KindText && isCommand(r.u.Text)) {
		return r.mark() // group chatter and stickers are not addressed to the bot
	}
	if err := r.mark(); err != nil {
		return err
	}
	if r.u.Kind == chat.KindCallback {
		r.ack("")
		return nil
	}
	first, err := c.acc.firstRefusal(r.ctx, r.u.UserID)
	if err != nil || !first {
		return err
	}
	key := "refused"
	if c.acc.claimable() {
		key = "refused_claim"
	}
	return r.send(r.plain(r.t(key)))
}

// mark records the update's key for an update that changes nothing, so a
// redelivery is recognised (EDUPLICATE). Without a key (the console) there
// is nothing to record, except a refusal: the journal keeps that a
// registered user's message was refused (ActionRefused), with the key
// where there is one, so that /undo right after it asks first even after
// a restart. That costs nothing more for a keyed update (its key is
// recorded either way) and one row per refused line in the console.
func (r *req) mark() error {
	if r.marked {
		return nil
	}
	if r.refused() && r.user.ID != 0 && !r.inLines {
		if err := r.c.store.Note(r.ctx, ledger.Action{UserID: r.u.UserID, At: r.now, Key: r.u.Key}, ledger.ActionRefused); err != nil {
			return err
		}
		r.marked = true
		return nil
	}
	if r.u.Key == "" {
		return nil
	}
	if err := r.c.store.MarkHandled(r.ctx, ledger.Action{UserID: r.u.UserID, At: r.now, Key: r.u.Key}); err != nil {
		return err
	}
	r.marked = true
	return nil
}

// act is the ledger action of this update: who, when (the clock read
// once), the key that makes it apply once, and how it came (typed or a
// button's), which /undo weighs.
func (r *req) act() ledger.Action {
	via := ledger.ViaCommand
	if r.u.Kind == chat.KindCallback {
		via = ledger.ViaButton
	}
	a := ledger.Action{UserID: r.u.UserID, At: r.now, Key: r.u.Key, Via: via}
	if r.team != nil {
		a.UserID, a.By = r.ledgerID, r.u.UserID
	}
	return a
}

// answer sends the reply to a question: the key is recorded first, so a
// redelivered question is not answered twice, unless the transport says
// its earlier answer was not kept (Redelivered): then it is answered again.
func (r *req) answer(out chat.Outgoing) error {
	if err := r.mark(); err != nil {
		if !r.u.Redelivered || ledger.ErrorCode(err) != ledger.EDUPLICATE {
			return err
		}
	}
	return r.send(out)
}

// send delivers a reply. A failed send is logged, not returned: the ledger
// change (if any) is done, and a redelivery would not answer again. While
// a group command is answered privately (r.priv.on), a reply meant for the
// group goes to the sender's private chat instead.
func (r *req) send(out chat.Outgoing) error {
	if out.ChatID == 0 {
		out.ChatID = r.u.ChatID
	}
	if r.editID != 0 && out.ChatID == r.u.ChatID && out.EditMessageID == 0 && len(out.Buttons) == 0 && out.Document == nil && out.Photo == nil {
		out.EditMessageID, r.editID = r.editID, 0
		r.ack("✓")
	}
	private := r.priv.on && out.ChatID == r.u.ChatID && r.u.ChatType != chat.ChatPrivate
	r.tag(&out)
	if private {
		if r.priv.closed {
			return nil
		}
		out.ChatID, out.EditMessageID = r.u.UserID, 0
	}
	_, err := r.s.Send(r.ctx, out)
	switch {
	case err == nil:
		r.priv.sent = r.priv.sent || private
	case private && errors.Is(err, chat.ErrNoPrivateChat):
		r.priv.closed = true
		r.c.log.Info("bot: a group command's answer cannot go to the sender's private chat: it is not open", "user", r.u.UserID)
	default:
		r.priv.failed = r.priv.failed || private
		r.c.log.Warn("bot: send reply", "chat", out.ChatID, "err", err)
	}
	return nil
}

// ack answers the button press of this update with an optional toast. A
// failure is logged only: the press has been handled either way.
func (r *req) ack(text string) {
	if err := r.s.AnswerCallback(r.ctx, r.u.CallbackID, clip.Runes(chat.StripHTML(text), 190, "…")); err != nil {
		r.c.log.Warn("bot: answer callback", "user", r.u.UserID, "err", err)
	}
}

func (r *req) plain(text string) chat.Outgoing { return chat.Outgoing{ChatID: r.u.ChatID, Text: text} }

// fail turns a handler's error into a reply and Handle's result: nothing
// for a redelivered update; the user-facing text for ledger and parse
// errors (the key recorded so it is said once); a generic text for
// internal errors, logged in full; and an error for transient failures so
// the transport delivers the update again.
func (r *req) fail(err error) error {
	if err == nil {
		return nil
	}
	code := ledger.ErrorCode(err)
	if code == ledger.EDUPLICATE {
		return r.alreadyApplied()
	}
	if ledger.Transient(err) {
		r.c.log.Warn("bot: transient failure, the update will be retried", "key", r.u.Key, "user", r.u.UserID, "err", err)
		return fmt.Errorf("bot: handle update %s: %w", r.u.Key, err)
	}
	text := r.errorText(err)
	r.failed = true
	if code == ledger.EINTERNAL {
		r.c.log.Error("bot: internal error", "key", r.u.Key, "user", r.u.UserID, "kind", r.u.Kind, "err", err)
	}
	if merr := r.mark(); merr != nil {
		if ledger.ErrorCode(merr) == ledger.EDUPLICATE && !r.u.Redelivered {
			return nil // answered by the first delivery
		}
		if ledger.Transient(merr) {
			return fmt.Errorf("bot: handle update %s: %w", r.u.Key, merr)
		}
		if ledger.ErrorCode(merr) != ledger.EDUPLICATE {
			r.c.log.Error("bot: record handled update", "key", r.u.Key, "err", merr)
		}
	}
	if r.u.Kind == chat.KindCallback {
		r.ack(text)
		return nil
	}
	return r.send(r.plain(text))
}

// alreadyApplied answers an update whose change an earlier delivery
// applied. Usually that delivery was answered and there is nothing to say;
// when the transport says its answer may not have been kept
// (Redelivered: a crash between the change and the answer), the answer is
// rebuilt from what was stored: the change stands, as the user sent it.
func (r *req) alreadyApplied() error {
	if !r.u.Redelivered {
		return nil
	}
	if r.u.Kind == chat.KindCallback {
		r.ack(r.t("already_done"))
		return nil
	}
	if r.u.Kind != chat.KindText {
		return nil
	}
	return r.send(r.plain(r.t("already_recorded", clip.Runes(redactSecrets(r.u.Text), 200, "…"))))
}

// errorText renders an error for the user in their language.
func (r *req) errorText(err error) string {
	var pe *command.ParseError
	if errors.As(err, &pe) {
		return "✗ " + chat.Escape(parseErrorText(pe, r.lang))
	}
	code := ledger.ErrorCode(err)
	if code == ledger.EINTERNAL {
		return r.t("internal")
	}
	// On a team's ledger a missing rental is the team's, not the
	// sender's: "you have no rental named box9" would send them to their
	// own /status.
	var le *ledger.Error
	if r.team != nil && errors.As(err, &le) && le.Key == "no_rental_named" && len(le.Args) == 1 {
		msg := teamTexts.Text(r.lang, "team_no_rental_named", r.team.Team.Name, fmt.Sprint(le.Args[0]))
		return "✗ " + chat.Escape(nothingChanged(le.Code, msg, r.lang))
	}
	return "✗ " + chat.Escape(ledgerErrorText(err, r.lang, r.loc, r.now))
}

func firstWord(s string) string {
	for i, c := range s {
		if c == ' ' || c == '\n' || c == '\t' {
			return clip.Runes(s[:i], 40, "…")
		}
	}
	return clip.Runes(s, 40, "…")
}

func isCommand(s string) bool {
	for _, c := range s {
		return c == '/' || c == '／'
	}
	return false
}
