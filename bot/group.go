package bot

import "github.com/gpuledger/gpuledger/bot/command"

// What the bot does in group chats, until it has a mode for teams.
//
// A ledger here is one person's: what they rent, what it costs, their agent
// tokens. Everyone in a group reads every reply the bot posts there, and a
// bot in a group runs in privacy mode, seeing only the commands addressed
// to it (no chatter, so no proposals from plain text). So in a group:
//
//   - /help and /start are answered in the group: they hold nothing of
//     anyone's.
//   - Questions (/status, /spend, /summary, /balance and /budget without an
//     amount, /settings without changes, /why, /export), /agent (its
//     answer is a secret) and /dashboard (its one-time link signs in
//     whoever opens it) are answered in the sender's private chat, and
//     the group hears only "I sent it to you privately". The errors of
//     such a command go privately too.
//   - Commands that write the ledger are not run: the group is told to
//     send them privately. Their replies carry money, and a write whose
//     reply could not be delivered (the private chat is closed) would leave
//     the user guessing whether it happened, and tempted to send it again.
//
// On Telegram the bot can write to a user's private chat only after the
// user started it there; until then a send fails (ErrNoPrivateChat) and
// the group is told to open a private chat and send /start first. /agent
// checks that before it issues a token, because issuing one revokes the
// rental's earlier token, on which an agent may still run. Cards and the
// nightly summary never go to groups: the scheduler sends them to the
// user's private chat (chat ID = user ID).

// groupPlace is where the answer to a command sent in a group goes.
type groupPlace int

const (
	inGroup    groupPlace = iota // /help, /start; and what is ignored in groups
	privately                    // reads a ledger or hands out a secret
	notInGroup                   // writes a ledger: not run from a group
)

// placeInGroup classifies cmd for a group. Anything not listed writes (or
// may): a new command is kept out of groups until it is placed here.
func placeInGroup(cmd command.Command) groupPlace {
	switch c := cmd.(type) {
	case command.HelpCmd, command.StartCmd, command.NotACommand, command.ProposedRentCmd, command.ProposedChangeCmd, command.OtherBot:
		return inGroup
	case command.StatusCmd, command.SpendCmd, command.SummaryCmd, command.ExportCmd, command.WhyCmd, command.AgentCmd, command.AgentEnrolCmd, command.AgentRevokeCmd, command.ReconcileCmd, command.DashboardCmd, command.RecordsCmd:
		return privately
	case command.QuoteCmd: // reads the ledger's prices
		return privately
	case command.TeamCmd:
		switch c.Sub {
		case command.TeamBind, command.TeamUnbind:
			return inGroup // they act on the group itself
		case command.TeamInvite:
			return inGroup // answered with "send it privately": the code never shows in a group
		case command.TeamList:
			return privately
		}
	case command.BalanceCmd:
		if !c.Set {
			return privately
		}
	case command.BudgetCmd:
		if !c.Set {
			return privately
		}
	case command.SettingsCmd:
		if c.Empty() {
			return privately
		}
	}
	return notInGroup
}

// privateReply is how a group command's answer went to the sender's
// private chat.
type privateReply struct {
	on     bool // replies to the group chat go to the private chat instead
	sent   bool // at least one reply reached the private chat
	closed bool // the private chat is not open to the bot
	failed bool // a send failed for another reason
}

// mention names the sender at the start of a group note, so the group
// knows whom it is for.
func (r *req) mention() string {
	if r.u.Username == "" {
		return ""
	}
	return "@" + r.u.Username + " "
}

// tellGroup says in the group where the answer of a privately answered
// command went, or why it went nowhere.
func (r *req) tellGroup() {
	p := r.priv
	if !p.on {
		return
	}
	r.priv.on = false // the note itself goes to the group
	switch {
	case p.closed:
		r.send(r.plain(r.t("group_open_private", r.mention())))
	case p.sent:
		r.send(r.plain(r.t("group_sent_privately", r.mention())))
	case p.failed:
		r.send(r.plain(r.t("group_send_failed", r.mention())))
	}
}
