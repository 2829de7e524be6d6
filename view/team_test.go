package view

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestTeamSplit_Bounded: a team of 1,000 people who all spent lists its
// largest spenders and one line for the rest, within one message, and
// the lines still add up to the total.
func TestTeamSplit_Bounded(t *testing.T) {
	var rows []ledger.SplitRow
	var total int64
	for i := int64(1); i <= ledger.MaxTeamMembers; i++ {
		rows = append(rows, ledger.SplitRow{Owner: i, Project: "p" + strconv.FormatInt(i%40, 10), Currency: ledger.CNY, Amount: ledger.Money{Currency: ledger.CNY, Minor: i}})
		total += i
	}
	got := TeamSplit("en", rows, func(id int64) string { return "@member" + strconv.FormatInt(id, 10) })
	if n := utf8.RuneCountInString(got); n > 2000 {
		t.Errorf("the split of 1,000 members is %d characters, want a bounded list (≤ 2000)", n)
	}
	persons, projects, _ := strings.Cut(got, "<b>By project</b>")
	if !strings.Contains(persons, "@member1000 ¥10.00") || !strings.Contains(persons, "… 985 more ") {
		t.Errorf("want the largest spender first and the 985 others summed:\n%s", persons)
	}
	if !strings.Contains(projects, "… 25 more ") {
		t.Errorf("want the 25 smaller projects summed:\n%s", projects)
	}
	for _, list := range []string{persons, projects} {
		var sum int64
		for _, line := range strings.Split(list, "\n") {
			i := strings.LastIndex(line, "¥")
			if i < 0 {
				continue
			}
			d, err := ledger.ParseDecimal(line[i+len("¥"):])
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			sum += ledger.MoneyFromDecimal(d, ledger.CNY).Minor
		}
		if sum != total {
			t.Errorf("the lines add up to %d fen, want the total %d:\n%s", sum, total, list)
		}
	}
}

// TestTeamSplit_BoundedAcrossCurrencies: 1,000 people spending in three
// currencies still make one message (the lines shared among the
// currencies), each currency's lines add up to its total, and the Chinese
// line for the rest of the people counts people (人), not items (项).
func TestTeamSplit_BoundedAcrossCurrencies(t *testing.T) {
	curs := []ledger.Currency{ledger.CNY, ledger.USD, ledger.EUR}
	var rows []ledger.SplitRow
	totals := map[ledger.Currency]int64{}
	for _, c := range curs {
		for i := int64(1); i <= ledger.MaxTeamMembers; i++ {
			rows = append(rows, ledger.SplitRow{Owner: i, Project: "p" + strconv.FormatInt(i%40, 10), Currency: c, Amount: ledger.Money{Currency: c, Minor: i}})
			totals[c] += i
		}
	}
	for _, lang := range []string{"en", "zh"} {
		got := TeamSplit(lang, rows, func(id int64) string { return "@a_rather_long_member_name_" + strconv.FormatInt(id, 10) })
		if n := utf8.RuneCountInString(got); n > 1500 {
			t.Errorf("%s: the split of 1,000 members in 3 currencies is %d characters, want ≤ 1500 (as many lines as one currency's, leaving the message room for the rest)", lang, n)
		}
		persons, projects, _ := strings.Cut(got, map[string]string{"en": "<b>By project</b>", "zh": "<b>按项目</b>"}[lang])
		if lang == "zh" && (!strings.Contains(persons, "人 ") || strings.Contains(persons, "项 ") || !strings.Contains(projects, "项 ")) {
			t.Errorf("zh: the rest of the people must be counted in 人, of the projects in 项:\n%s", got)
		}
		for _, c := range curs {
			sym := FormatMoney(ledger.Money{Currency: c})[:len(FormatMoney(ledger.Money{Currency: c}))-len("0.00")]
			for _, list := range []string{persons, projects} {
				var sum int64
				for _, line := range strings.Split(list, "\n") {
					i := strings.LastIndex(line, " "+sym)
					if i < 0 {
						continue
					}
					d, err := ledger.ParseDecimal(line[i+1+len(sym):])
					if err != nil {
						t.Fatalf("line %q: %v", line, err)
					}
					sum += ledger.MoneyFromDecimal(d, c).Minor
				}
				if sum != totals[c] {
					t.Errorf("%s %s: the lines add up to %d, want the total %d:\n%s", lang, c, sum, totals[c], list)
				}
			}
		}
	}
}

// TestTeamSplit_Unpriced: a person whose lines are all unpriced shows
// "¥0.00 + UNPRICED", not a bare ¥0.00 read as nothing spent; a person
// partly priced shows the priced money and the mark; a person all priced
// shows no mark; the rows summed past MaxSplitLines keep the mark of an
// unpriced row among them. The same in Chinese.
func TestTeamSplit_Unpriced(t *testing.T) {
	cny := func(minor int64) ledger.Money { return ledger.Money{Currency: ledger.CNY, Minor: minor} }
	rows := []ledger.SplitRow{
		{Owner: 1, Project: "yolo", Currency: ledger.CNY, Amount: cny(1000)},
		{Owner: 2, Project: "llm", Currency: ledger.CNY, Amount: cny(0), Unpriced: 2},
		{Owner: 3, Project: "llm", Currency: ledger.CNY, Amount: cny(320)},
		{Owner: 3, Project: "", Currency: ledger.CNY, Amount: cny(0), Unpriced: 1},
	}
	names := func(id int64) string { return map[int64]string{1: "@alice", 2: "@bob", 3: "@carol"}[id] }
	for _, lang := range []string{"en", "zh"} {
		got := TeamSplit(lang, rows, names)
		for _, w := range []string{"\n@alice ¥10.00\n", "\n@carol ¥3.20 + UNPRICED\n", "\n@bob ¥0.00 + UNPRICED\n", " ¥3.20 + UNPRICED\n", "yolo ¥10.00\n"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the split lacks %q:\n%s", lang, w, got)
			}
		}
		if strings.Contains(got, "@alice ¥10.00 + UNPRICED") {
			t.Errorf("%s: Alice's priced row is marked unpriced:\n%s", lang, got)
		}
	}
	// Past the bound: one unpriced row among the rest marks their sum.
	var many []ledger.SplitRow
	for i := int64(1); i <= MaxSplitLines+3; i++ {
		many = append(many, ledger.SplitRow{Owner: i, Currency: ledger.CNY, Amount: cny(1000 - i)})
	}
	many = append(many, ledger.SplitRow{Owner: 999, Currency: ledger.CNY, Amount: cny(0), Unpriced: 1})
	got := TeamSplit("en", many, nil)
	marked := false
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "… 4 more ¥") && strings.HasSuffix(line, " + UNPRICED") {
			marked = true
		}
	}
	if !marked {
		t.Errorf("the rest past the bound must carry the unpriced mark:\n%s", got)
	}
}
