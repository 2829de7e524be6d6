package chat_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

func TestDashboardCatalog(t *testing.T) {
	for _, err := range chat.DashboardCatalog().Check() {
		t.Error(err)
	}
}

func TestDashboardRow(t *testing.T) {
	t.Run("Off", func(t *testing.T) {
		if row := chat.DashboardRow("en", ""); row != nil {
			t.Fatalf("DashboardRow without a URL = %+v, want nil", row)
		}
	})
	t.Run("OK", func(t *testing.T) {
		const url = "https://ledger.example/app/"
		for lang, label := range map[string]string{"en": "📊 Open dashboard", "zh-hans": "📊 打开仪表盘"} {
			row := chat.DashboardRow(lang, url)
			if len(row) != 1 || row[0].Text != label || row[0].WebApp != url || row[0].Data != "" {
				t.Errorf("DashboardRow(%s) = %+v, want one web-app button %q to %s", lang, row, label, url)
			}
		}
	})
	t.Run("WithRow", func(t *testing.T) {
		rows := [][]chat.Button{{{Text: "a", Data: "x"}}}
		if got := chat.WithRow(rows, nil); len(got) != 1 {
			t.Errorf("WithRow(nil row) = %+v, want the rows unchanged", got)
		}
		got := chat.WithRow(rows, chat.DashboardRow("en", "https://h/app/"))
		if len(got) != 2 || got[0][0].Data != "x" || got[1][0].WebApp != "https://h/app/" {
			t.Errorf("WithRow = %+v, want the old row first, then the dashboard's", got)
		}
	})
}

// TestTeamAppURL: a team's button carries the team in the query (never
// in the fragment, which Telegram fills with its launch data), keeps what
// the URL had, and gives no URL where there is no button.
func TestTeamAppURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://ledger.example/app/", "https://ledger.example/app/?team=3"},
		{"https://ledger.example/base/app/?lang=zh#/month/2026-12", "https://ledger.example/base/app/?lang=zh&team=3"},
		{"https://ledger.example/app/?team=9", "https://ledger.example/app/?team=3"},
		{"", ""},
	} {
		if got := chat.TeamAppURL(c.in, 3); got != c.want {
			t.Errorf("TeamAppURL(%q, 3) = %q, want %q", c.in, got, c.want)
		}
	}
}
