package command

import (
	"errors"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestParse_Quote(t *testing.T) {
	tests := []struct {
		in   string
		want QuoteCmd
	}{
		{"/quote 4090 10", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour}},
		{"/quote rtx 4090 2.5", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 150 * time.Minute}},
		{"/quote 10h 2x4090", QuoteCmd{GPU: "RTX 4090", GPUCount: 2, Running: 10 * time.Hour}},
		// A bare number before a GPU with its own count is not part of it
		// ("102x4090"): it is the hours.
		{"/quote 10 2x4090", QuoteCmd{GPU: "RTX 4090", GPUCount: 2, Running: 10 * time.Hour}},
		{"/quote 24 H100*8", QuoteCmd{GPU: "H100", GPUCount: 8, Running: 24 * time.Hour}},
		{"/quote 5 两张3090", QuoteCmd{GPU: "RTX 3090", GPUCount: 2, Running: 5 * time.Hour}},
		// A count written apart still joins.
		{"/quote 2 x 4090 10", QuoteCmd{GPU: "RTX 4090", GPUCount: 2, Running: 10 * time.Hour}},
		{"/quote H100*8 90m", QuoteCmd{GPU: "H100", GPUCount: 8, Running: 90 * time.Minute}},
		{"/quote 4090 2 hours", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 2 * time.Hour}},
		{"/quote 4090 8760", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 8760 * time.Hour}},
		{"/quote mi325x 3d", QuoteCmd{GPU: "mi325x", GPUCount: 1, Running: 72 * time.Hour}},
		{"/quote 4090 10 storage=100GB stopped=48 traffic=1.5TB",
			QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour, Stopped: 48 * time.Hour,
				StorageGB: decp("100"), TrafficGB: dec("1500")}},
		{"/quote 4090 10 storage=0 stopped=0", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour, StorageGB: decp("0")}},
		{"/quote 4090 10 price=1.88", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour,
			Price: price("1.88", ledger.UnitHour, "")}},
		{"/quote 4090 10 $0.69/h runpod", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour,
			Price: price("0.69", ledger.UnitHour, "USD"), Platform: "runpod"}},
		{"/quote 4090 30 price=70/day 包日 platform=featurize", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 30 * time.Hour,
			Price: price("70", ledger.UnitDay, ""), Platform: "featurize", Mode: ledger.AlwaysOn}},
		{"/quote 4090 10 autodl", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 10 * time.Hour, Platform: "autodl"}},
		{"/报价 4090 5小时 price=1.88元/小时", QuoteCmd{GPU: "RTX 4090", GPUCount: 1, Running: 5 * time.Hour,
			Price: price("1.88", ledger.UnitHour, "CNY")}},
		{"/quote gpu=a100-80g hours=1", QuoteCmd{GPU: "A100 80GB", GPUCount: 1, Running: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in, testNow, shanghai)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if g, w := show(got), show(tt.want); g != w {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, g, w)
			}
		})
	}
}

// TestParse_QuoteErrors: bad input is an error naming what was wrong,
// never a command.
func TestParse_QuoteErrors(t *testing.T) {
	tests := []struct{ in, key, arg string }{
		{"/quote", "quote_missing_gpu", ""},
		{"/quote 4090", "quote_missing_hours", "4090"},
		{"/quote 4090 0", "quote_hours_range", `"0"`},
		{"/quote 4090 0h", "quote_hours_range", `"0h"`},
		{"/quote 4090 -5", "quote_hours_range", `"-5"`},
		{"/quote 4090 8761", "quote_hours_range", `"8761"`},
		{"/quote 4090 1000000000", "quote_hours_range", `"1000000000"`},
		{"/quote 4090 1e9", "quote_bad_hours", `"1e9"`},
		{"/quote 4090 0.0000001", "quote_hours_range", `"0.0000001"`},
		{"/quote 4090 10 stopped=-1", "quote_hours_range", `"-1"`},
		{"/quote 4090 10 stopped=2y", "quote_bad_hours", `"2y"`},
		{"/quote 4090 10 storage=100XB", "bad_size", `"100XB"`},
		{"/quote 4090 10 traffic=lots", "bad_size", `"lots"`},
		{"/quote 4090 10 price=cheap", "bad_price", `"cheap"`},
		{"/quote 4090 10 price=-1", "price_negative", `"-1"`},
		{"/quote 4090 10 包日", "quote_needs_price", `"包日"`},
		{"/quote 4090 10 price=1.88/h 包日", "package_unit", `"包日"`},
		{"/quote 4090 10 20", "twice", "§hours"},
		{"/quote 4090 10 disk=5GB", "unknown_key", `"disk="`},
		{"/quote 99x4090 10", "bad_count", `"99x4090"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in, testNow, shanghai)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, %v; want a ParseError", tt.in, show(got), err)
			}
			if pe.Key != tt.key || pe.Cmd != KindQuote {
				t.Fatalf("Parse(%q) key %q (cmd %q), want %q: %v", tt.in, pe.Key, pe.Cmd, tt.key, err)
			}
			if tt.arg != "" && (len(pe.Args) == 0 || pe.Args[0] != tt.arg) {
				t.Errorf("Parse(%q) args %q, want first %s", tt.in, pe.Args, tt.arg)
			}
		})
	}
}
