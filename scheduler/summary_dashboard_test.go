package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestSummaries_DashboardButton: the nightly summary carries the
// [Open dashboard] web-app button when the dashboard has an https URL,
// in the user's language, and none otherwise.
func TestSummaries_DashboardButton(t *testing.T) {
	for name, tc := range map[string]struct {
		url  func() string
		lang string
		want string // the button's label; "" for no button
	}{
		"OK":      {func() string { return "https://ledger.example/app/" }, "en", "📊 Open dashboard"},
		"Chinese": {func() string { return "https://ledger.example/app/" }, "zh", "📊 打开仪表盘"},
		"NoHTTPS": {func() string { return "" }, "en", ""},
		"Nil":     {nil, "en", ""},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			if tc.lang != "en" {
				u, _ := e.db.User(ctx, 1)
				u.Lang = tc.lang
				if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
					t.Fatal(err)
				}
			}
			s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.chat, Buttons: testButtons(), Now: e.clk.Now, NoChart: true, DashboardURL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai
			if err := s.Summaries(ctx); err != nil {
				t.Fatal(err)
			}
			m := e.chat.NewMessages()
			if len(m) != 1 {
				t.Fatalf("summaries = %+v", m)
			}
			if tc.want == "" {
				if m[0].Buttons != nil {
					t.Errorf("buttons %+v, want none", m[0].Buttons)
				}
				return
			}
			if len(m[0].Buttons) != 1 || len(m[0].Buttons[0]) != 1 || m[0].Buttons[0][0].Text != tc.want || m[0].Buttons[0][0].WebApp != "https://ledger.example/app/" {
				t.Errorf("buttons %+v, want one web-app button %q", m[0].Buttons, tc.want)
			}
		})
	}
}
