package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Connections is what the chat needs from the platform connectors
// (connsync.Syncer implements it): /connect, /disconnect, /reconcile, and
// whether /release should offer to terminate a rental on its platform.
// Implementations are safe for concurrent use and never log or return the
// key; every method is bounded by ctx, so a slow platform never holds the
// chat longer than the caller allows.
type Connections interface {
	// Connect checks key with one harmless call to platform and, when the
	// platform accepts it, stores it sealed as the user's connector for
	// that platform (replacing an earlier key). It returns the stored
	// connector (Hint, AddedAt, CheckedAt set). Errors: errors.Is
	// connector.ErrUnauthorized (the platform rejected the key),
	// connector.ErrUnavailable, *connector.RateLimitedError,
	// connector.ErrBadAnswer (nothing stored; try again later), a
	// ledger.Error EINVALID (an unknown platform, an unusable key).
	Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error)
	// Connectors returns the user's connectors by platform name.
	Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error)
	// Disconnect removes the user's connector for platform: rentals keep
	// their platform IDs and nothing is released. Errors: ENOTFOUND (none).
	Disconnect(ctx context.Context, userID int64, platform string) error
	// Reconcile compares the ledger with what each connected platform
	// billed in [from, to), one Reconciliation per connector; a platform
	// whose side could not be read has Err set rather than failing the
	// call.
	Reconcile(ctx context.Context, userID int64, from, to time.Time) ([]ledger.Reconciliation, error)
	// Live reports whether the rental is an instance of a connected platform that the platform
	// still lists as not terminated (so /release can offer to terminate it there).
	Live(ctx context.Context, r *ledger.Rental) (platform string, ok bool)
	// Platforms are the platforms Connect accepts, in the order /connect
	// lists them, each with where its key is made (connsync.Syncer's, the
	// server's one list).
	Platforms() connector.Registry
}

// Button actions of /release's offer for a rental still live on its
// platform.
const (
	// actPlatformTerminate terminates the rental's instance through the
	// platform's API (payload: the rental ID). The scheduler registers its
	// handler with the chat.Buttons; the core only makes the button.
	actPlatformTerminate = "pterm"
	// actPlatformLog records the release without touching the platform
	// (payload: "RENTALID.UNIXTIME", the release's time).
	actPlatformLog = "plog"
)

// Bounds on the calls the chat makes to the connections: Connect checks
// the key with one platform call, Reconcile reads each platform's bill,
// Live reads what the last sync stored. A slow platform makes the user
// wait at most this long, never the other users (the transports handle
// each user in order, users in parallel).
const (
	connectTimeout   = 45 * time.Second
	reconcileTimeout = 90 * time.Second
	liveTimeout      = 5 * time.Second
)

// deletion is what became of a message that held a secret.
type deletion int

const (
	delNone   deletion = iota // the transport keeps no messages (the console)
	delDone                   // deleted
	delFailed                 // the chat service refused: the user must delete it
)

// deleteSecret deletes the update's message, which holds (or may hold) an
// API key. It is called before anything else is done with the message.
func (r *req) deleteSecret() deletion {
	d, ok := r.s.(chat.Deleter)
	if !ok || r.u.MessageID == 0 {
		return delNone
	}
	if err := d.DeleteMessage(r.ctx, r.u.ChatID, r.u.MessageID); err != nil {
		r.c.log.Warn("bot: could not delete a message that holds an API key", "user", r.u.UserID, "chat", r.u.ChatID, "message", r.u.MessageID, "err", err)
		return delFailed
	}
	return delDone
}

// deletionNote tells the user what became of their message.
func (r *req) deletionNote(d deletion) string {
	switch d {
	case delDone:
		return r.ct("conn_deleted")
	case delFailed:
		return r.ct("conn_delete_failed")
	}
	return r.ct("conn_nothing_kept")
}

// platformTitle is a platform's display name ("RunPod"), or its key.
func platformTitle(key string) string {
	if p, ok := ledger.LookupProfile(key); ok && p.Name != "" {
		return p.Name
	}
	return key
}

// connectWord reports whether line is a /connect command (any alias,
// "/connect@bot" too).
func connectWord(line string) bool {
	f := strings.Fields(command.Normalize(line))
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return false
	}
	head, _, _ := strings.Cut(f[0][1:], "@")
	return command.KindOf(strings.ToLower(head)) == command.KindConnect
}

