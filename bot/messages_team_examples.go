package bot

import (
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// teamSubExamples are the examples a wrong /team SUB shows: one of that
// subcommand (a wrong limit is answered with a limit), in en and zh. Each
// is checked by a test to parse to its own subcommand.
var teamSubExamples = map[string][2]string{
	command.TeamNew:    {"/team new gpu-crew", "/team 新建 gpu-crew"},
	command.TeamInvite: {"/team invite @bob", "/team 邀请 @bob"},
	command.TeamJoin:   {"/team join k3v9x2mq7p", "/team 加入 k3v9x2mq7p"},
	command.TeamLeave:  {"/team leave", "/team 退出"},
	command.TeamRemove: {"/team remove @bob", "/team 移除 @bob"},
	command.TeamRole:   {"/team role @bob admin", "/team 角色 @bob 管理员"},
	command.TeamBind:   {"/team bind", "/team 绑定"},
	command.TeamUnbind: {"/team unbind", "/team 解绑"},
	command.TeamDM:     {"/team dm on", "/team 私信 开"},
	command.TeamLimit:  {"/team limit @bob rate=10/h gpus=2 month=3000", "/team 限额 @bob rate=10/h gpus=2 month=3000"},
	command.TeamOwner:  {"/team owner box3 @bob", "/team 转交 box3 @bob"},
}

// parseExample is the example a parse error of e's command shows: its
// subcommand's for a /team subcommand, /help team for a subcommand that
// does not exist, else the command's own (helpItem.example), else /help.
func parseExample(e *command.ParseError, lang string) string {
	zh := chat.NormLang(lang) == chat.LangZH
	if e.Cmd == command.KindTeam {
		if e.Key == "team_bad_team_sub" {
			return "/help team"
		}
		if ex, ok := teamSubExamples[e.Sub]; ok {
			if zh {
				return ex[1]
			}
			return ex[0]
		}
	}
	if h, ok := helpEntry(e.Cmd); ok {
		return h.example(lang)
	}
	return "/help"
}
