package bot

import (
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// talk is the family of what is not a ledger command: /help, /start, free
// text that proposes a rental or a change, text the bot cannot act on and
// commands addressed to another bot.
type talk struct{ *req }

func (talk) register(t *table) {
	on(t, talk.help)
	on(t, talk.start)
	on(t, talk.propose)
	on(t, talk.proposeChange)
	on(t, talk.notACommand)
	on(t, talk.otherBot)
}

func (r talk) help(c command.HelpCmd) error {
	return r.answer(r.plain(chat.Escape(helpText(r.lang, c.Topic))))
}

func (r talk) start(c command.StartCmd) error {
	if c.Join != "" {
		return teams{r.req}.joinFrom(c.Join)
	}
	return r.answer(r.plain(r.t("welcome") + "\n\n" + chat.Escape(helpText(r.lang, ""))))
}

func (r talk) notACommand(command.NotACommand) error {
	if r.inGroup() {
		return r.mark()
	}
	r.rejected = true
	return r.answer(r.plain(r.t("not_a_command")))
}

func (r talk) otherBot(command.OtherBot) error { return r.mark() }

// inGroup reports whether the update came from a group rather than the
// user's private chat.
func (r *req) inGroup() bool { return r.u.ChatType != chat.ChatPrivate }
