package command

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// joinPrefix begins a /start parameter that carries a team's join code
// (the invite link t.me/BOT?start=join-CODE).
const joinPrefix = "join-"

// maxJoinCode bounds a join code: the store's codes are far shorter.
const maxJoinCode = 64

// validJoinCode reports whether s has a join code's shape: the
// characters a Telegram deep link carries, at most maxJoinCode.
func validJoinCode(s string) bool {
	if s == "" || len(s) > maxJoinCode {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// teamSubs maps every word of a /team subcommand (English and Chinese) to
// its TeamCmd.Sub.
var teamSubs = map[string]string{
	"new": TeamNew, "create": TeamNew, "新建": TeamNew, "创建": TeamNew,
	"invite": TeamInvite, "邀请": TeamInvite,
	"join": TeamJoin, "加入": TeamJoin,
	"leave": TeamLeave, "退出": TeamLeave,
	"remove": TeamRemove, "kick": TeamRemove, "移除": TeamRemove,
	"role": TeamRole, "角色": TeamRole,
	"bind": TeamBind, "绑定": TeamBind,
	"unbind": TeamUnbind, "解绑": TeamUnbind,
	"dm": TeamDM, "私信": TeamDM,
	"limit": TeamLimit, "limits": TeamLimit, "限额": TeamLimit,
	"owner": TeamOwner, "转交": TeamOwner,
	"list": TeamList, "members": TeamList, "成员": TeamList,
}

// roleWords maps the words of a role to it.
var roleWords = map[string]ledger.Role{
	"owner": ledger.RoleOwner, "所有者": ledger.RoleOwner, "拥有者": ledger.RoleOwner,
	"admin": ledger.RoleAdmin, "管理员": ledger.RoleAdmin,
	"member": ledger.RoleMember, "成员": ledger.RoleMember,
}

// onOffWords maps the words of /team dm's switch.
var onOffWords = map[string]bool{
	"on": true, "开": true, "开启": true, "打开": true,
	"off": false, "关": false, "关闭": false,
}

// meWords name a person's own ledger in /use.
var meWords = map[string]bool{"me": true, "personal": true, "我": true, "个人": true, "自己": true}

// noneWords clear /project's default.
var noneWords = map[string]bool{"none": true, "off": true, "无": true, "不用": true, "取消": true}

// limitKeys maps the keys of /team limit (after keyAliases) to the
// bounds'.
var limitKeys = map[string]string{
	"rate": "rate", "费率": "rate", "速率": "rate", "每小时": "rate",
	"gpus": "gpus", "gpu": "gpus", "卡数": "gpus",
	"month": "month", "月": "month", "月额": "month", "每月": "month",
	"project": "project", "项目": "project",
	"currency": "currency",
}

// who validates a member named in a command: "@username" (Telegram's
// letters, digits and '_', at most 32) or a user ID in decimal.
func (p *parser) who(w string) (string, error) {
	if u, ok := strings.CutPrefix(w, "@"); ok {
		if u == "" || len(u) > 32 {
			return "", p.err("team_bad_member", quote(w))
		}
		for _, r := range u {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return "", p.err("team_bad_member", quote(w))
			}
		}
		return w, nil
	}
	// "id123" is how a member without a username is listed (/team):
	// what the list shows can be typed back.
	d := idDigits(w)
	if id, err := strconv.ParseInt(d, 10, 64); err == nil && id > 0 && isDigits(d) {
		return d, nil
	}
	return "", p.err("team_bad_member", quote(w))
}

// idDigits is w without an "id" before its digits ("id123" → "123"), or
// w as it is.
func idDigits(w string) string {
	if len(w) > 2 && strings.EqualFold(w[:2], "id") && isDigits(w[2:]) {
		return w[2:]
	}
	return w
}

// isWho reports whether w is written as a member (an '@', digits, or
// "id" and digits as /team lists a member without a username).
func isWho(w string) bool {
	return strings.HasPrefix(w, "@") || isDigits(idDigits(w)) && w != ""
}

// team reads /team and its subcommands.
func (p *parser) team(toks []string) (c Command, err error) {
	if len(toks) == 0 {
		return TeamCmd{}, nil
	}
	first := strings.ToLower(toks[0])
	if _, _, isKV := cutKV(first); isKV {
		return p.teamList(toks)
	}
	sub, ok := teamSubs[first]
	if !ok {
		return nil, p.err("team_bad_team_sub", quote(toks[0]))
	}
	// An error of a subcommand names it, so the reply's example is of
	// that subcommand (a wrong /team limit shows a limit).
	defer func() {
		var pe *ParseError
		if errors.As(err, &pe) && pe.Sub == "" {
			pe.Sub = sub
		}
	}()
	args := toks[1:]
	switch sub {
	case TeamList:
		return p.teamList(args)
	case TeamNew:
		n, err := p.teamOneWord(args, "team_missing_team_name")
		if err != nil {
			return nil, err
		}
		if ledger.ValidTeamName(n) != nil {
			return nil, p.err("team_bad_team_name", quote(n), strconv.Itoa(ledger.MaxTeamNameRunes))
		}
		return TeamCmd{Sub: TeamNew, Name: n}, nil
	case TeamJoin:
		c, err := p.teamOneWord(args, "team_missing_join_code")
		if err != nil {
			return nil, err
		}
		c = strings.TrimPrefix(c, joinPrefix)
		if !validJoinCode(c) {
			return nil, p.err("team_bad_join_code", quote(c))
		}
		return TeamCmd{Sub: TeamJoin, Name: c}, nil
	case TeamInvite:
		if len(args) == 0 {
			return TeamCmd{Sub: TeamInvite}, nil
		}
		w, err := p.teamOneWord(args, "team_missing_member")
		if err != nil {
			return nil, err
		}
		if w, err = p.who(w); err != nil {
			return nil, err
		}
		return TeamCmd{Sub: TeamInvite, Who: w}, nil
	case TeamRemove:
		w, err := p.teamOneWord(args, "team_missing_member")
		if err != nil {
			return nil, err
		}
		if w, err = p.who(w); err != nil {
			return nil, err
		}
		return TeamCmd{Sub: TeamRemove, Who: w}, nil
	case TeamLeave, TeamBind, TeamUnbind:
		if len(args) > 0 {
			return nil, p.err("unexpected", quote(args[0]), string(p.kind))
		}
		return TeamCmd{Sub: sub}, nil
	case TeamRole:
		return p.teamRole(args)
	case TeamDM:
		w, err := p.teamOneWord(args, "team_missing_on_off")
		if err != nil {
			return nil, err
		}
		on, ok := onOffWords[strings.ToLower(w)]
		if !ok {
			return nil, p.err("team_bad_on_off", quote(w))
		}
		return TeamCmd{Sub: TeamDM, On: on}, nil
	case TeamOwner:
		return p.teamOwner(args)
	case TeamLimit:
		return p.teamLimit(args)
	}
	return nil, p.err("team_bad_team_sub", quote(toks[0]))
}

// teamOneWord reads the one word a subcommand takes; missing is the key
// of the error when there is none.
func (p *parser) teamOneWord(args []string, missing string) (string, error) {
	switch {
	case len(args) == 0:
		return "", p.err(missing)
	case len(args) > 1:
		return "", p.err("unexpected", quote(args[1]), string(p.kind))
	}
	return args[0], nil
}

// teamList reads /team [page=N].
func (p *parser) teamList(args []string) (Command, error) {
	if err := p.split(args, []string{"page"}, false); err != nil {
		return nil, err
	}
	if err := p.noWords(); err != nil {
		return nil, err
	}
	c := TeamCmd{Sub: TeamList}
	if v, ok := p.kv["page"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ledger.MaxTeamMembers {
			return nil, p.err("team_bad_page", quote(v))
		}
		c.Page = n
	}
	return c, nil
}

// teamRole reads /team role @user ROLE (the two in either order).
func (p *parser) teamRole(args []string) (Command, error) {
	c := TeamCmd{Sub: TeamRole}
	for i, w := range args {
		r, isRole := roleWords[strings.ToLower(w)]
		switch {
		case isRole && c.Role == "":
			c.Role = r
		case isWho(w) && c.Who == "":
			v, err := p.who(w)
			if err != nil {
				return nil, err
			}
			c.Who = v
		case isRole || isWho(w) || i > 1:
			return nil, p.err("unexpected", quote(w), string(p.kind))
		case c.Who == "":
			return nil, p.err("team_bad_member", quote(w))
		default:
			return nil, p.err("team_bad_role", quote(w))
		}
	}
	switch {
	case c.Who == "":
		return nil, p.err("team_missing_member")
	case c.Role == "":
		return nil, p.err("team_missing_role")
	}
	return c, nil
}

// teamOwner reads /team owner RENTAL @user.
func (p *parser) teamOwner(args []string) (Command, error) {
	c := TeamCmd{Sub: TeamOwner}
	// "@bob" and digits are a member; "id7" is a member only once the
	// rental is named, since a rental may be called id7 too.
	plainWho := func(w string) bool { return strings.HasPrefix(w, "@") || isDigits(w) }
	for _, w := range args {
		switch {
		case (plainWho(w) || isWho(w) && c.Name != "") && c.Who == "":
			v, err := p.who(w)
			if err != nil {
				return nil, err
			}
			c.Who = v
		case c.Name == "" && !plainWho(w):
			n, err := p.rentalName(w)
			if err != nil {
				return nil, err
			}
			c.Name = n
		default:
			return nil, p.err("unexpected", quote(w), string(p.kind))
		}
	}
	switch {
	case c.Name == "":
		return nil, p.err("missing_name", string(p.kind))
	case c.Who == "":
		return nil, p.err("team_missing_member")
	}
	return c, nil
}

// teamLimit reads /team limit (the list) and /team limit
// @user|project=P|team rate=R gpus=N month=M [CUR].
func (p *parser) teamLimit(args []string) (Command, error) {
	c := TeamCmd{Sub: TeamLimit}
	if len(args) == 0 {
		return c, nil
	}
	p.kv = map[string]string{}
	var cur ledger.Currency
	bounds := 0
	for _, t := range args {
		if k, v, ok := cutKV(t); ok {
			key, known := limitKeys[k]
			if !known {
				return nil, p.err("unknown_key", quote(k+"="), string(p.kind), "project= rate= gpus= month= currency=")
			}
			if old, dup := p.kv[key]; dup {
				return nil, p.err("twice", key+"=", quote(old), quote(v))
			}
			p.kv[key] = v
			continue
		}
		lt := strings.ToLower(t)
		switch {
		case lt == "team" || lt == "团队" || lt == "全队":
			if c.Limit.Scope != "" {
				return nil, p.err("team_limit_two_scopes", quote(t))
			}
			c.Limit.Scope = ledger.ScopeTeam
		case isWho(t):
			if c.Limit.Scope != "" {
				return nil, p.err("team_limit_two_scopes", quote(t))
			}
			w, err := p.who(t)
			if err != nil {
				return nil, err
			}
			c.Who, c.Limit.Scope = w, ledger.ScopeMember
		default:
			cc, ok := currencyWord(lt)
			if !ok {
				return nil, p.err("unexpected", quote(t), string(p.kind))
			}
			if err := p.mergeCurrency(&cur, cc, t); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := p.kv["project"]; ok {
		if c.Limit.Scope != "" {
			return nil, p.err("team_limit_two_scopes", quote("project="+v))
		}
		if v == "" || ledger.ValidProject(v) != nil {
			return nil, p.err("team_bad_project", quote(v), strconv.Itoa(ledger.MaxProjectRunes))
		}
		c.Limit.Scope, c.Limit.Subject = ledger.ScopeProject, v
	}
	if v, ok := p.kv["currency"]; ok {
		cc, err := ledger.ParseCurrency(v)
		if err != nil {
			return nil, p.err("bad_currency", quote(v))
		}
		if err := p.mergeCurrency(&cur, cc, v); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["rate"]; ok {
		d, cc, err := p.limitMoney(v, ledger.UnitHour, "team_bad_limit_rate")
		if err != nil {
			return nil, err
		}
		if err := p.mergeCurrency(&cur, cc, v); err != nil {
			return nil, err
		}
		c.Limit.RatePerHour, c.RateSet, bounds = d, true, bounds+1
	}
	if v, ok := p.kv["month"]; ok {
		d, cc, err := p.limitMoney(v, ledger.UnitMonth, "team_bad_limit_month")
		if err != nil {
			return nil, err
		}
		if err := p.mergeCurrency(&cur, cc, v); err != nil {
			return nil, err
		}
		c.Limit.Month, c.MonthSet, bounds = d, true, bounds+1
	}
	if v, ok := p.kv["gpus"]; ok {
		// "gpus=2 CNY" reaches here merged as "2CNY": the currency is the
		// limit's, not the count's.
		if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i > 0 {
			if cc, ok := currencyWord(strings.ToLower(v[i:])); ok {
				if err := p.mergeCurrency(&cur, cc, v); err != nil {
					return nil, err
				}
				v = v[:i]
			}
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 4096 || !isDigits(v) {
			return nil, p.err("team_bad_limit_gpus", quote(v))
		}
		c.Limit.GPUs, c.GPUsSet, bounds = n, true, bounds+1
	}
	if c.Limit.Scope == "" {
		return nil, p.err("team_limit_no_scope")
	}
	if bounds == 0 {
		return nil, p.err("team_limit_no_bound")
	}
	c.Limit.Currency = cur
	return c, nil
}

// limitMoney reads a limit's amount: a non-negative number with an
// optional currency and, for a rate, an optional "/h" ("10", "¥10/h",
// "10元/小时", "10/hr"); for a month, an optional "/month".
func (p *parser) limitMoney(v string, unit ledger.Unit, key string) (ledger.Decimal, ledger.Currency, error) {
	pp, ok := splitPrice(strings.ToLower(v))
	if !ok || pp.amount.Sign() < 0 || len(pp.segs) > 1 || len(pp.segs) == 1 && timeUnits[pp.segs[0]] != unit {
		return ledger.Decimal{}, "", p.err(key, quote(v))
	}
	return pp.amount, pp.currency, nil
}

// use reads /use TEAM | me.
func (p *parser) use(toks []string) (Command, error) {
	switch {
	case len(toks) == 0:
		return UseCmd{}, nil
	case len(toks) > 1:
		return nil, p.err("unexpected", quote(toks[1]), string(p.kind))
	}
	w := toks[0]
	if meWords[strings.ToLower(w)] {
		return UseCmd{Team: "me"}, nil
	}
	if ledger.ValidTeamName(w) != nil {
		return nil, p.err("team_bad_team_name", quote(w), strconv.Itoa(ledger.MaxTeamNameRunes))
	}
	return UseCmd{Team: w}, nil
}

// project reads /project [NAME | none].
func (p *parser) project(toks []string) (Command, error) {
	switch {
	case len(toks) == 0:
		return ProjectCmd{}, nil
	case len(toks) > 1:
		return nil, p.err("unexpected", quote(toks[1]), string(p.kind))
	}
	w := toks[0]
	if k, v, ok := cutKV(w); ok && (k == "project" || k == "name" || k == "项目") {
		w = v
	}
	if noneWords[strings.ToLower(w)] {
		return ProjectCmd{Clear: true}, nil
	}
	if w == "" || ledger.ValidProject(w) != nil {
		return nil, p.err("team_bad_project", quote(w), strconv.Itoa(ledger.MaxProjectRunes))
	}
	return ProjectCmd{Name: w}, nil
}
