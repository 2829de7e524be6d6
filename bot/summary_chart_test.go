package bot_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/view"
)

// TestCore_SummaryHasChart: /summary on demand is followed by the same
// 14-day spend chart as the nightly summary (view.SummaryChart), with
// its caption in the user's language.
func TestCore_SummaryHasChart(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}, SummaryChart: view.SummaryChart})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.now = e.now.Add(5 * 3600e9)
	e.say(alice, "/settings lang=zh")
	out := e.handle(e.update(alice, "/summary"))
	if len(out) != 2 {
		t.Fatalf("/summary: want the summary and its chart, got %d messages: %+v", len(out), out)
	}
	contains(t, out[0].Out.Text, "每日总结")
	chart := out[1].Out
	if chart.Photo == nil {
		t.Fatalf("/summary's second message has no photo: %+v", chart)
	}
	contains(t, chart.Text, "最近 14 天")
	img, err := png.Decode(bytes.NewReader(chart.Photo.Data))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != view.ChartWidth || b.Dy() != view.ChartHeight {
		t.Errorf("chart is %v, want %dx%d", b, view.ChartWidth, view.ChartHeight)
	}
}
