package view

import (
	"fmt"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// SessionsText says who is connected to a rental's host, in lang, as HTML:
// "1 SSH session (root from 1.2.3.4), 1 Jupyter client" or
// "1 个 SSH 会话（root 来自 1.2.3.4）、1 个 Jupyter 客户端". At most three
// addresses are named per kind; a Jupyter or VS Code client through a
// proxy on the host has none. "" when nobody is. The scheduler's idle card and /why share it;
// the English is ledger.DescribeSessions, the words of the /why log.
func SessionsText(lang string, ss []ledger.Session) string {
	if chat.NormLang(lang) != chat.LangZH {
		return chat.Escape(ledger.DescribeSessions(ss))
	}
	var parts []string
	for _, g := range ledger.GroupSessions(ss) {
		p := fmt.Sprintf("%d 个%s", g.N, map[string]string{ledger.SessionSSH: " SSH 会话", ledger.SessionJupyter: " Jupyter 客户端",
			ledger.SessionVSCode: " VS Code 客户端"}[g.Kind])
		var who []string
		for _, w := range g.Who {
			var s []string
			if w.User != "" {
				s = append(s, chat.Escape(w.User))
			}
			if w.Client != "" {
				s = append(s, "来自 "+chat.Escape(w.Client))
			}
			who = append(who, strings.Join(s, " "))
		}
		if len(who) > 0 {
			p += "（" + strings.Join(who, "，") + "）"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "、")
}
