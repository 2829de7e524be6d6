package bot_test

import (
	"testing"
)

// TestTeam_JoinNoticeNamesInviter: the team's admins are told who joined
// and with whose invite, each in their own language; the joiner is not
// told of themselves, and a plain member hears nothing.
func TestTeam_JoinNoticeNamesInviter(t *testing.T) {
	e := newTeamChat(t, true)
	notices := func(user int64, text string) map[int64]string {
		t.Helper()
		got := map[int64]string{}
		for _, s := range e.talk(user, text) {
			if s.Out.ChatID != user {
				got[s.Out.ChatID] += s.Out.Text
			}
		}
		return got
	}

	// ben joins with ann's code: ann, the only admin, is told it was hers.
	got := notices(ben, "/team join "+e.invite(ann, ""))
	if len(got) != 1 || got[ann] != "@ben joined team crew with @ann's invite." {
		t.Fatalf("notices after ben joined = %v, want ann told it was her invite", got)
	}

	// cat joins with ann's code while ben is a member: only ann hears.
	got = notices(cat, "/team join "+e.invite(ann, ""))
	if len(got) != 1 || got[ann] != "@cat joined team crew with @ann's invite." {
		t.Fatalf("notices after cat joined = %v, want ann alone told", got)
	}

	// ben, made an admin, invites dan (an outsider); ann reads Chinese.
	contains(t, e.reply(ann, "/team role @ben admin"), "@ben", "admin")
	contains(t, e.reply(ann, "/settings lang=zh"), "设置已保存")
	got = notices(dan, "/team join "+e.invite(ben, ""))
	if len(got) != 2 {
		t.Fatalf("notices after dan joined = %v, want ann and ben told", got)
	}
	if want := "@dan 用 @ben 的邀请码加入了团队 crew。"; got[ann] != want {
		t.Errorf("ann's notice = %q, want %q", got[ann], want)
	}
	if want := "@dan joined team crew with @ben's invite."; got[ben] != want {
		t.Errorf("ben's notice = %q, want %q", got[ben], want)
	}
}
