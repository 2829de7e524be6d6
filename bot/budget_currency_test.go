package bot_test

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/view"
)

// TestCore_BudgetPerCurrency: a user spending in yuan and dollars keeps one
// budget per currency; an amount without a sign is not guessed but asked
// about; /budget lists them all; one can be removed and the removal undone.
func TestCore_BudgetPerCurrency(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.say(alice, "/rent box2 runpod a100 $1.64/h")

	ask := e.say(alice, "/budget 3000/month")
	contains(t, ask, "¥", "$", "/budget ¥3000/month")
	if strings.Contains(ask, "✓") {
		t.Fatalf("/budget 3000/month with two currencies was set: %q", ask)
	}
	if bs := e.book(alice).User.Budgets; len(bs) != 0 {
		t.Fatalf("an unasked currency was stored: %+v", bs)
	}
	contains(t, e.say(alice, "/budget ¥3000/month"), "✓", "¥3000.00")
	contains(t, e.say(alice, "/budget $500/month"), "✓", "$500.00")
	contains(t, e.say(alice, "/budget 2000/month currency=CNY"), "✓", "¥2000.00")
	e.now = t0.Add(10 * time.Hour)
	list := e.say(alice, "/budget")
	contains(t, list, "¥18.80 of ¥2000.00", "$16.40 of $500.00")

	contains(t, e.say(alice, "/budget off currency=USD"), "✓", "$")
	list = e.say(alice, "/budget")
	contains(t, list, "¥2000.00")
	if strings.Contains(list, "$500") {
		t.Fatalf("/budget after removing the USD one: %q", list)
	}
	e.say(alice, "/undo")
	contains(t, e.say(alice, "/budget"), "¥2000.00", "$500.00")
	if bs := e.book(alice).User.Budgets; len(bs) != 2 {
		t.Fatalf("budgets after undo: %+v", bs)
	}
	contains(t, e.say(alice, "/budget 5 currency=12"), "12", "not a currency")
	contains(t, e.say(alice, "/budget ¥5 currency=USD"), "CNY", "USD")
	contains(t, e.say(alice, "/budget off currency=EUR"), "€", "no")
	contains(t, e.say(alice, "/summary"), "¥18.80 of ¥2000.00", "$16.40 of $500.00")
}

// TestCore_BudgetOneCurrency: without a sign, the one currency a user
// spends in is the budget's.
func TestCore_BudgetOneCurrency(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box2 runpod a100 $1.64/h")
	contains(t, e.say(alice, "/budget 3000/month"), "✓", "$3000.00")
	contains(t, e.say(alice, "/budget off"), "✓")
	if bs := e.book(alice).User.Budgets; len(bs) != 0 {
		t.Fatalf("budgets after /budget off: %+v", bs)
	}
}

// TestCore_SummaryChartEachCurrency: the /summary chart has one panel per
// currency spent in, each with that currency's bars.
func TestCore_SummaryChartEachCurrency(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}, SummaryChart: view.SummaryChart})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.say(alice, "/rent box2 runpod a100 $1.64/h")
	e.now = e.now.Add(5 * time.Hour)
	out := e.handle(e.update(alice, "/summary"))
	if len(out) != 2 || out[1].Out.Photo == nil {
		t.Fatalf("/summary: want the summary and its chart, got %+v", out)
	}
	img, err := png.Decode(bytes.NewReader(out[1].Out.Photo.Data))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != view.ChartWidth || b.Dy() != 2*view.ChartHeight {
		t.Fatalf("chart is %v, want %dx%d (a panel for ¥ and one for $)", b, view.ChartWidth, 2*view.ChartHeight)
	}
	for p := range 2 {
		if n := computePixels(img, p*view.ChartHeight, (p+1)*view.ChartHeight); n < 50 {
			t.Errorf("panel %d has %d compute pixels", p, n)
		}
	}
	b := e.book(alice)
	if got := view.ChartCurrencies(b, e.now); len(got) != 2 || got[0] != "CNY" || got[1] != "USD" {
		t.Errorf("ChartCurrencies = %v, want [CNY USD]", got)
	}
}

func computePixels(img image.Image, y0, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == 66 && g>>8 == 133 && b>>8 == 244 {
				n++
			}
		}
	}
	return n
}
