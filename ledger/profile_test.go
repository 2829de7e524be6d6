package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestProfiles_Table(t *testing.T) {
	ps, _, err := parseProfiles(profilesJSON)
	if err != nil {
		t.Fatalf("embedded profiles: %v", err)
	}
	want := []string{"autodl", "runpod", "vast", "lambda", "aws", "gcp", "alibaba", "tencent", "featurize", "gpushare"}
	have := map[string]bool{}
	for _, p := range ps {
		have[p.Key] = true
	}
	for _, k := range want {
		if !have[k] {
			t.Errorf("profile %s missing", k)
		}
	}
	if len(Profiles()) != len(ps) {
		t.Errorf("Profiles() = %d, table has %d", len(Profiles()), len(ps))
	}
}

func TestParseProfiles_Errors(t *testing.T) {
	tests := []struct{ name, json string }{
		{"not json", `{`},
		{"bad mode", `{"profiles":[{"key":"x","currency":"USD","mode":"hourly","traffic":"free"}]}`},
		{"upper-case key", `{"profiles":[{"key":"X","currency":"USD","mode":"per-second","traffic":"free"}]}`},
		{"no currency", `{"profiles":[{"key":"x","mode":"per-second","traffic":"free"}]}`},
		{"bad duration", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","min":"a minute","traffic":"free"}]}`},
		{"bad traffic", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"cheap"}]}`},
		{"bad zone", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"free","tz":"Mars/Base"}]}`},
		{"storage price without unit", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"free","storage":{"price":"0.1"}}]}`},
		{"stopped price without running price", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"free","storage":{"stopped_price":"0.2","unit":"gb_month"}}]}`},
		{"negative stopped price", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"free","storage":{"price":"0.1","stopped_price":"-0.2","unit":"gb_month"}}]}`},
		{"duplicate alias", `{"profiles":[{"key":"x","currency":"USD","mode":"per-second","traffic":"free"},{"key":"y","aliases":["X"],"currency":"USD","mode":"per-second","traffic":"free"}]}`},
	}
	for _, tt := range tests {
		if _, _, err := parseProfiles([]byte(tt.json)); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
}

func TestLookupProfile(t *testing.T) {
	tests := []struct {
		name, key string
		cur       Currency
		mode      Mode
	}{
		{"autodl", "autodl", CNY, PerSecond},
		{"AutoDL", "autodl", CNY, PerSecond},
		{"恒源云", "gpushare", CNY, PerSecond},
		{"vast.ai", "vast", USD, PerSecond},
		{"Vast.AI", "vast", USD, PerSecond},
		{"阿里云", "alibaba", CNY, PerSecond},
		{"腾讯云", "tencent", CNY, PerSecond},
		{"Lambda Labs", "lambda", USD, PerMinute},
		{" AWS ", "aws", USD, PerSecond},
		{"矩池云", "matpool", CNY, PerSecond},
	}
	for _, tt := range tests {
		p, ok := LookupProfile(tt.name)
		if !ok || p.Key != tt.key || p.Currency != tt.cur || p.Mode != tt.mode {
			t.Errorf("LookupProfile(%q) = %s %s %s %v, want %s %s %s", tt.name, p.Key, p.Currency, p.Mode, ok, tt.key, tt.cur, tt.mode)
		}
	}
	if _, ok := LookupProfile("my-own-cluster"); ok {
		t.Errorf("unknown platform found")
	}
}

func TestProfile_Apply(t *testing.T) {
	aws, _ := LookupProfile("aws")
	r := &Rental{Name: "a", Platform: "AWS"}
	aws.Apply(r)
	if r.Platform != "aws" || r.Mode != PerSecond || r.Currency != USD || r.Min != time.Minute {
		t.Errorf("aws applied: %+v", r)
	}
	if r.Traffic.Priced || r.Traffic.FreeGB.String() != "100" || r.Traffic.Direction != Out {
		t.Errorf("aws traffic: %+v", r.Traffic)
	}
	// Values the user set are kept.
	r = &Rental{Mode: PerHour, Currency: CNY, Min: 5 * time.Minute, Floor: MustDecimal("1")}
	aws.Apply(r)
	if r.Mode != PerHour || r.Currency != CNY || r.Min != 5*time.Minute || r.Floor.String() != "1" {
		t.Errorf("overrides lost: %+v", r)
	}
	ali, _ := LookupProfile("aliyun")
	r = &Rental{}
	ali.Apply(r)
	if r.Floor.String() != "0.01" || r.Currency != CNY {
		t.Errorf("alibaba applied: %+v", r)
	}
	rp, _ := LookupProfile("runpod")
	r = &Rental{}
	rp.Apply(r)
	if !r.Traffic.Priced || !r.Traffic.PricePerGB.IsZero() {
		t.Errorf("runpod traffic should be free (priced at 0): %+v", r.Traffic)
	}
	// A free-traffic platform's usage reports 0.00, not UNPRICED.
	r = newRental("a", PerSecond, "0.69", UnitHour, USD, ev(EventStart, 0))
	r.Traffic = TrafficTerms{}
	rp.Apply(r)
	r.TrafficUsage = []TrafficUsage{{At: off(min1), Bytes: 1 << 40, Direction: Out}}
	st := StatementAsOf(bookOf(r), off(hour))
	if !st.Rentals[0].TrafficPriced || st.Total(USD).Unpriced != 0 {
		t.Errorf("free traffic reported unpriced")
	}
	lam, _ := LookupProfile("lambda")
	r = newRental("a", "", "1.20", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 61*sec))
	lam.Apply(r)
	money(t, StatementAsOf(bookOf(r), off(hour)).Rentals[0].Compute, "0.04")
}

// TestProfile_ApplyVolume: a volume the user gave no price takes the
// profile's price, unit and per-state rates; one the user priced keeps
// the user's terms in every state; a platform whose storage price varies
// leaves the volume UNPRICED.
func TestProfile_ApplyVolume(t *testing.T) {
	tests := []struct {
		name, platform string
		v              Volume
		fromProfile    bool
		price, stopped string // stopped "": no stopped price
		unit           StorageUnit
		free           string
	}{
		{"autodl: the profile's price and free quota", "AutoDL", Volume{Name: "d"}, true, "0.0066", "", PerGBDay, "50"},
		{"runpod: running and stopped rates", "runpod", Volume{Name: "d"}, true, "0.10", "0.20", PerGBMonth, "0"},
		{"gpushare: per GB-hour", "恒源云", Volume{Name: "d"}, true, "0.0007", "", PerGBHour, "0"},
		{"the user's price wins, one rate in every state", "runpod",
			Volume{Name: "d", Priced: true, Price: MustDecimal("0.07"), PriceUnit: PerGBMonth}, false, "0.07", "", PerGBMonth, "0"},
		{"the user's free quota wins", "autodl", Volume{Name: "d", FreeGB: MustDecimal("20")}, true, "0.0066", "", PerGBDay, "20"},
		{"vast: host-priced, stays unpriced", "vast", Volume{Name: "d"}, false, "", "", PerGBMonth, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := LookupProfile(tt.platform)
			if !ok {
				t.Fatalf("no profile %s", tt.platform)
			}
			v := tt.v
			got := p.ApplyVolume(&v)
			if got != tt.fromProfile {
				t.Errorf("priced from the profile = %v, want %v", got, tt.fromProfile)
			}
			if v.Platform != p.Key || v.Currency != p.Currency || v.PriceUnit != tt.unit || v.FreeGB.Cmp(MustDecimal(tt.free)) != 0 {
				t.Errorf("volume = %+v", v)
			}
			if v.Priced != (tt.price != "") || tt.price != "" && v.Price.Cmp(MustDecimal(tt.price)) != 0 {
				t.Errorf("price = %v %s, want %q", v.Priced, v.Price, tt.price)
			}
			if v.HasStoppedPrice != (tt.stopped != "") || tt.stopped != "" && v.StoppedPrice.Cmp(MustDecimal(tt.stopped)) != 0 {
				t.Errorf("stopped price = %v %s, want %q", v.HasStoppedPrice, v.StoppedPrice, tt.stopped)
			}
		})
	}
}

// TestProfile_TrafficDefaults: the terms a user's /traffic price gets on
// a platform: its free allowance and charged direction unless given.
func TestProfile_TrafficDefaults(t *testing.T) {
	tests := []struct {
		platform string
		in       TrafficTerms
		given    bool // free= written
		free     string
		dir      Direction
	}{
		{"aws", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09")}, false, "100", Out},
		{"aws", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("10")}, true, "10", Out},
		{"aws", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09")}, true, "0", Out},
		{"aws", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), Direction: Both}, false, "100", Both},
		{"vast", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.02")}, false, "0", Both},
		{"gcp", TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.12")}, false, "0", Out},
	}
	for _, tt := range tests {
		p, _ := LookupProfile(tt.platform)
		got := p.TrafficDefaults(tt.in, tt.given)
		if got.FreeGB.Cmp(MustDecimal(tt.free)) != 0 || got.Direction != tt.dir || !got.Priced || got.PricePerGB != tt.in.PricePerGB {
			t.Errorf("%s %+v: got %+v, want free %s direction %s", tt.platform, tt.in, got, tt.free, tt.dir)
		}
	}
}

func TestProfile_DataDeadline(t *testing.T) {
	autodl, _ := LookupProfile("autodl")
	gs, _ := LookupProfile("恒源云")
	runpod, _ := LookupProfile("runpod")
	stopped := newRental("a", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	tests := []struct {
		name string
		p    Profile
		r    *Rental
		now  time.Duration
		want time.Duration
		ok   bool
	}{
		{"autodl: 15 days shut down", autodl, stopped, 2 * hour, hour + 15*day, true},
		{"gpushare: 10 days stopped", gs, stopped, 2 * hour, hour + 10*day, true},
		{"no rule", runpod, stopped, 2 * hour, 0, false},
		{"running", autodl, stopped, 30 * min1, 0, false},
	}
	for _, tt := range tests {
		got, ok := tt.p.DataDeadline(tt.r, off(tt.now))
		if ok != tt.ok || (ok && !got.Equal(off(tt.want))) {
			t.Errorf("%s: %s %v, want %s %v", tt.name, got, ok, off(tt.want), tt.ok)
		}
	}
}

// TestCanonicalPlatform: every name of the table, in any case and with
// spaces, dashes or underscores, is its profile's key; other names are
// not platforms the ledger knows.
func TestCanonicalPlatform(t *testing.T) {
	names := PlatformNames()
	if len(names) < len(Profiles())*2 {
		t.Fatalf("PlatformNames has %d names for %d profiles", len(names), len(Profiles()))
	}
	for _, n := range names {
		for _, typed := range []string{n.Name, strings.ToUpper(n.Name), " " + n.Name + " "} {
			if k, ok := CanonicalPlatform(typed); !ok || k != n.Key {
				t.Errorf("CanonicalPlatform(%q) = %q, %v; want %q", typed, k, ok, n.Key)
			}
		}
	}
	for typed, want := range map[string]string{"Auto-DL": "autodl", "lambda_labs": "lambda", "VAST AI": "vast", "阿里云": "alibaba"} {
		if k, ok := CanonicalPlatform(typed); !ok || k != want {
			t.Errorf("CanonicalPlatform(%q) = %q, %v; want %q", typed, k, ok, want)
		}
	}
	for _, typed := range []string{"", "mygpufarm", "autodl2"} {
		if k, ok := CanonicalPlatform(typed); ok {
			t.Errorf("CanonicalPlatform(%q) = %q; want unknown", typed, k)
		}
	}
}
