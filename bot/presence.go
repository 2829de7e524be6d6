package bot

import (
	"fmt"
	"html"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// SessionsText says who is connected to a rental's host, in lang, as HTML:
// "1 SSH session (root from 1.2.3.4), 1 Jupyter client" or
// "1 个 SSH 会话（root 来自 1.2.3.4）、1 个 Jupyter 客户端". At most three
// addresses are named per kind; a Jupyter or VS Code client through a
// proxy on the host has none. "" when nobody is. The scheduler's idle card and /why share it;
// the English is ledger.DescribeSessions, the words of the /why log.
func SessionsText(lang string, ss []ledger.Session) string {
	if NormLang(lang) != LangZH {
		return html.EscapeString(ledger.DescribeSessions(ss))
	}
	var parts []string
	for _, k := range ledger.SessionKinds {
		var who []string
		n := 0
		for _, s := range ss {
			if s.Kind != k {
				continue
			}
			n++
			if len(who) < 3 && (s.Client != "" || s.User != "") {
				var w []string
				if s.User != "" {
					w = append(w, html.EscapeString(s.User))
				}
				if s.Client != "" && (s.Client != "local" || s.Kind == ledger.SessionSSH) {
					w = append(w, "来自 "+html.EscapeString(s.Client))
				}
				if len(w) > 0 {
					who = append(who, strings.Join(w, " "))
				}
			}
		}
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%d 个%s", n, map[string]string{ledger.SessionSSH: " SSH 会话", ledger.SessionJupyter: " Jupyter 客户端",
			ledger.SessionVSCode: " VS Code 客户端"}[k])
		if len(who) > 0 {
			p += "（" + strings.Join(who, "，") + "）"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "、")
}