// holdsConnect reports whether any line of text is a /connect command.
func holdsConnect(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if connectWord(line) {
			return true
		}
	}
	return false
}

// HoldsSecret reports whether text may hold a platform API key: a word
// anywhere in it that is a /connect (any alias, "/connect@bot" too), or
// a mistyped one ("/conect") with words beside it. It errs on the side
// of a secret. The Telegram transport asks it before storing an update,
// so that such a text never reaches the database in the clear.
func (c *Core) HoldsSecret(text string) bool { return holdsSecret(text) }

func holdsSecret(text string) bool {
	f := strings.Fields(command.Normalize(text))
	for _, w := range f {
		if !strings.HasPrefix(w, "/") || len(w) < 2 {
			continue
		}
		head, _, _ := strings.Cut(w[1:], "@")
		head = strings.ToLower(head)
		if kind := command.KindOf(head); kind != "" {
			if kind == command.KindConnect {
				return true
			}
			continue
		}
		if len(f) < 2 {
			continue
		}
		for _, near := range command.NearCommands(head) {
			if command.KindOf(near) == command.KindConnect {
				return true
			}
		}
	}
	return false
}

// redactSecrets returns text with every word of a /connect line that is
// not a platform's name replaced by one "<key removed>", for anything
// that repeats a user's message back.
func redactSecrets(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if !connectWord(line) {
			continue
		}
		f := strings.Fields(command.Normalize(line))
		out, removed := f[:1], false
		for _, w := range f[1:] {
			if _, _, known := command.ConnectPlatform(w); known {
				out = append(out, w) // a platform's name is no secret
			} else if !removed {
				out, removed = append(out, "<key removed>"), true
			}
		}
		lines[i] = strings.Join(out, " ")
	}
	return strings.Join(lines, "\n")
}

// connectNotRun answers a message that holds a /connect but is not run:
// one of several lines (a key must come alone, so that its message can be
// deleted without losing other commands' text: key "conn_alone"), or a
// forwarded one ("conn_forwarded"). The message is deleted all the same.
func (r platforms) connectNotRun(key string) error {
	d := r.deleteSecret()
	if r.u.ChatType != chat.ChatPrivate {
		return r.answer(r.plain(r.groupExposed("", d)))
	}
	return r.answer(r.plain(r.ct(key) + "\n" + r.deletionNote(d)))
}

// nearConnect deletes a mistyped /connect ("/conect runpod KEY": the
// suggestion names /connect) that has words after the command, since they
// may be a key, and returns the note to add to the reply ("" otherwise).
func (r platforms) nearConnect(suggestion string) string {
	if !strings.Contains(suggestion, "/"+string(command.KindConnect)) || len(strings.Fields(r.u.Text)) < 2 {
		return ""
	}
	return "\n" + r.deletionNote(r.deleteSecret())
}

// groupExposed is the reply to a key sent in a group.
func (r platforms) groupExposed(platform string, d deletion) string {
	what := r.ct("conn_group_deleted")
	if d != delDone {
		what = r.ct("conn_group_delete_failed")
	}
	name, cmd := "the platform", "PLATFORM"
	if chat.NormLang(r.lang) == chat.LangZH {
		name, cmd = "平台", "平台"
	}
	if platform != "" {
		name, cmd = platformTitle(platform), platform
	}
	return r.ct("conn_group", r.mention(), chat.RawHTML(what), name, cmd)
}

// platforms is the family of the platform accounts the sync reads:
// /connect, /disconnect, /reconcile and the platform's "only record it"
// button. A /connect places itself in a group (dispatchCmd skips the
// group's placement for it): a key sent there is deleted.
type platforms struct{ *req }

func (platforms) register(t *table) {
	on(t, platforms.connect)
	on(t, platforms.disconnect)
	on(t, platforms.reconcile)
}

