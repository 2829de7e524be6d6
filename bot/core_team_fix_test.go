package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestTeam_LimitKeepsUnwrittenBounds: a second /team limit for the same
// member and currency keeps the bounds it does not write, a bound written
// as 0 clears only that one, and the reply lists the whole limit.
func TestTeam_LimitKeepsUnwrittenBounds(t *testing.T) {
	e := newTeamChat(t, false)
	ctx := context.Background()
	tm := e.teamNamed("crew")
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")

	contains(t, e.reply(ann, "/team limit @ben gpus=2"), "2 GPUs")
	contains(t, e.reply(ann, "/team limit @ben month=3000"), "2 GPUs", "¥3000.00")
	ls, err := e.db.Limits(ctx, tm.ID)
	if err != nil || len(ls) != 1 || ls[0].GPUs != 2 || ls[0].Month.String() != "3000" {
		t.Fatalf("limits after month= = %+v %v, want gpus 2 and month 3000 kept together", ls, err)
	}
	r := e.reply(ann, "/team limit @ben gpus=0")
	contains(t, r, "¥3000.00")
	if strings.Contains(r, "GPUs") {
		t.Fatalf("gpus=0 reply still lists GPUs: %q", r)
	}
	if ls, _ := e.db.Limits(ctx, tm.ID); len(ls) != 1 || ls[0].GPUs != 0 || ls[0].Month.String() != "3000" {
		t.Fatalf("limits after gpus=0 = %+v, want month 3000 only", ls)
	}
	contains(t, e.reply(ann, "/team limit @ben month=0"), "no CNY limit")
}

// TestTeam_LimitListSaysMore: a list of more limits than one reply shows
// ends with how many were left out.
func TestTeam_LimitListSaysMore(t *testing.T) {
	e := newTeamChat(t, false)
	for i := range 53 {
		contains(t, e.reply(ann, fmt.Sprintf("/team limit project=p%d month=100", i)), "project p")
	}
	contains(t, e.reply(ann, "/team limit"), "… and 3 more")
}
