package view

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestTeamSplit(t *testing.T) {
	cny := func(minor int64) ledger.Money { return ledger.Money{Currency: ledger.CNY, Minor: minor} }
	rows := []ledger.SplitRow{
		{Owner: 0, Project: "", Currency: ledger.CNY, Amount: cny(50)},
		{Owner: 1, Project: "yolo-v9", Currency: ledger.CNY, Amount: cny(1000)},
		{Owner: 1, Project: "", Currency: ledger.CNY, Amount: cny(230)},
		{Owner: 2, Project: "yolo-v9", Currency: ledger.CNY, Amount: cny(400)},
		{Owner: 2, Project: "llm", Currency: ledger.CNY, Amount: cny(700)},
		{Owner: 2, Project: "llm", Currency: ledger.USD, Amount: ledger.Money{Currency: ledger.USD, Minor: 300}},
		{Owner: 3, Project: "llm", Currency: ledger.CNY, Amount: cny(1)},
	}
	names := func(id int64) string {
		switch id {
		case 1:
			return "@alice"
		case 2:
			return "@b<o>b"
		}
		return "" // a member the caller cannot name
	}
	got := TeamSplit("en", rows, names)
	want := strings.Join([]string{
		"<b>By person</b>",
		"@alice ¥12.30",
		"@b&lt;o&gt;b ¥11.00",
		"unclaimed ¥0.50",
		"id3 ¥0.01",
		"@b&lt;o&gt;b $3.00",
		"<b>By project</b>",
		"yolo-v9 ¥14.00",
		"llm ¥7.01",
		"(no project) ¥2.80",
		"llm $3.00",
	}, "\n")
	if got != want {
		t.Errorf("TeamSplit en =\n%s\nwant\n%s", got, want)
	}
	zh := TeamSplit("zh", rows, names)
	for _, w := range []string{"<b>按成员</b>", "无人认领 ¥0.50", "<b>按项目</b>", "（无项目） ¥2.80"} {
		if !strings.Contains(zh, w) {
			t.Errorf("TeamSplit zh lacks %q:\n%s", w, zh)
		}
	}
	if s := TeamSplit("en", nil, names); s != "" {
		t.Errorf("TeamSplit of nothing = %q, want \"\"", s)
	}
	for _, err := range teamMessages.Check() {
		t.Error(err)
	}
}
