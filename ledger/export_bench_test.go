package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// countWriter counts what an export writes, so the benchmarks report the
// output's size without keeping it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// exportJSONWhole is the export as one indenting json.Encoder writes the
// whole document: the bytes WriteExportJSON must give, and the baseline
// of its memory.
func exportJSONWhole(w io.Writer, b *Book, asOf time.Time, opts ...ExportOption) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(buildExport(b, asOf, exportOptions(opts)))
}

// TestWriteExportJSON_StreamSameBytes: the export written a list element
// at a time is byte for byte the whole document's encoding, on a random
// ledger with one-offs whose notes hold quotes, HTML and Chinese.
func TestWriteExportJSON_StreamSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	book := randomBook(rng, "Asia/Shanghai", start, 60*day, 40, 10)
	book.Charges[0].Note = `镜像 "fee" <b>&amp;</b>`
	book.TopUps = []TopUp{{ID: 1, Platform: "autodl", Amount: MustDecimal("100"), Currency: CNY, At: start}}
	for _, asOf := range []time.Time{start.Add(-day), start.Add(20 * day), start.Add(90 * day)} {
		var got, want bytes.Buffer
		if err := WriteExportJSON(&got, book, asOf); err != nil {
			t.Fatal(err)
		}
		if err := exportJSONWhole(&want, book, asOf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("as of %s: the streamed export differs from the whole document's (%d vs %d bytes)", asOf, got.Len(), want.Len())
		}
	}
}

// BenchmarkExport times the export of a large ledger (1,000 and 10,000
// rentals of about 10 events each, with traffic, idle intervals, volumes
// and one-offs) in JSON and CSV, beside StatementAsOf on the same book:
// the engine's share of each export. It reports the output's size per
// export (out_MB) next to the allocations, so memory can be read against
// what is written.
func BenchmarkExport(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		rng := rand.New(rand.NewPCG(11, 12))
		start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		book := randomBook(rng, "Asia/Shanghai", start, 60*day, n, 10)
		asOf := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		b.Run(fmt.Sprintf("rentals=%d/statement", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				StatementAsOf(book, asOf)
			}
		})
		for _, f := range []struct {
			name  string
			write func(io.Writer, *Book, time.Time, ...ExportOption) error
		}{{"json-whole", exportJSONWhole}, {"json", WriteExportJSON}, {"csv", WriteExportCSV}} {
			b.Run(fmt.Sprintf("rentals=%d/%s", n, f.name), func(b *testing.B) {
				b.ReportAllocs()
				var w countWriter
				for b.Loop() {
					w = countWriter{}
					if err := f.write(&w, book, asOf); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(w.n)/1e6, "out_MB")
			})
		}
	}
}
