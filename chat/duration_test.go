package chat_test

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
)

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d      time.Duration
		en, zh string
	}{
		{0, "0s", "0秒"},
		{45 * time.Second, "45s", "45秒"},
		{12*time.Minute + 59*time.Second, "12m", "12分钟"},
		{time.Hour, "1h", "1小时"},
		{time.Hour + 5*time.Minute, "1h05m", "1小时5分"},
		{23*time.Hour + 59*time.Minute, "23h59m", "23小时59分"},
		{24 * time.Hour, "1d", "1天"},
		{51 * time.Hour, "2d3h", "2天3小时"},
		{-90 * time.Minute, "-1h30m", "-1小时30分"},
		{-1 << 63, "-106751d23h", "-106751天23小时"},
	}
	for _, tt := range tests {
		if got := chat.FormatDuration(tt.d, "en"); got != tt.en {
			t.Errorf("FormatDuration(%v, en) = %q, want %q", tt.d, got, tt.en)
		}
		if got := chat.FormatDuration(tt.d, "zh"); got != tt.zh {
			t.Errorf("FormatDuration(%v, zh) = %q, want %q", tt.d, got, tt.zh)
		}
	}
}
