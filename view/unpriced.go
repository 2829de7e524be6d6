package view

import (
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// MaxUnpricedNamed bounds how many UNPRICED lines a reply names, each
// with its command: more would bury the totals they explain; the rest
// are counted ("and 3 more") and show up once the first are priced.
const MaxUnpricedNamed = 3

// PriceCommand is the command that prices an UNPRICED line, ready to be
// sent as it stands, and the example amount in it that the user puts
// their platform's price in place of: a rental's compute from its start
// (/price), a volume from its creation (/storage … price=), a rental's
// traffic (/traffic … price=). The amount is an example in the line's
// currency, never a price the ledger knows: the replies say so.
func PriceCommand(l ledger.UnpricedLine) (cmd, example string) {
	name := ""
	if l.Rental != nil {
		name = l.Rental.Name
		if l.Ref != "" {
			name = l.Ref // a name another rental has: its address reaches it
		}
	}
	switch l.Category {
	case ledger.CategoryStorage:
		if l.Volume == nil {
			return "", ""
		}
		return "/storage " + l.Volume.Name + " price=0.10/GB/month", "0.10"
	case ledger.CategoryTraffic:
		if l.Rental == nil {
			return "", ""
		}
		ex := "0.10"
		if l.Rental.Currency == ledger.CNY {
			ex = "0.80"
		}
		return "/traffic " + name + " price=" + ex + "/GB", ex
	case ledger.CategoryCompute:
		if l.Rental == nil {
			return "", ""
		}
		ex := "0.50"
		if l.Rental.Currency == ledger.CNY {
			ex = "1.88"
		}
		return "/price " + name + " " + ex + "/h", ex
	}
	return "", ""
}

// unpricedName is the name a line is listed under: its volume's, else
// its rental's.
func unpricedName(l ledger.UnpricedLine) string {
	if l.Volume != nil {
		return l.Volume.Name
	}
	if l.Ref != "" {
		return l.Ref
	}
	if l.Rental != nil {
		return l.Rental.Name
	}
	return ""
}

// UnpricedText names the lines that totals leave out for want of a
// price, up to MaxUnpricedNamed, each with the command that prices it,
// then how many more there are; "" when there are none. A line listed
// twice (the day's and the month's statements) is named once.
func UnpricedText(lines []ledger.UnpricedLine, lang string) string {
	lines = uniqueUnpriced(lines)
	if len(lines) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(tr(lang, "unpriced_head"))
	for i, l := range lines {
		if i == MaxUnpricedNamed {
			sb.WriteString("\n" + tr(lang, "unpriced_more", strconv.Itoa(len(lines)-i)))
			break
		}
		cmd, _ := PriceCommand(l)
		sb.WriteString("\n" + tr(lang, "unpriced_line", unpricedName(l), word(categoryWords, l.Category, lang), cmd))
	}
	sb.WriteString("\n" + tr(lang, "unpriced_example"))
	return sb.String()
}

// uniqueUnpriced drops repeated lines, keeping the first of each.
func uniqueUnpriced(lines []ledger.UnpricedLine) []ledger.UnpricedLine {
	type key struct {
		c ledger.Category
		r *ledger.Rental
		v *ledger.Volume
	}
	seen := make(map[key]bool, len(lines))
	out := make([]ledger.UnpricedLine, 0, len(lines))
	for _, l := range lines {
		k := key{l.Category, l.Rental, l.Volume}
		if l.Volume != nil {
			k.r = nil // a volume is one line, attached or not
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, l)
	}
	return out
}

// categoryWords names the kinds of charge in the UNPRICED list.
var categoryWords = map[ledger.Category][2]string{
	ledger.CategoryCompute: {"compute", "计算"},
	ledger.CategoryStorage: {"storage", "存储"},
	ledger.CategoryTraffic: {"traffic", "流量"},
	ledger.CategoryOther:   {"other", "其他"},
}

// liveUnpriced keeps the lines /status shows: of unreleased rentals and
// live volumes.
func liveUnpriced(lines []ledger.UnpricedLine) []ledger.UnpricedLine {
	var out []ledger.UnpricedLine
	for _, l := range lines {
		if l.Volume != nil {
			if _, deleted := l.Volume.Deleted(); deleted {
				continue
			}
		} else if l.Rental == nil || l.Rental.State() == ledger.Released {
			continue
		}
		out = append(out, l)
	}
	return out
}

// notIn returns the lines of a that are not in b.
func notIn(a, b []ledger.UnpricedLine) []ledger.UnpricedLine {
	var out []ledger.UnpricedLine
	for _, l := range a {
		dup := false
		for _, m := range b {
			if l.Category == m.Category && l.Volume == m.Volume && (l.Volume != nil || l.Rental == m.Rental) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, l)
		}
	}
	return out
}