// connect handles /connect: the message is deleted first when it may hold
// a key; in a group nothing is stored (the group saw the key). The key is
// passed to Connections.Connect and dropped; the reply shows its hint.
func (r platforms) connect(c command.ConnectCmd) error {
	group := r.u.ChatType != chat.ChatPrivate
	d := delNone
	if c.Secret {
		d = r.deleteSecret()
		if group {
			return r.answer(r.plain(r.groupExposed(c.Platform, d)))
		}
	}
	if group {
		r.priv.on = true // the listing is the user's own
	}
	note := ""
	if c.Secret {
		note = "\n" + r.deletionNote(d)
	}
	if c.Err != nil {
		return r.answer(r.plain("✗ " + chat.Escape(parseErrorText(c.Err, r.lang)) + note))
	}
	if r.c.conns == nil {
		return r.answer(r.plain(r.ct("conn_off") + note))
	}
	if c.Key == "" {
		return r.listConnections()
	}
	if err := r.adminOnly(); err != nil {
		return err // a team's platform accounts are connected by its admins
	}
	ctx, cancel := context.WithTimeout(r.ctx, connectTimeout)
	conn, err := r.c.conns.Connect(ctx, r.ledgerID, c.Platform, c.Key)
	cancel()
	if err != nil {
		if text, ok := r.connectError(c.Platform, err); ok {
			return r.answer(r.plain(text + note))
		}
		return scrubKey(err, c.Key)
	}
	return r.answer(r.plain(r.ct("conn_ok", platformTitle(c.Platform), r.hint(conn.Hint)) + note))
}

