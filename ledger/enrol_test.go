package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestClampBoot(t *testing.T) {
	first := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	user := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name             string
		claimed, created time.Time
		want             time.Time
		clamped          bool
	}{
		{"believed", first.Add(-2 * time.Hour), user, first.Add(-2 * time.Hour), false},
		{"at the announcement", first, user, first, false},
		{"unknown", time.Time{}, user, first, false},
		{"in the future", first.Add(time.Minute), user, first, true},
		{"before the user existed", user.Add(-time.Hour), user, user, true},
		{"older than MaxBootAge", first.Add(-MaxBootAge - time.Hour), time.Time{}, first.Add(-MaxBootAge), true},
		{"older than both: the later bound", first.Add(-MaxBootAge - time.Hour), first.Add(-24 * time.Hour), first.Add(-24 * time.Hour), true},
		{"no user time", first.Add(-time.Hour), time.Time{}, first.Add(-time.Hour), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, clamped := ClampBoot(c.claimed, first, c.created)
			if !got.Equal(c.want) || clamped != c.clamped {
				t.Fatalf("ClampBoot(%v, %v, %v) = %v, %v; want %v, %v", c.claimed, first, c.created, got, clamped, c.want, c.clamped)
			}
		})
	}
}

func TestInstanceRentalName(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Instance
		want string
	}{
		{"platform ID", Instance{Platform: "runpod", PlatformID: "ABC123xyz", Hostname: "h"}, "runpod-abc123"},
		{"short ID", Instance{Platform: "vast", PlatformID: "42"}, "vast-42"},
		{"ID punctuation dropped", Instance{Platform: "aws", PlatformID: "i-0a1b2c3d4e"}, "aws-i0a1b2"},
		{"AutoDL UUID", Instance{Platform: "autodl", PlatformID: "9f3e-77aa-0c1d"}, "autodl-9f3e77"},
		{"no ID: host name", Instance{Platform: "autodl", Hostname: "My-Box.local"}, "host-my-box.local"},
		{"unknown platform: host name", Instance{PlatformID: "abc", Hostname: "gpu01"}, "host-gpu01"},
		{"host name clipped", Instance{Hostname: strings.Repeat("a", 60)}, "host-" + strings.Repeat("a", 27)},
		{"host name unsafe chars", Instance{Hostname: "-主机 box;rm"}, "host-boxrm"},
		{"machine key", Instance{Key: "machine:0123456789abcdef"}, "instance-012345"},
		{"machine key, platform", Instance{Platform: "gcp", Key: "machine:FEDCBA98"}, "gcp-fedcba"},
		{"nothing", Instance{ID: 17}, "instance-17"},
		{"forged platform", Instance{Platform: "x y;z", PlatformID: "abc"}, "instance-abc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := InstanceRentalName(c.in)
			if got != c.want {
				t.Fatalf("InstanceRentalName(%+v) = %q, want %q", c.in, got, c.want)
			}
			if err := ValidateName(got); err != nil {
				t.Fatalf("InstanceRentalName(%+v) = %q, not a valid rental name: %v", c.in, got, err)
			}
		})
	}
}

// rented returns a rental on platform with gpus × model, priced at amount
// per hour, started at start, with price changes (amount at time).
func rented(id int64, platform, model string, gpus int, amount string, start time.Time, changes ...any) *Rental {
	r := &Rental{ID: id, Name: "r", Platform: platform, GPU: model, GPUCount: gpus, Mode: PerSecond, Priced: amount != "",
		Currency: USD, Events: []Event{{Kind: EventStart, At: start}}}
	if amount != "" {
		r.Price = Price{Amount: MustDecimal(amount), Unit: UnitHour}
	}
	for i := 0; i+1 < len(changes); i += 2 {
		r.Events = append(r.Events, Event{Kind: EventPrice, At: changes[i+1].(time.Time),
			Price: Price{Amount: MustDecimal(changes[i].(string)), Unit: UnitHour}})
	}
	return r
}

