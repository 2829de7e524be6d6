package view

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sort"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Chart geometry, in pixels.
const (
	ChartWidth  = 720
	ChartHeight = 360
	chartLeft   = 70 // room for the axis labels
	chartRight  = 10
	chartTop    = 40 // room for the title and legend
	chartBottom = 30 // room for the day labels
)

// Chart colours: compute (its idle part hatched darker), storage, traffic,
// other.
var (
	colBG      = color.RGBA{255, 255, 255, 255}
	colAxis    = color.RGBA{90, 90, 90, 255}
	colGrid    = color.RGBA{225, 225, 225, 255}
	colText    = color.RGBA{30, 30, 30, 255}
	colCompute = color.RGBA{66, 133, 244, 255}
	colIdle    = color.RGBA{234, 67, 53, 255}
	colStorage = color.RGBA{251, 188, 5, 255}
	colTraffic = color.RGBA{52, 168, 83, 255}
	colOther   = color.RGBA{150, 100, 200, 255}
)

// SpendChart draws days' spend in currency cur as stacked bars, one per
// day: compute (the part accrued while idle in red at its base), storage,
// traffic and other, with the day's total in money on the axis. It returns
// a PNG of ChartWidth × ChartHeight. Only the standard image packages and
// x/image's basic font are used.
func SpendChart(days []ledger.DaySpend, cur ledger.Currency) ([]byte, error) {
	return SpendCharts(days, []ledger.Currency{cur})
}

// SpendCharts draws one SpendChart panel per currency in curs, stacked top
// to bottom in that order, as one PNG of ChartWidth × len(curs)·ChartHeight.
// Each panel has its own scale: currencies are never converted.
func SpendCharts(days []ledger.DaySpend, curs []ledger.Currency) ([]byte, error) {
	if len(curs) == 0 {
		return nil, fmt.Errorf("view: chart: no currency")
	}
	img := image.NewRGBA(image.Rect(0, 0, ChartWidth, len(curs)*ChartHeight))
	for i, c := range curs {
		p := spendPanel(days, c)
		draw.Draw(img, image.Rect(0, i*ChartHeight, ChartWidth, (i+1)*ChartHeight), p, image.Point{}, draw.Src)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("view: encode chart: %w", err)
	}
	return buf.Bytes(), nil
}

// SummaryChart is the chart that follows a summary: the 14 days up to
// asOf, one panel per currency spent in (ChartCurrencies), each titled
// with its code and its axis in its own money; amounts are never
// converted. The nightly summary and /summary on demand
// (bot.Config.SummaryChart) send the same one.
func SummaryChart(b *ledger.Book, asOf time.Time) (*chat.File, error) {
	days := ledger.DailySpend(b, 14, asOf)
	png, err := SpendCharts(days, chartCurrencies(days))
	if err != nil {
		return nil, err
	}
	return &chat.File{Name: "spend-14d.png", Data: png}, nil
}

// ChartCurrencies returns the currencies SummaryChart draws a panel for,
// in order from the top: each currency with spend in the 14 days up to
// asOf, sorted by code (CNY when there is none).
func ChartCurrencies(b *ledger.Book, asOf time.Time) []ledger.Currency {
	return chartCurrencies(ledger.DailySpend(b, 14, asOf))
}