// connectError renders what kept a key from being stored; ok is false for
// errors that are not about the key or the platform (the store's), which
// the caller returns.
func (r platforms) connectError(platform string, err error) (string, bool) {
	name := platformTitle(platform)
	var rl *connector.RateLimitedError
	switch {
	case errors.Is(err, connector.ErrUnauthorized):
		return r.ct("conn_rejected", name, chat.RawHTML(r.keyWhere(platform))), true
	case errors.As(err, &rl):
		return r.ct("conn_rate_limited", name, chat.FormatDuration(max(rl.RetryAfter, time.Second), r.lang)), true
	case errors.Is(err, connector.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return r.ct("conn_unavailable", name), true
	case errors.Is(err, connector.ErrBadAnswer):
		return r.ct("conn_bad_answer", name), true
	case ledger.ErrorCode(err) == ledger.EINVALID:
		return r.ct("conn_invalid", r.c.conns.Platforms().String()), true
	}
	return "", false
}

// checkPlatforms refuses platforms the chat cannot serve, so that a slip
// in the server's list shows at start and not to a user: one /connect
// does not read, one without words in the catalog for where its key is
// made ("where_" + its key), and one whose words do not take its spec's
// key page, or take one it has not.
func checkPlatforms(ps connector.Registry) error {
	var errs []error
	for _, s := range ps {
		if !slices.Contains(command.ConnectPlatforms, s.Key) {
			errs = append(errs, fmt.Errorf("bot: config: /connect does not read %s (ConnectPlatforms)", s.Key))
		}
		m, ok := connectTexts["where_"+s.Key]
		if !ok {
			errs = append(errs, fmt.Errorf("bot: config: no words for where a %s key is made (where_%s)", s.Key, s.Key))
			continue
		}
		if takes := strings.Contains(m[0], "%[1]s"); takes != (s.KeyPage != "") {
			errs = append(errs, fmt.Errorf("bot: config: where_%s takes a key page: %v; %s's spec names %q", s.Key, takes, s.Key, s.KeyPage))
		}
	}
	return errors.Join(errs...)
}

// keyWhere says where a platform's key is created, capitalised: the
// catalog's words for the platform ("where_" + its key) around the page
// its spec names.
func (r platforms) keyWhere(platform string) string {
	var args []any
	if s, ok := r.c.conns.Platforms().Lookup(platform); ok && s.KeyPage != "" {
		args = append(args, s.KeyPage)
	}
	s := r.ct("where_"+platform, args...)
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// hint shows a key's hint: "…abcd", or "hidden" for a key too short to
// show any of.
func (r platforms) hint(h string) string {
	if h == "" {
		return r.ct("conn_no_hint")
	}
	return r.ct("conn_hint", h)
}

// listConnections answers /connect alone: each connector with its state,
// then the platforms not connected and where to create their keys.
func (r platforms) listConnections() error {
	cs, err := r.c.conns.Connectors(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString(r.ct("conn_list_head"))
	have := map[string]bool{}
	for _, c := range cs {
		have[c.Platform] = true
		sb.WriteString("\n")
		name, added := platformTitle(c.Platform), r.when(c.AddedAt)
		if c.Rejected() {
			sb.WriteString(r.ct("conn_list_rejected", name, r.hint(c.Hint), added, r.when(c.RejectedAt), c.Platform))
			continue
		}
		sync := r.ct("conn_never_synced")
		if !c.LastSyncAt.IsZero() {
			sync = r.ct("conn_synced", r.when(c.LastSyncAt))
		}
		sb.WriteString(r.ct("conn_list_line", name, r.hint(c.Hint), added, chat.RawHTML(sync)))
		if c.LastError != "" {
			sb.WriteString("\n" + r.ct("conn_last_error", clip.Runes(c.LastError, 200, "…")))
		}
	}
	if len(cs) == 0 {
		sb.WriteString("\n" + r.ct("conn_list_none"))
	}
	first := true
	for _, p := range r.c.conns.Platforms().Keys() {
		if have[p] {
			continue
		}
		if first {
			sb.WriteString("\n\n" + r.ct("conn_list_missing"))
			first = false
		}
		sb.WriteString("\n" + r.ct("conn_list_where", platformTitle(p), chat.RawHTML(r.keyWhere(p)), p))
	}
	return r.answer(r.plain(sb.String()))
}

// disconnect handles /disconnect PLATFORM.
func (r platforms) disconnect(c command.DisconnectCmd) error {
	if r.c.conns == nil {
		return r.answer(r.plain(r.ct("conn_off")))
	}
	if err := r.adminOnly(); err != nil {
		return err
	}
	err := r.c.conns.Disconnect(r.ctx, r.ledgerID, c.Platform)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return r.answer(r.plain(r.ct("not_connected", platformTitle(c.Platform))))
	}
	if err != nil {
		return err
	}
	return r.answer(r.plain(r.ct("disconnected", platformTitle(c.Platform), c.Platform)))
}

// reconcile handles /reconcile [YYYY-MM].
func (r platforms) reconcile(c command.ReconcileCmd) error {
	if r.c.conns == nil {
		return r.answer(r.plain(r.ct("conn_off")))
	}
	ctx, cancel := context.WithTimeout(r.ctx, reconcileTimeout)
	rs, err := r.c.conns.Reconcile(ctx, r.ledgerID, c.From, c.To)
	cancel()
	if err != nil {
		return err
	}
	return r.answer(r.plain(view.ReconcileText(r.lang, r.loc, rs)))
}

// platformLog handles [Only record it]: the release is recorded as
// /release records it, at the time of the /release, keyed by the press.
func (r platforms) platformLog(payload string) error {
	idS, atS, _ := strings.Cut(payload, ".")
	id, err1 := strconv.ParseInt(idS, 10, 64)
	sec, err2 := strconv.ParseInt(atS, 10, 64)
	if err1 != nil || err2 != nil {
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.t("button_stale"))
		return nil
	}
	x, err := r.rentalByID(id)
	if err != nil {
		return err
	}
	if x.State() == ledger.Released {
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.ct("plog_released"))
		return nil
	}
	r.editID = r.u.MessageID
	if err := (rentals{r.req}).event(x.Name, ledger.Event{Kind: ledger.EventRelease, At: time.Unix(sec, 0).UTC()}); err != nil {
		r.editID = 0
		return err
	}
	if r.editID != 0 {
		r.ack("✓")
	}
	return nil
}

// rentalByID returns the user's rental id; ENOTFOUND for another user's.
func (r platforms) rentalByID(id int64) (*ledger.Rental, error) {
	x, err := r.c.store.RentalByID(r.ctx, id)
	if err != nil {
		return nil, err
	}
	if x.UserID != r.ledgerID {
		return nil, ledger.Errorf(ledger.ENOTFOUND, "no rental %d", id)
	}
	return x, nil
}

// keyScrubbed is an error whose text had the key taken out; errors.Is and
// errors.As still see the original.
type keyScrubbed struct {
	err error
	msg string
}

func (e *keyScrubbed) Error() string { return e.msg }
func (e *keyScrubbed) Unwrap() error { return e.err }

// scrubKey returns err with key removed from its text, so that no log
// line or reply built from it holds the key.
func scrubKey(err error, key string) error {
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return &keyScrubbed{err: err, msg: strings.ReplaceAll(err.Error(), key, "<key removed>")}
}
