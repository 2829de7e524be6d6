package chat

import "strings"

// Languages the bot speaks. Any other tag falls back to English; tags such
// as "zh-CN" or "zh-hans" count as Chinese.
const (
	LangEN = "en"
	LangZH = "zh"
)

// NormLang maps a language tag (a user's setting, Telegram's language_code)
// to LangEN or LangZH.
func NormLang(lang string) string {
	l := strings.ToLower(strings.TrimSpace(lang))
	if l == "zh" || strings.HasPrefix(l, "zh-") || strings.HasPrefix(l, "zh_") || l == "cn" || l == "中文" {
		return LangZH
	}
	return LangEN
}