func TestOfferFor(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	pod := Instance{UserID: 1, Platform: "runpod", GPUModel: "A40", GPUCount: 2}
	for _, c := range []struct {
		name    string
		rentals []*Rental
		in      Instance
		want    string // "" for no offer
	}{
		{"same count", []*Rental{rented(1, "runpod", "A40", 2, "0.79", day)}, pod, "0.79/hour"},
		{"scaled per GPU", []*Rental{rented(1, "runpod", "A40", 1, "0.39", day)}, pod, "0.78/hour"},
		{"scaled down", []*Rental{rented(1, "runpod", "A40", 4, "1.58", day)}, pod, "0.79/hour"},
		{"uneven division rounded", []*Rental{rented(1, "runpod", "A40", 3, "1.00", day)}, pod, "0.6667/hour"},
		{"no GPU seen counts as one", []*Rental{rented(1, "runpod", "A40", 2, "0.80", day)}, Instance{Platform: "runpod", GPUModel: "A40"}, "0.4/hour"},
		{"latest price change", []*Rental{rented(1, "runpod", "A40", 2, "0.79", day, "0.69", day.Add(time.Hour), "0.59", day.Add(2*time.Hour))}, pod, "0.59/hour"},
		{"most recent rental", []*Rental{
			rented(1, "runpod", "A40", 2, "0.79", day.Add(time.Hour)),
			rented(2, "runpod", "A40", 2, "0.99", day),
		}, pod, "0.79/hour"},
		{"NVML name matches the typed one", []*Rental{rented(1, "runpod", "RTX 4090", 1, "0.34", day)},
			Instance{Platform: "runpod", GPUModel: "NVIDIA GeForce RTX 4090", GPUCount: 1}, "0.34/hour"},
		{"released counts too", []*Rental{func() *Rental {
			r := rented(1, "runpod", "A40", 2, "0.79", day)
			r.Events = append(r.Events, Event{Kind: EventRelease, At: day.Add(time.Hour)})
			return r
		}()}, pod, "0.79/hour"},
		{"unpriced skipped", []*Rental{rented(1, "runpod", "A40", 2, "0.79", day), rented(2, "runpod", "A40", 2, "", day.Add(time.Hour))}, pod, "0.79/hour"},
		{"other platform", []*Rental{rented(1, "vast", "A40", 2, "0.79", day)}, pod, ""},
		{"GPU never rented", []*Rental{rented(1, "runpod", "H100", 2, "4.00", day)}, pod, ""},
		{"unknown platform", []*Rental{rented(1, "runpod", "A40", 2, "0.79", day)}, Instance{GPUModel: "A40", GPUCount: 2}, ""},
		{"no GPU model", []*Rental{rented(1, "runpod", "", 1, "0.79", day)}, Instance{Platform: "runpod"}, ""},
		{"no rentals", nil, pod, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &Book{User: User{ID: 1}, Rentals: c.rentals}
			got, ok := OfferFor(b, c.in)
			if c.want == "" {
				if ok {
					t.Fatalf("OfferFor = %v %s, want no offer", got.Price, got.Currency)
				}
				return
			}
			if !ok || got.Price.String() != c.want || got.Currency != USD {
				t.Fatalf("OfferFor = %v %s, %v; want %s USD", got.Price, got.Currency, ok, c.want)
			}
		})
	}
	t.Run("another user's book", func(t *testing.T) {
		b := &Book{User: User{ID: 2}, Rentals: []*Rental{rented(1, "runpod", "A40", 2, "0.79", day)}}
		if got, ok := OfferFor(b, pod); ok {
			t.Fatalf("OfferFor from user 2's book for user 1 = %v", got)
		}
	})
}