func sortedCurrencies[V any](m map[ledger.Currency]V) []ledger.Currency {
	out := make([]ledger.Currency, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// chartCurrencies lists the currencies with spend over the days, sorted
// by code; CNY alone when there is none, so an empty chart still draws.
func chartCurrencies(days []ledger.DaySpend) []ledger.Currency {
	sum := map[ledger.Currency]int64{}
	for _, d := range days {
		for c, t := range d.Totals {
			if t.Total.Minor != 0 {
				sum[c] += t.Total.Minor
			}
		}
	}
	if len(sum) == 0 {
		return []ledger.Currency{ledger.CNY}
	}
	return sortedCurrencies(sum)
}

// spendPanel draws SpendChart's panel for one currency.
func spendPanel(days []ledger.DaySpend, cur ledger.Currency) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, ChartWidth, ChartHeight))
	draw.Draw(img, img.Bounds(), &image.Uniform{colBG}, image.Point{}, draw.Src)

	type bar struct {
		idle, compute, storage, traffic, other int64 // minor units; compute excludes idle
		label                                  string
	}
	bars := make([]bar, len(days))
	var maxTotal int64
	for i, d := range days {
		b := bar{label: d.Day.Format("01-02")}
		if t, ok := d.Totals[cur]; ok {
			idle := d.Idle[cur].Minor
			b.idle = min(max(idle, 0), t.Compute.Minor)
			b.compute = max(t.Compute.Minor-b.idle, 0)
			b.storage, b.traffic, b.other = max(t.Storage.Minor, 0), max(t.Traffic.Minor, 0), max(t.Other.Minor, 0)
		}
		if tot := b.idle + b.compute + b.storage + b.traffic + b.other; tot > maxTotal {
			maxTotal = tot
		}
		bars[i] = b
	}
	scaleMax := niceCeil(maxTotal)
	plotH := ChartHeight - chartTop - chartBottom
	plotW := ChartWidth - chartLeft - chartRight
	y0 := ChartHeight - chartBottom

	// Grid and axis labels: 0, 1/4 ... of the scale.
	for i := 0; i <= 4; i++ {
		v := scaleMax * int64(i) / 4
		y := y0 - int(int64(plotH)*int64(i)/4)
		fillRect(img, chartLeft, y, chartLeft+plotW, y+1, colGrid)
		label(img, 4, y+4, ledger.Money{Currency: cur, Minor: v}.Format(), colText)
	}
	fillRect(img, chartLeft, chartTop, chartLeft+1, y0, colAxis)
	fillRect(img, chartLeft, y0, chartLeft+plotW, y0+1, colAxis)

	if n := len(bars); n > 0 {
		slot := plotW / n
		w := max(slot*2/3, 2)
		for i, b := range bars {
			x := chartLeft + i*slot + (slot-w)/2
			y := y0
			for _, seg := range []struct {
				v int64
				c color.RGBA
			}{{b.idle, colIdle}, {b.compute, colCompute}, {b.storage, colStorage}, {b.traffic, colTraffic}, {b.other, colOther}} {
				if seg.v <= 0 || scaleMax == 0 {
					continue
				}
				h := int(seg.v * int64(plotH) / scaleMax)
				if h == 0 {
					h = 1 // a non-zero amount is always visible
				}
				fillRect(img, x, y-h, x+w, y, seg.c)
				y -= h
			}
			if n <= 14 || i%2 == 0 {
				label(img, x+w/2-17, y0+18, b.label, colText)
			}
		}
	}
	label(img, chartLeft, 16, fmt.Sprintf("Spend, last %d days (%s %s)", len(days), strings.TrimSpace(cur.Symbol()), cur), colText)
	lx := chartLeft + 250
	for _, l := range []struct {
		name string
		c    color.RGBA
	}{{"idle", colIdle}, {"compute", colCompute}, {"storage", colStorage}, {"traffic", colTraffic}, {"other", colOther}} {
		fillRect(img, lx, 7, lx+10, 17, l.c)
		label(img, lx+13, 16, l.name, colText)
		lx += 20 + 7*len(l.name)
	}
	return img
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1), so
// the axis shows round amounts.
func niceCeil(v int64) int64 {
	if v <= 0 {
		return 100
	}
	p := int64(1)
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func fillRect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

// label draws s with its baseline at y. The basic font has only ASCII, so
// the yen sign is drawn as a Y with its two bars (each panel is labelled
// with its currency's symbol); other non-ASCII runes show as the font's
// replacement glyph, beside the currency's code.
func label(img *image.RGBA, x, y int, s string, c color.RGBA) {
	for _, r := range s {
		g := string(r)
		yen := r == '¥' || r == '￥'
		if yen {
			g = "Y"
		}
		d := font.Drawer{Dst: img, Src: &image.Uniform{c}, Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(g)
		if yen {
			fillRect(img, x+1, y-4, x+6, y-3, c)
			fillRect(img, x+1, y-2, x+6, y-1, c)
		}
		x += 7 // Face7x13's advance
	}
}
