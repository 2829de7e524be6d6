package chat

import (
	"fmt"
	"time"
)

// FormatDuration shows a duration the one way every reply, card and alert
// writes it, rounded down to the minute above a minute and to the hour
// above a day: "45s", "12m", "1h05m", "2d3h" in English; "45秒", "12分钟",
// "1小时5分", "2天3小时" in Chinese.
func FormatDuration(d time.Duration, lang string) string {
	zh := NormLang(lang) == LangZH
	sign := ""
	if d < 0 {
		sign = "-"
		d = -d
		if d < 0 { // math.MinInt64
			d = 1<<63 - 1
		}
	}
	secs := int64(d / time.Second)
	days, hours, mins := secs/86400, secs/3600%24, secs/60%60
	var s string
	switch {
	case secs < 60 && zh:
		s = fmt.Sprintf("%d秒", secs)
	case secs < 60:
		s = fmt.Sprintf("%ds", secs)
	case secs < 3600 && zh:
		s = fmt.Sprintf("%d分钟", mins)
	case secs < 3600:
		s = fmt.Sprintf("%dm", mins)
	case days == 0 && zh && mins == 0:
		s = fmt.Sprintf("%d小时", hours)
	case days == 0 && zh:
		s = fmt.Sprintf("%d小时%d分", hours, mins)
	case days == 0 && mins == 0:
		s = fmt.Sprintf("%dh", hours)
	case days == 0:
		s = fmt.Sprintf("%dh%02dm", hours, mins)
	case zh && hours == 0:
		s = fmt.Sprintf("%d天", days)
	case zh:
		s = fmt.Sprintf("%d天%d小时", days, hours)
	case hours == 0:
		s = fmt.Sprintf("%dd", days)
	default:
		s = fmt.Sprintf("%dd%dh", days, hours)
	}
	return sign + s
}