func TestRentalFromInstance(t *testing.T) {
	start := time.Date(2026, 11, 1, 10, 2, 0, 0, time.UTC)
	usd := &PriceOffer{Price: Price{Amount: MustDecimal("0.79"), Unit: UnitHour}, Currency: USD}
	cny := &PriceOffer{Price: Price{Amount: MustDecimal("1.88"), Unit: UnitHour}, Currency: CNY}
	for _, c := range []struct {
		name                  string
		in                    Instance
		offer                 *PriceOffer
		platform, gpu         string
		count                 int
		mode                  Mode
		currency              Currency
		min                   time.Duration
		priced, validWithoutC bool
	}{
		{"runpod priced", Instance{UserID: 1, Platform: "runpod", PlatformID: "abc123", GPUModel: "A40", GPUCount: 2}, usd,
			"runpod", "A40", 2, PerSecond, USD, 0, true, true},
		{"aws unpriced: profile's terms", Instance{UserID: 1, Platform: "aws", PlatformID: "i-1", GPUModel: "A10G", GPUCount: 1}, nil,
			"aws", "A10G", 1, PerSecond, USD, time.Minute, false, true},
		{"lambda per-minute", Instance{UserID: 1, Platform: "lambda", Hostname: "h", GPUModel: "H100", GPUCount: 8}, nil,
			"lambda", "H100", 8, PerMinute, USD, 0, false, true},
		{"offer's currency wins", Instance{UserID: 1, Platform: "runpod", PlatformID: "abc"}, cny,
			"runpod", "", 1, PerSecond, CNY, 0, true, true},
		{"no GPU seen", Instance{UserID: 1, Platform: "autodl", PlatformID: "u1"}, nil,
			"autodl", "", 1, PerSecond, CNY, 0, false, true},
		{"unknown platform priced", Instance{UserID: 1, Hostname: "gpu01", GPUModel: "A100", GPUCount: 4}, usd,
			UnknownPlatform, "A100", 4, PerSecond, USD, 0, true, true},
		{"unknown platform unpriced: no currency", Instance{UserID: 1, Hostname: "gpu01", GPUModel: "A100", GPUCount: 4}, nil,
			UnknownPlatform, "A100", 4, PerSecond, "", 0, false, false},
		{"count clipped", Instance{UserID: 1, Platform: "vast", PlatformID: "9", GPUCount: 500}, usd,
			"vast", "", MaxGPUCount, PerSecond, USD, 0, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := RentalFromInstance(c.in, c.offer, start)
			if r.Name != InstanceRentalName(c.in) || r.UserID != c.in.UserID || r.Platform != c.platform || r.GPU != c.gpu ||
				r.GPUCount != c.count || r.Mode != c.mode || r.Currency != c.currency || r.Min != c.min || r.Priced != c.priced {
				t.Fatalf("RentalFromInstance = %+v", r)
			}
			if c.priced && r.Price != c.offer.Price {
				t.Fatalf("price = %v, want the offer's %v", r.Price, c.offer.Price)
			}
			if len(r.Events) != 1 || r.Events[0].Kind != EventStart || !r.Events[0].At.Equal(start) {
				t.Fatalf("events = %+v, want one start at %v", r.Events, start)
			}
			if err := r.Validate(); (err == nil) != c.validWithoutC {
				t.Fatalf("Validate = %v, want valid %v", err, c.validWithoutC)
			}
		})
	}
}

func TestGPUDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA GeForce RTX 4090": "RTX 4090",
		"NVIDIA H100 80GB HBM3":   "H100 80GB HBM3",
		"NVIDIA A40":              "A40",
		"NVIDIA H200":             "H200",
		"Tesla V100-SXM2-16GB":    "V100-SXM2-16GB",
		"  NVIDIA   RTX  A6000 ":  "RTX A6000",
		"Quadro RTX 8000":         "RTX 8000",
		"":                        "",
		"NVIDIA":                  "",
		"AMD Instinct MI300X":     "AMD Instinct MI300X",
	} {
		got := GPUDisplayName(in)
		if got != want {
			t.Errorf("GPUDisplayName(%q) = %q, want %q", in, got, want)
		}
		// The display name compares equal to the NVML name.
		if NormalizeGPUName(got) != NormalizeGPUName(in) {
			t.Errorf("NormalizeGPUName(%q) = %q, NormalizeGPUName(%q) = %q", got, NormalizeGPUName(got), in, NormalizeGPUName(in))
		}
	}
}
