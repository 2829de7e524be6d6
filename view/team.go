package view

import (
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// teamMessages are the texts of a team's split, kept apart from the
// ledger views' catalog so that the chat and the nightly summary share
// them.
var teamMessages = chat.Catalog{
	"split_by_person":   {"<b>By person</b>", "<b>按成员</b>"},
	"split_by_project":  {"<b>By project</b>", "<b>按项目</b>"},
	"split_unclaimed":   {"unclaimed", "无人认领"},
	"split_no_project":  {"(no project)", "（无项目）"},
	"split_line":        {"%[1]s %[2]s", "%[1]s %[2]s"},
	"split_more":        {"… %[1]s more %[2]s", "… 另外 %[1]s 项 %[2]s"},
	"split_more_people": {"… %[1]s more %[2]s", "… 另外 %[1]s 人 %[2]s"},
	// A row with unpriced lines, marked as the ledger views mark a total
	// that leaves some out (totalText, totalsText).
	"split_unpriced": {"%[1]s + UNPRICED", "%[1]s + UNPRICED"},
}

// MaxSplitLines bounds the lines of each list of a team's split, shared
// among its currencies (each gets MaxSplitLines divided by their number,
// at least one): a team of 1,000 people lists its largest spenders, then
// one line per currency with how many more and what they spent together,
// so the reply stays within one message however many currencies it has,
// and still adds up to the total.
const MaxSplitLines = 15

// TeamSplit renders a team statement's split (from ledger.Split) as two
// lists, "By person" and "By project", each amount in its own currency,
// the largest first: the rows of one currency in each list add up to
// exactly that currency's total, because both come from the same rows.
// names gives an owner's display name ("@alice"); an owner 0 is shown as
// unclaimed and a project "" as "(no project)". A row with unpriced
// lines says so ("@bob ¥0.00 + UNPRICED"), as the statement's total does,
// so that a person whose boxes have no price is not read as having spent
// nothing. An empty split renders as "", so a statement with nothing
// spent adds nothing.
//
// The chat's /spend and /summary on a team and the scheduler's nightly
// team summary call this one function, so they never disagree.
func TeamSplit(lang string, rows []ledger.SplitRow, names func(owner int64) string) string {
	lang = chat.NormLang(lang)
	if len(rows) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(teamMessages.Render(lang, "split_by_person"))
	for _, r := range boundSplit(ledger.SplitBy(rows, false)) {
		if r.more > 0 {
			sb.WriteString("\n" + teamMessages.Render(lang, "split_more_people", strconv.Itoa(r.more), splitAmount(lang, r.SplitRow)))
			continue
		}
		name := teamMessages.Render(lang, "split_unclaimed")
		if r.Owner != 0 {
			n := ""
			if names != nil {
				n = names(r.Owner)
			}
			if n == "" {
				n = "id" + strconv.FormatInt(r.Owner, 10)
			}
			name = chat.Escape(n)
		}
		sb.WriteString("\n" + teamMessages.Render(lang, "split_line", chat.RawHTML(name), splitAmount(lang, r.SplitRow)))
	}
	sb.WriteString("\n" + teamMessages.Render(lang, "split_by_project"))
	for _, r := range boundSplit(ledger.SplitBy(rows, true)) {
		if r.more > 0 {
			sb.WriteString("\n" + teamMessages.Render(lang, "split_more", strconv.Itoa(r.more), splitAmount(lang, r.SplitRow)))
			continue
		}
		name := teamMessages.Render(lang, "split_no_project")
		if r.Project != "" {
			name = chat.Escape(r.Project)
		}
		sb.WriteString("\n" + teamMessages.Render(lang, "split_line", chat.RawHTML(name), splitAmount(lang, r.SplitRow)))
	}
	return sb.String()
}

// splitAmount is a row's money, marked when some of its lines have no
// price.
func splitAmount(lang string, r ledger.SplitRow) string {
	if r.Unpriced > 0 {
		return teamMessages.Render(lang, "split_unpriced", FormatMoney(r.Amount))
	}
	return FormatMoney(r.Amount)
}

// boundedRow is a row of a split list, or (more > 0) the sum of the rows
// of its currency past MaxSplitLines.
type boundedRow struct {
	ledger.SplitRow
	more int
}

// boundSplit keeps the first rows of each currency of a list sorted by
// currency (SplitBy's order), MaxSplitLines shared among the currencies,
// and sums the rest of each currency into one, their unpriced lines too.
func boundSplit(rows []ledger.SplitRow) []boundedRow {
	currencies := 0
	for i := range rows {
		if i == 0 || rows[i].Currency != rows[i-1].Currency {
			currencies++
		}
	}
	keep := max(1, MaxSplitLines/max(1, currencies))
	out := make([]boundedRow, 0, len(rows))
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Currency == rows[i].Currency {
			j++
		}
		for k := i; k < j && k < i+keep; k++ {
			out = append(out, boundedRow{SplitRow: rows[k]})
		}
		if j-i > keep {
			rest := boundedRow{SplitRow: ledger.SplitRow{Currency: rows[i].Currency, Amount: ledger.Money{Currency: rows[i].Currency}}, more: j - i - keep}
			for k := i + keep; k < j; k++ {
				rest.Amount = rest.Amount.Add(rows[k].Amount)
				rest.Unpriced += rows[k].Unpriced
			}
			out = append(out, rest)
		}
		i = j
	}
	return out
}
