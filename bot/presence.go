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
// addresses are named per kind; clients through a proxy on the host have
// none. "" when nobody is. The scheduler's idle card and /why share it.
func SessionsText(lang string, ss []ledger.Session) string {
	zh := NormLang(lang) == LangZH
	var parts []string
	for _, k := range ledger.SessionKinds {
		var who []string
		n := 0
		for _, s := range ss {
			if s.Kind != k {
				continue
			}
			n++
			if len(who) < 3 && s.Client != "" && s.Client != "local" {
				w := html.EscapeString(s.Client)
				switch {
				case zh && s.User != "":
					w = html.EscapeString(s.User) + " 来自 " + w
				case zh:
					w = "来自 " + w
				case s.User != "":
					w = html.EscapeString(s.User) + " from " + w
				default:
					w = "from " + w
				}
				who = append(who, w)
			}
		}
		if n == 0 {
			continue
		}
		var p string
		if zh {
			p = fmt.Sprintf("%d 个%s", n, map[string]string{ledger.SessionSSH: " SSH 会话", ledger.SessionJupyter: " Jupyter 客户端",
				ledger.SessionVSCode: " VS Code 客户端"}[k])
			if len(who) > 0 {
				p += "（" + strings.Join(who, "，") + "）"
			}
		} else {
			nouns := map[string][2]string{ledger.SessionSSH: {"SSH session", "SSH sessions"},
				ledger.SessionJupyter: {"Jupyter client", "Jupyter clients"}, ledger.SessionVSCode: {"VS Code client", "VS Code clients"}}[k]
			p = fmt.Sprintf("%d %s", n, nouns[min(n-1, 1)])
			if len(who) > 0 {
				p += " (" + strings.Join(who, ", ") + ")"
			}
		}
		parts = append(parts, p)
	}
	if zh {
		return strings.Join(parts, "、")
	}
	return strings.Join(parts, ", ")
}
