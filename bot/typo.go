package bot

import (
	"slices"
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// Typos must not create things. A command that would record money or a
// rental on a name that matches nothing the user has, and no platform the
// ledger knows, is held: the reply names the near candidates (near.go) and
// offers [Use NAME] for each, [Create NAME as a new platform/name] and
// [Cancel]; the held command, corrected or as typed, is recorded only when
// one is pressed (proposalButton). With no near candidate a new platform
// of /rent, /topup or /balance is recorded as before (a new platform is
// allowed: unknown platforms use the user's values), but a /charge on an
// unknown name still asks, since the charge would create that name.

// nearWhat says what kind of name a question is about.
type nearWhat int

const (
	nearPlatform nearWhat = iota // /rent, /topup, /balance: a platform
	nearTarget                   // /charge: a rental, volume or platform
)

// checkPlatform holds a command on an unknown platform near a known one.
// It reports whether it answered (a question, or an error for a line of a
// multi-line message); with is the command on another platform.
func (r *req) checkPlatform(platform string, with func(string) command.Command) (bool, error) {
	if r.confirmed {
		return false, nil
	}
	if _, ok := ledger.LookupProfile(platform); ok {
		return false, nil
	}
	b, err := r.book()
	if err != nil {
		return false, err
	}
	mine := command.UserPlatforms(b)
	if slices.Contains(mine, platform) {
		return false, nil
	}
	near := command.NearPlatforms(platform, mine)
	if len(near) == 0 {
		return false, nil
	}
	return true, r.askNear(nearPlatform, platform, near, with)
}

// checkTarget holds a /charge on a name that is neither a rental (the
// caller looked), a volume, nor a platform the user has or the ledger
// knows; b is the user's ledger. Unlike a platform, an unknown target is
// asked about even with no near candidate.
func (r *req) checkTarget(b *ledger.Book, target string, with func(string) command.Command) (bool, error) {
	if r.confirmed {
		return false, nil
	}
	mine := command.UserPlatforms(b)
	if slices.Contains(mine, target) {
		return false, nil
	}
	var cands []string
	for _, x := range b.Rentals {
		cands = append(cands, x.Name)
	}
	for _, v := range b.Volumes {
		cands = append(cands, v.Name)
	}
	cands = append(cands, mine...)
	near := command.Nearest(target, append(cands, command.KnownPlatformNames()...))
	for i, n := range near {
		if p, ok := ledger.LookupProfile(n); ok && !slices.Contains(cands, n) {
			near[i] = p.Key
		}
	}
	return true, r.askNear(nearTarget, target, near, with)
}

// askNear answers a held command: the question with a [Use NAME] button
// for each near name, [Create TYPED …] and [Cancel]; each choice carries
// its command, recorded by the press. Inside a multi-line message a line
// gets no buttons (they would be cut from its numbered answer): it fails
// with the suggestion, and the line sent alone asks.
func (r *req) askNear(what nearWhat, typed string, near []string, with func(string) command.Command) error {
	names := make([]string, len(near))
	for i, n := range near {
		names[i] = "<b>" + chat.Escape(n) + "</b>"
	}
	sep := " or "
	if r.lang == chat.LangZH {
		sep = " 或 "
	}
	list := chat.RawHTML(strings.Join(names, sep))
	key := map[nearWhat]string{nearPlatform: "near_platform", nearTarget: "near_target"}[what]
	if len(near) == 0 {
		key = "new_target"
	}
	shown := clip.Runes(strings.TrimSpace(r.u.Text), 200, "…")
	// Nothing is written, so the question is answered as one: anew when
	// it is delivered again after its answer may have been lost.
	if r.inLines {
		r.failed = true
		return r.answer(r.plain("✗ " + r.t(key+"_line", typed, list)))
	}
	choices := make([]command.Command, 0, len(near)+1)
	for _, n := range near {
		choices = append(choices, with(n))
	}
	choices = append(choices, with(typed))
	id := r.c.props.add(r.u.UserID, shown, choices, r.now)
	var use, more []chat.Button
	for i, n := range near {
		d, err := r.sign(actConfirm, choiceData(id, i))
		if err != nil {
			return err
		}
		use = append(use, chat.Button{Text: r.t("btn_use", n), Data: d})
	}
	create := map[nearWhat]string{nearPlatform: "btn_new_platform", nearTarget: "btn_new_target"}[what]
	d, err := r.sign(actConfirm, choiceData(id, len(near)))
	if err != nil {
		return err
	}
	more = append(more, chat.Button{Text: r.t(create, typed), Data: d})
	if d, err = r.sign(actCancel, id); err != nil {
		return err
	}
	more = append(more, chat.Button{Text: r.t("btn_cancel"), Data: d})
	out := r.plain(r.t(key, typed, list, shown))
	out.Buttons = [][]chat.Button{more}
	if len(use) > 0 {
		out.Buttons = [][]chat.Button{use, more}
	}
	return r.answer(out)
}

// volumeNamed returns the user's latest volume called name, or nil.
func volumeNamed(b *ledger.Book, name string) *ledger.Volume {
	var found *ledger.Volume
	for _, v := range b.Volumes {
		if v.Name == name {
			found = v // the store lists volumes in the order they were made
		}
	}
	return found
}
