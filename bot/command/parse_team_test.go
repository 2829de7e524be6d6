package command

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_Team: /team, /use and /project as people write them, English
// and Chinese, and their refusals with the key that words them.
func TestParse_Team(t *testing.T) {
	lim := func(scope ledger.LimitScope, subject string, cur ledger.Currency, rate string, gpus int, month string) ledger.Limit {
		l := ledger.Limit{Scope: scope, Subject: subject, Currency: cur, GPUs: gpus}
		if rate != "" {
			l.RatePerHour = dec(rate)
		}
		if month != "" {
			l.Month = dec(month)
		}
		return l
	}
	ok := []struct {
		in   string
		want Command
	}{
		{"/team", TeamCmd{}},
		{"/team page=2", TeamCmd{Page: 2}},
		{"/team list page=3", TeamCmd{Page: 3}},
		{"/团队", TeamCmd{}},
		{"/team new gpu-crew", TeamCmd{Sub: TeamNew, Name: "gpu-crew"}},
		{"/团队 新建 显卡组", TeamCmd{Sub: TeamNew, Name: "显卡组"}},
		{"/team invite", TeamCmd{Sub: TeamInvite}},
		{"/team invite @carol_1", TeamCmd{Sub: TeamInvite, Who: "@carol_1"}},
		{"/团队 邀请 123456789", TeamCmd{Sub: TeamInvite, Who: "123456789"}},
		{"/team join abcd2345ef", TeamCmd{Sub: TeamJoin, Name: "abcd2345ef"}},
		{"/team join join-abcd2345ef", TeamCmd{Sub: TeamJoin, Name: "abcd2345ef"}},
		{"/团队 加入 abcd2345ef", TeamCmd{Sub: TeamJoin, Name: "abcd2345ef"}},
		{"/team leave", TeamCmd{Sub: TeamLeave}},
		{"/团队 退出", TeamCmd{Sub: TeamLeave}},
		{"/team remove @bob", TeamCmd{Sub: TeamRemove, Who: "@bob"}},
		{"/团队 移除 42", TeamCmd{Sub: TeamRemove, Who: "42"}},
		// A member without a username is listed as id42: typed back, it works.
		{"/team remove id42", TeamCmd{Sub: TeamRemove, Who: "42"}},
		{"/team role ID42 admin", TeamCmd{Sub: TeamRole, Who: "42", Role: ledger.RoleAdmin}},
		{"/team owner box3 id42", TeamCmd{Sub: TeamOwner, Name: "box3", Who: "42"}},
		{"/team owner id5 @bob", TeamCmd{Sub: TeamOwner, Name: "id5", Who: "@bob"}},
		{"/team role @bob admin", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleAdmin}},
		{"/team role admin @bob", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleAdmin}},
		{"/team role @bob OWNER", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleOwner}},
		{"/团队 角色 @bob 管理员", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleAdmin}},
		{"/团队 角色 @bob 所有者", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleOwner}},
		{"/团队 角色 @bob 成员", TeamCmd{Sub: TeamRole, Who: "@bob", Role: ledger.RoleMember}},
		{"/team bind", TeamCmd{Sub: TeamBind}},
		{"/团队 绑定", TeamCmd{Sub: TeamBind}},
		{"/team unbind", TeamCmd{Sub: TeamUnbind}},
		{"/团队 解绑", TeamCmd{Sub: TeamUnbind}},
		{"/team dm on", TeamCmd{Sub: TeamDM, On: true}},
		{"/team dm off", TeamCmd{Sub: TeamDM}},
		{"/团队 私信 开", TeamCmd{Sub: TeamDM, On: true}},
		{"/team limit", TeamCmd{Sub: TeamLimit}},
		{"/team limit @bob rate=10/h gpus=2 month=3000", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", "", "10", 2, "3000"), RateSet: true, GPUsSet: true, MonthSet: true}},
		{"/team limit @bob gpus=2 CNY", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", ledger.CNY, "", 2, ""), GPUsSet: true}},
		{"/team limit @bob rate=10/hr", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", "", "10", 0, ""), RateSet: true}},
		{"/team limit @bob rate=10", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", "", "10", 0, ""), RateSet: true}},
		{"/team limit @bob rate=$1.5/h", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", ledger.USD, "1.5", 0, ""), RateSet: true}},
		{"/team limit @bob rate=10 /h USD", TeamCmd{Sub: TeamLimit, Who: "@bob", Limit: lim(ledger.ScopeMember, "", ledger.USD, "10", 0, ""), RateSet: true}},
		{"/team limit project=yolo-v9 month=5000 CNY", TeamCmd{Sub: TeamLimit, Limit: lim(ledger.ScopeProject, "yolo-v9", ledger.CNY, "", 0, "5000"), MonthSet: true}},
		{"/team limit project=yolo-v9 month=0", TeamCmd{Sub: TeamLimit, Limit: lim(ledger.ScopeProject, "yolo-v9", "", "", 0, "0"), MonthSet: true}},
		{"/team limit team month=20000 currency=USD", TeamCmd{Sub: TeamLimit, Limit: lim(ledger.ScopeTeam, "", ledger.USD, "", 0, "20000"), MonthSet: true}},
		{"/团队 限额 团队 month=20000元", TeamCmd{Sub: TeamLimit, Limit: lim(ledger.ScopeTeam, "", ledger.CNY, "", 0, "20000"), MonthSet: true}},
		{"/团队 限额 项目=yolo 费率=10元/小时", TeamCmd{Sub: TeamLimit, Limit: lim(ledger.ScopeProject, "yolo", ledger.CNY, "10", 0, ""), RateSet: true}},
		{"/team owner box3 @bob", TeamCmd{Sub: TeamOwner, Name: "box3", Who: "@bob"}},
		{"/团队 转交 @bob box3", TeamCmd{Sub: TeamOwner, Name: "box3", Who: "@bob"}},
		{"/use", UseCmd{}},
		{"/use gpu-crew", UseCmd{Team: "gpu-crew"}},
		{"/use me", UseCmd{Team: "me"}},
		{"/切换 个人", UseCmd{Team: "me"}},
		{"/切换 显卡组", UseCmd{Team: "显卡组"}},
		{"/project", ProjectCmd{}},
		{"/project yolo-v9", ProjectCmd{Name: "yolo-v9"}},
		{"/project none", ProjectCmd{Clear: true}},
		{"/项目 无", ProjectCmd{Clear: true}},
		{"/项目 检测", ProjectCmd{Name: "检测"}},
		{"/start join-abcd2345ef", StartCmd{Join: "abcd2345ef"}},
		{"/start abcd2345ef", StartCmd{Code: "abcd2345ef"}},
	}
	for _, tc := range ok {
		got, err := Parse(tc.in, testNow, shanghai)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if show(got) != show(tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, show(got), show(tc.want))
		}
	}
	bad := []struct{ in, key string }{
		{"/team frobnicate", "team_bad_team_sub"},
		{"/team page=0", "team_bad_page"},
		{"/team page=x", "team_bad_page"},
		{"/team page=2 extra", "unexpected"},
		{"/team new", "team_missing_team_name"},
		{"/team new me", "team_bad_team_name"},
		{"/team new a<b>", "team_bad_team_name"},
		{"/team new " + strings.Repeat("x", 33), "team_bad_team_name"},
		{"/team new a b", "unexpected"},
		{"/team join", "team_missing_join_code"},
		{"/team join abc!def", "team_bad_join_code"},
		{"/team join " + strings.Repeat("a", 65), "team_bad_join_code"},
		{"/team invite bob", "team_bad_member"},
		{"/team invite @bo-b", "team_bad_member"},
		{"/team invite @" + strings.Repeat("b", 33), "team_bad_member"},
		{"/team invite -5", "team_bad_member"},
		{"/team remove", "team_missing_member"},
		{"/team remove bob", "team_bad_member"},
		{"/team leave now", "unexpected"},
		{"/team role @bob", "team_missing_role"},
		{"/team role admin", "team_missing_member"},
		{"/team role @bob boss", "team_bad_role"},
		{"/team role bob admin", "team_bad_member"},
		{"/team role @bob admin member", "unexpected"},
		{"/team dm", "team_missing_on_off"},
		{"/team dm maybe", "team_bad_on_off"},
		{"/team limit rate=10/h", "team_limit_no_scope"},
		{"/team limit @bob", "team_limit_no_bound"},
		{"/team limit @bob team rate=1", "team_limit_two_scopes"},
		{"/team limit @bob project=x rate=1", "team_limit_two_scopes"},
		{"/team limit @bob rate=10/day", "team_bad_limit_rate"},
		{"/team limit @bob rate=-1", "team_bad_limit_rate"},
		{"/team limit @bob month=abc", "team_bad_limit_month"},
		{"/team limit @bob gpus=2.5", "team_bad_limit_gpus"},
		{"/team limit @bob gpus=-1", "team_bad_limit_gpus"},
		{"/team limit @bob gpus=2 foo", "unexpected"},
		{"/team limit @bob gpus=2x", "team_bad_limit_gpus"},
		{"/team limit project=a/b month=1", "team_bad_project"},
		{"/team limit @bob rate=$10 currency=CNY", "currency_conflict"},
		{"/team limit @bob rate=$10 CNY", "team_bad_limit_rate"},
		{"/team limit @bob rate=1 foo", "unexpected"},
		{"/team limit @bob speed=1", "unknown_key"},
		{"/team limit @bob rate=1 rate=2", "twice"},
		{"/team owner @bob", "missing_name"},
		{"/team owner box3", "team_missing_member"},
		{"/team owner box3 @bob box4", "unexpected"},
		{"/use a b", "unexpected"},
		{"/use a<b", "team_bad_team_name"},
		{"/project a/b", "team_bad_project"},
		{"/project a b", "unexpected"},
		{"/start join-", "team_bad_join_code"},
		{"/start join-a!b", "bad_code"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.in, testNow, shanghai)
		pe, ok := err.(*ParseError)
		if !ok || pe.Key != tc.key {
			t.Errorf("%q: err %v, want %s", tc.in, err, tc.key)
		}
	}
}

// checkTeam is FuzzParse's check of a /team command: the name, code,
// member, role and limit it carries are ones the store takes.
func checkTeam(t *testing.T, in string, c TeamCmd) {
	t.Helper()
	switch c.Sub {
	case TeamNew:
		if ledger.ValidTeamName(c.Name) != nil {
			t.Fatalf("Parse(%q): team name %q", in, c.Name)
		}
	case TeamJoin:
		if !validJoinCode(c.Name) {
			t.Fatalf("Parse(%q): join code %q", in, c.Name)
		}
	case TeamRole:
		if !c.Role.Valid() {
			t.Fatalf("Parse(%q): role %q", in, c.Role)
		}
	case TeamLimit:
		l := c.Limit
		if l.RatePerHour.Sign() < 0 || l.Month.Sign() < 0 || l.GPUs < 0 {
			t.Fatalf("Parse(%q): negative limit %+v", in, l)
		}
		if l.Scope == ledger.ScopeProject && ledger.ValidProject(l.Subject) != nil {
			t.Fatalf("Parse(%q): project %q", in, l.Subject)
		}
	}
	if c.Who != "" && !isWho(c.Who) {
		t.Fatalf("Parse(%q): member %q", in, c.Who)
	}
	if c.Page < 0 {
		t.Fatalf("Parse(%q): page %d", in, c.Page)
	}
}
