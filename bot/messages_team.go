package bot

import (
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// teamTexts are the replies of /team, /use and /project (core_team.go).
// HTML in Telegram's subset; arguments are escaped by Render.
var teamTexts = chat.Catalog{
	"team_off": {
		"Teams are not available on this server.",
		"这个服务器没有开启团队功能。"},
	"team_none_in_use": {
		"You are not using a team now: /use TEAM picks one of yours, <code>/team new NAME</code> makes one.",
		"你现在没有在用团队：/use 团队名 选择你所在的团队，<code>/team new 名字</code> 新建一个。"},
	"team_yours_head": {
		"Your teams (<code>/use NAME</code> sends your commands to one, /use me back to your own ledger):",
		"你所在的团队（<code>/use 名字</code> 把命令发到该团队，/use me 回到自己的账本）："},
	"team_yours_line": {
		"• %[1]s · %[2]s",
		"• %[1]s · %[2]s"},
	"team_yours_none": {
		"You are in no team. <code>/team new NAME</code> makes one (you are its owner); an admin's invite code joins one: <code>/team join CODE</code>.",
		"你还不在任何团队中。<code>/team new 名字</code> 新建一个（你是所有者）；用管理员给的邀请码加入：<code>/team join 邀请码</code>。"},
	"team_head": {
		"Team %[1]s · you: %[2]s · room: %[3]s",
		"团队 %[1]s · 你的角色：%[2]s · 群：%[3]s"},
	"team_no_room": {
		"none (an admin sends /team bind in the group)",
		"未绑定（管理员在群里发送 /team bind）"},
	"team_members": {
		"Members: %[1]s, page %[2]s of %[3]s:",
		"%[1]s 名成员，第 %[2]s/%[3]s 页："},
	"team_member_line": {
		"• %[1]s · %[2]s",
		"• %[1]s · %[2]s"},
	"team_more": {
		"<code>/team page=%[1]s</code> shows the next page.",
		"<code>/team page=%[1]s</code> 查看下一页。"},
	"team_page_past": {
		"The team has %[1]s pages of members: <code>/team page=%[1]s</code> is the last.",
		"成员共 %[1]s 页：<code>/team page=%[1]s</code> 是最后一页。"},
	"role_owner":  {"owner", "所有者"},
	"role_admin":  {"admin", "管理员"},
	"role_member": {"member", "成员"},
	"team_created": {
		"✓ Team %[1]s is made; you are its owner.\nCommands now go to team %[1]s; /use me goes back to your own ledger.\nNext: /team invite gives a code for a teammate; /team bind in a group makes it the team's room.",
		"✓ 已新建团队 %[1]s，你是所有者。\n现在命令会发到团队 %[1]s；/use me 回到自己的账本。\n下一步：/team invite 给队友生成邀请码；在群里发送 /team bind 让它成为团队的群。"},
	"team_new_private": {
		"%[1]sSend /team new NAME in our private chat.",
		"%[1]s请在和我的私聊中发送 /team new 名字。"},
	"team_invite_private": {
		"%[1]sAn invite code is sent only privately: send /team invite in our private chat.",
		"%[1]s邀请码只在私聊中发送：请在和我的私聊中发送 /team invite。"},
	"team_invite": {
		"Invite code for team %[1]s%[2]s: <code>%[3]s</code>\nIt works once, until %[4]s. The teammate sends me <code>/team join %[3]s</code> in a private chat.",
		"团队 %[1]s 的邀请码%[2]s：<code>%[3]s</code>\n只能用一次，%[4]s 前有效。队友在和我的私聊中发送 <code>/team join %[3]s</code> 即可加入。"},
	"team_invite_link": {
		"\nOr they open this link: %[1]s",
		"\n也可以打开这个链接：%[1]s"},
	"team_invite_for": {
		" (only for %[1]s)",
		"（仅限 %[1]s 使用）"},
	"team_joined": {
		"✓ You joined team %[1]s as %[2]s.\nCommands now go to team %[1]s; /use me goes back to your own ledger. /team lists its members.",
		"✓ 你已作为%[2]s加入团队 %[1]s。\n现在命令会发到团队 %[1]s；/use me 回到自己的账本。/team 查看成员。"},
	"team_joined_outsider": {
		"✓ You joined team %[1]s as %[2]s.\nYour commands go to team %[1]s: you have no ledger of your own on this server. /team lists its members.",
		"✓ 你已作为%[2]s加入团队 %[1]s。\n你的命令都会发到团队 %[1]s：你在这个服务器上没有自己的账本。/team 查看成员。"},
	"team_join_tries": {
		"Too many wrong codes: ask an admin of the team for a new one.",
		"错误的邀请码太多：请向团队管理员要一个新的。"},
	"team_join_notice": {
		"%[1]s joined team %[2]s with %[3]s's invite.",
		"%[1]s 用 %[3]s 的邀请码加入了团队 %[2]s。"},
	"team_code_in_group": {
		"%[1]sThat code was posted in a group and no longer works: ask an admin of the team for a new one, privately.",
		"%[1]s这个邀请码发在了群里，已经作废：请私下向团队管理员要一个新的。"},
	"team_code_burnt_notice": {
		"An invite code of team %[1]s was posted in a group: I deleted the message and the code no longer works. /team invite makes a new one.",
		"团队 %[1]s 的一个邀请码被发在了群里：我已删除那条消息，该邀请码已作废。/team invite 可生成新的。"},
	"team_left": {
		"✓ You left team %[1]s. Your history stays in its ledger under your name.%[2]s%[3]s",
		"✓ 你已退出团队 %[1]s。你的历史记录仍以你的名义留在团队账本中。%[2]s%[3]s"},
	"left_to_own": {
		"\nYour commands go to your own ledger now.",
		"\n你的命令现在发到自己的账本。"},
	"left_to_team": {
		"\nYour commands go to team %[1]s now.",
		"\n你的命令现在发到团队 %[1]s。"},
	"team_handed": {
		"\nRunning rentals passed to %[1]s: %[2]s.",
		"\n在租的机器已转交给 %[1]s：%[2]s。"},
	"team_removed": {
		"✓ %[1]s is no longer in team %[2]s. Their history stays theirs; the agent install lines they made for the team no longer work.%[3]s",
		"✓ %[1]s 已移出团队 %[2]s。其历史记录仍归其名下；其为团队生成的代理安装命令已作废。%[3]s"},
	"team_token_revoked_removed": {
		"\n%[1]s's agent token was revoked with %[2]s's removal: <code>/agent %[1]s</code> gives a new install line for it.",
		"\n%[1]s 的代理令牌已随 %[2]s 被移出团队而作废：发送 <code>/agent %[1]s</code> 可获取新的安装命令。"},
	"team_tokens_revoked_removed": {
		"\nThe agent tokens of %[1]s were revoked with %[2]s's removal: <code>/agent NAME</code> gives a new install line for each.",
		"\n%[1]s 的代理令牌已随 %[2]s 被移出团队而作废：对每台发送 <code>/agent 名字</code> 可获取新的安装命令。"},
	"team_token_revoked_left": {
		"\n%[1]s's agent token was revoked with %[2]s's leaving: <code>/agent %[1]s</code> gives a new install line for it.",
		"\n%[1]s 的代理令牌已随 %[2]s 退出团队而作废：发送 <code>/agent %[1]s</code> 可获取新的安装命令。"},
	"team_tokens_revoked_left": {
		"\nThe agent tokens of %[1]s were revoked with %[2]s's leaving: <code>/agent NAME</code> gives a new install line for each.",
		"\n%[1]s 的代理令牌已随 %[2]s 退出团队而作废：对每台发送 <code>/agent 名字</code> 可获取新的安装命令。"},
	// To the owner of a rental whose token the removed member had issued.
	"team_issued_token_revoked_removed": {
		"The agent token of %[1]s was revoked: %[2]s, who issued it, was removed from team %[3]s. Its agent stops reporting; <code>/agent NAME</code> gives you a new install line.",
		"%[1]s 的代理令牌已作废：签发它的 %[2]s 已被移出团队 %[3]s。它的代理将停止上报；发送 <code>/agent 名字</code> 可获取新的安装命令。"},
	"team_issued_token_revoked_left": {
		"The agent token of %[1]s was revoked: %[2]s, who issued it, left team %[3]s. Its agent stops reporting; <code>/agent NAME</code> gives you a new install line.",
		"%[1]s 的代理令牌已作废：签发它的 %[2]s 已退出团队 %[3]s。它的代理将停止上报；发送 <code>/agent 名字</code> 可获取新的安装命令。"},
	"team_no_rental_named": {
		"team %[1]s has no rental named %[2]s (see /status for its rentals)",
		"团队 %[1]s 没有名叫 %[2]s 的租用（/status 可查看团队的租用）"},
	"team_left_notice": {
		"%[1]s left team %[2]s; their running rentals passed to you: %[3]s.%[4]s",
		"%[1]s 已退出团队 %[2]s，其在租的机器已转交给你：%[3]s。%[4]s"},
	"team_removed_notice": {
		"You were removed from team %[1]s by %[2]s. Your records stay in its ledger; your commands no longer reach it.",
		"%[2]s 已把你移出团队 %[1]s。你的记录留在团队账本中；你的命令不再发到该团队。"},
	"team_remove_self": {
		"To leave team %[1]s yourself, send /team leave.",
		"要自己退出团队 %[1]s，请发送 /team leave。"},
	"team_role_set": {
		"✓ %[1]s is now %[2]s of team %[3]s.",
		"✓ %[1]s 现在是团队 %[3]s 的%[2]s。"},
	"team_role_notice": {
		"%[1]s made you %[2]s of team %[3]s.",
		"%[1]s 已把你设为团队 %[3]s 的%[2]s。"},
	"team_bind_private": {
		"Send /team bind in the group that should be the team's room (I must be a member of it).",
		"请在要作为团队群的群里发送 /team bind（我需要在那个群里）。"},
	"team_bound": {
		"✓ This group is now the room of team %[1]s: its idle cards, release confirmations, budget alerts and nightly summary come here, naming each rental's owner. Secrets (tokens, install lines, invite codes) never come here.",
		"✓ 这个群现在是团队 %[1]s 的群：空闲提醒、释放确认、预算提醒和每晚总结会发到这里，并写明每台机器的负责人。令牌、安装命令、邀请码等机密不会发到这里。"},
	"team_unbound": {
		"✓ Team %[1]s has no room now: its cards go to its owners privately. /team bind in a group chooses a room.",
		"✓ 团队 %[1]s 现在没有群：提醒会私聊发给所有者。在群里发送 /team bind 可重新选择。"},
	"team_unbind_none": {
		"Team %[1]s has no room to unbind.",
		"团队 %[1]s 没有绑定群。"},
	"team_unbind_other": {
		"This group is not the room of team %[1]s.",
		"这个群不是团队 %[1]s 的群。"},
	"team_admins_only": {
		"Only an admin or owner of team %[1]s may do that.",
		"只有团队 %[1]s 的管理员或所有者可以这样做。"},
	"team_dm_on": {
		"✓ You also get the cards of your own rentals of team %[1]s in this private chat. /team dm off stops it.",
		"✓ 团队 %[1]s 中你自己机器的提醒也会私聊发给你。/team dm off 可关闭。"},
	"team_dm_off": {
		"✓ The cards of your rentals of team %[1]s go to its room only. /team dm on sends you a private copy.",
		"✓ 团队 %[1]s 中你的机器提醒只发到团队群。/team dm on 可同时私聊发你一份。"},
	"team_limits_none": {
		"Team %[1]s has no limits. An admin sets one: <code>/team limit @user rate=10/h gpus=2 month=3000</code>, <code>/team limit project=NAME month=5000</code>, <code>/team limit team month=20000</code>.",
		"团队 %[1]s 没有限额。管理员可设置：<code>/team limit @用户 rate=10/h gpus=2 month=3000</code>、<code>/team limit project=项目 month=5000</code>、<code>/team limit team month=20000</code>。"},
	"team_limits_head": {
		"Limits of team %[1]s (a rental over one goes to the admins for approval; nothing is stopped without them):",
		"团队 %[1]s 的限额（超出的机器会发给管理员审批；没有管理员确认不会停机）："},
	"team_limit_line": {
		"• %[1]s: %[2]s",
		"• %[1]s：%[2]s"},
	"team_limits_more": {
		"… and %[1]s more",
		"……另外 %[1]s 项"},
	"team_limit_set": {
		"✓ Limit of %[1]s: %[2]s",
		"✓ %[1]s 的限额：%[2]s"},
	"team_limit_cleared": {
		"✓ No %[2]s limit for %[1]s now.",
		"✓ %[1]s 现在没有 %[2]s 限额。"},
	// A limit that held only a GPU bound: a count, whatever its currency.
	"team_limit_cleared_gpus": {
		"✓ No GPU bound for %[1]s now.",
		"✓ %[1]s 现在没有同时用卡数的上限。"},
	// A rate or month limit counts only rentals of its currency: said
	// when those it would count are all priced in others.
	"team_limit_currency_note_one": {
		"Note: this limit counts only %[1]s; %[2]s is priced in %[3]s. Set one in %[4]s too: <code>%[5]s</code>",
		"注意：此限额只计 %[1]s；%[2]s 以 %[3]s 计价。请再设一个 %[4]s 的限额：<code>%[5]s</code>"},
	"team_limit_currency_note": {
		"Note: this limit counts only %[1]s; %[2]s and %[3]s more are priced in %[4]s. Set one in %[5]s too: <code>%[6]s</code>",
		"注意：此限额只计 %[1]s；%[2]s 及另外 %[3]s 台机器以 %[4]s 计价。请再设一个 %[5]s 的限额：<code>%[6]s</code>"},
	"limit_scope_team":    {"the team", "全队"},
	"limit_scope_project": {"project %[1]s", "项目 %[1]s"},
	"limit_rate":          {"%[1]s/h", "%[1]s/小时"},
	"limit_gpus":          {"%[1]s GPUs at once", "同时 %[1]s 张卡"},
	"limit_gpu_one":       {"1 GPU at once", "同时 1 张卡"},
	"limit_month":         {"%[1]s a month", "每月 %[1]s"},
	"team_owner_set": {
		"✓ %[1]s now belongs to %[2]s.",
		"✓ %[1]s 现在归 %[2]s。"},
	"team_not_member_who": {
		"%[1]s is not a member of team %[2]s: /team lists its members",
		"%[1]s 不是团队 %[2]s 的成员：/team 查看成员"},
	"use_where_me": {
		"Your commands go to your own ledger.%[1]s",
		"你的命令发到自己的账本。%[1]s"},
	"use_where_team": {
		"Your commands go to team %[1]s (you are %[2]s). /use me goes back to your own ledger.",
		"你的命令发到团队 %[1]s（你是%[2]s）。/use me 回到自己的账本。"},
	"use_where_room": {
		"In this group your commands go to team %[1]s, its room.",
		"在这个群里，你的命令发到团队 %[1]s（这是它的群）。"},
	"use_your_teams": {
		" Your teams: %[1]s (<code>/use NAME</code>).",
		" 你的团队：%[1]s（<code>/use 名字</code>）。"},
	"use_set_team": {
		"✓ Commands now go to team %[1]s; /use me goes back to your own ledger.",
		"✓ 现在命令会发到团队 %[1]s；/use me 回到自己的账本。"},
	"use_set_me": {
		"✓ Commands now go to your own ledger.",
		"✓ 现在命令会发到你自己的账本。"},
	"use_not_member": {
		"You are not in a team called %[1]s: /team lists your teams.",
		"你不在名为 %[1]s 的团队中：/team 查看你的团队。"},
	"use_no_own": {
		"You have no ledger of your own here: you were admitted to a team only. /use TEAM picks one of your teams.",
		"你在这里没有自己的账本：你只是被邀请加入了团队。/use 团队名 选择你的团队。"},
	"outsider_no_team": {
		"You were admitted to a team only, and you are in no team now. An admin's new invite code lets you join again: <code>/team join CODE</code>.",
		"你只是被邀请加入团队的成员，现在已不在任何团队中。管理员给你新的邀请码后可再次加入：<code>/team join 邀请码</code>。"},
	"project_none": {
		"You have no default project in %[1]s. <code>/project NAME</code> sets one; your new rentals, volumes and charges then take it unless you write project=.",
		"你在%[1]s中没有默认项目。<code>/project 名字</code> 可设置；之后新记的机器、存储和费用都归该项目，除非写明 project=。"},
	"project_is": {
		"Your default project in %[1]s: %[2]s. /project none clears it.",
		"你在%[1]s中的默认项目：%[2]s。/project none 可取消。"},
	"project_set": {
		"✓ Your new records in %[1]s go to project %[2]s unless you write project=.",
		"✓ 你在%[1]s中新记的记录都归项目 %[2]s，除非写明 project=。"},
	"project_cleared": {
		"✓ No default project in %[1]s now.",
		"✓ 已取消你在%[1]s中的默认项目。"},
	"member_left": {"%[1]s (left)", "%[1]s（已退出）"},
	"ledger_own":  {"your own ledger", "你自己的账本"},
	"ledger_team": {"team %[1]s", "团队 %[1]s"},
}

// tt renders one of teamTexts in the user's language.
func (r *req) tt(key string, args ...any) string { return teamTexts.Render(r.lang, key, args...) }

// teamParseTexts are the parser's errors of the team commands
// (bot/command/parse_team_read.go), merged into the parser's catalog.
var teamParseTexts = chat.Catalog{
	"team_bad_join_code": {
		"%[1]s is not a join code: it is the letters and digits an admin's /team invite gave",
		"%[1]s 不是邀请码：邀请码是管理员用 /team invite 生成的字母和数字"},
	"team_bad_team_sub": {
		"/team has no %[1]s: use new, invite, join, leave, remove, role, bind, unbind, dm, limit or owner",
		"/team 没有 %[1]s：请用 new（新建）、invite（邀请）、join（加入）、leave（退出）、remove（移除）、role（角色）、bind（绑定）、unbind（解绑）、dm、limit（限额）或 owner（转交）"},
	"team_missing_team_name": {
		"the team needs a name: /team new NAME",
		"团队需要一个名字：/team new 名字"},
	"team_missing_join_code": {
		"write the invite code after join: /team join CODE",
		"请在 join 后写上邀请码：/team join 邀请码"},
	"team_missing_member": {
		"name the member: @username or their user ID",
		"请写明成员：@用户名 或用户 ID"},
	"team_bad_member": {
		"%[1]s is not a member's name: write @username or a user ID",
		"%[1]s 不是成员名：请写 @用户名 或用户 ID"},
	"team_missing_on_off": {
		"write on or off: /team dm on",
		"请写 on 或 off：/team dm on"},
	"team_bad_on_off": {
		"%[1]s is neither on nor off",
		"%[1]s 不是 on 或 off"},
	"team_bad_page": {
		"%[1]s is not a page: write page=2",
		"%[1]s 不是页码：请写 page=2"},
	"team_missing_role": {
		"write the role: owner, admin or member",
		"请写角色：owner（所有者）、admin（管理员）或 member（成员）"},
	"team_bad_role": {
		"%[1]s is not a role: use owner, admin or member",
		"%[1]s 不是角色：请用 owner（所有者）、admin（管理员）或 member（成员）"},
	"team_limit_two_scopes": {
		"%[1]s: a limit is for one member, one project or the team, not two",
		"%[1]s：一个限额只针对一名成员、一个项目或全队，不能同时两个"},
	"team_bad_project": {
		"%[1]s is not a project name: 1 to %[2]s letters, digits, '-', '_' or '.'",
		"%[1]s 不是项目名：1 到 %[2]s 个字母、数字、'-'、'_' 或 '.'"},
	"team_bad_limit_rate": {
		"%[1]s is not a rate limit: write rate=10/h (0 clears it)",
		"%[1]s 不是每小时限额：请写 rate=10/h（0 表示取消）"},
	"team_bad_limit_month": {
		"%[1]s is not a monthly limit: write month=3000 (0 clears it)",
		"%[1]s 不是每月限额：请写 month=3000（0 表示取消）"},
	"team_bad_limit_gpus": {
		"%[1]s is not a GPU count: write gpus=2 (0 clears it)",
		"%[1]s 不是显卡数：请写 gpus=2（0 表示取消）"},
	"team_limit_no_scope": {
		"say whose limit it is: @user, project=NAME or team",
		"请写明限额对象：@用户、project=项目名 或 team（全队）"},
	"team_limit_no_bound": {
		"give a bound: rate=10/h, gpus=2 or month=3000",
		"请写限额：rate=10/h、gpus=2 或 month=3000"},
	"team_bad_team_name": {
		"%[1]s is not a team name: 1 to %[2]s letters, digits, '-', '_' or '.', and not \"me\"",
		"%[1]s 不是团队名：1 到 %[2]s 个字母、数字、'-'、'_' 或 '.'，且不能是 \"me\""},
}

func init() {
	for k, v := range teamParseTexts {
		if _, taken := catalog[k]; !taken {
			catalog[k] = v
		}
	}
}

// teamHelpItems are the team commands, shown by /help team (and /help use,
// /help project) rather than in the main /help, which is near one
// message's 4,096 characters: it has one line pointing here.
var teamHelpItems = []helpItem{
	{command.KindTeam, "/team [page=N] | new NAME | invite [@user|ID] | join CODE | leave | remove @user | role @user owner|admin|member | bind | unbind | dm on|off | limit [@user|project=NAME|team rate=R/h gpus=N month=M [CUR]] | owner RENTAL @user",
		[2]string{"a shared ledger for a team: members and roles, one-time invite codes (private chat only), the group that gets its cards (bind), limits per member, project or team",
			"团队共享账本：成员和角色、一次性邀请码（仅私聊）、接收提醒的群（bind）、按成员、项目或全队的限额"},
		[2]string{"/team new gpu-crew", "/team 新建 gpu-crew"}},
	{command.KindUse, "/use [TEAM | me]",
		[2]string{"where your commands go: a team of yours, or your own ledger (me)", "命令发到哪个账本：你所在的团队，或你自己的（me）"},
		[2]string{"/use gpu-crew", "/use me"}},
	{command.KindProject, "/project [NAME | none]",
		[2]string{"your default project in the ledger in use: new rentals, volumes and charges take it unless project= says otherwise", "你在当前账本中的默认项目：新记的机器、存储和费用都归它，除非写明 project="},
		[2]string{"/project yolo-v9", "/project none"}},
}

// isTeamTopic reports whether /help's topic is one of the team commands.
func isTeamTopic(k command.Kind) bool {
	return k == command.KindTeam || k == command.KindUse || k == command.KindProject
}

// teamHelpText is /help team: every team command in full.
func teamHelpText(lang string) string {
	var b strings.Builder
	for i, h := range teamHelpItems {
		if i > 0 {
			b.WriteString("\n")
		}
		writeHelpItem(&b, lang, h, true)
	}
	if chat.NormLang(lang) == chat.LangZH {
		b.WriteString("\n团队中的每条回复都以 👥 团队名 开头；管理员可改他人的记录（记入日志），成员只能改自己的。\n")
	} else {
		b.WriteString("\nEvery reply on a team's ledger begins with 👥 TEAM; an admin may change another's records (journaled), a member only their own.\n")
	}
	return b.String()
}

// teamHelpLine is the main /help's one line about teams.
func teamHelpLine(lang string) string {
	if chat.NormLang(lang) == chat.LangZH {
		return "/help team — 团队\n"
	}
	return "/help team — teams\n"
}
