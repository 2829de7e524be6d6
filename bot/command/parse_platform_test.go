package command

import (
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_PlatformAliases: the parser knows a platform by every name the
// ledger's profile table gives it, and yields the profile's key, wherever
// the name stands in the command and in free text.
func TestParse_PlatformAliases(t *testing.T) {
	cny := price("1.88", ledger.UnitHour, ledger.CNY)
	rent := func(name, plat string) RentCmd {
		return RentCmd{Name: name, Platform: plat, GPU: "RTX 4090", GPUCount: 1, Price: cny, Currency: ledger.CNY}
	}
	runParseCases(t, []parseCase{
		{"/rent box1 auto-dl 4090 ¥1.88/h", rent("box1", "autodl")},
		// A known platform is recognised before the name.
		{"/rent 4090 auto-dl box1 ¥1.88/h", rent("box1", "autodl")},
		{"/rent 4090 hengyuan box1 ¥1.88/h", rent("box1", "gpushare")},
		{"/rent box1 platform=Lambda_Labs 4090 ¥1.88/h", rent("box1", "lambda")},
		{"/topup auto-dl 100", TopupCmd{Platform: "autodl", Amount: Amount{Value: dec("100")}}},
		{"/balance hengyuanyun 80", BalanceCmd{Platform: "gpushare", Set: true, Amount: Amount{Value: dec("80")}}},
		{"rented a 4090 on hengyuan ¥1.88/h", ProposedRentCmd{Platform: "gpushare", GPU: "RTX 4090", GPUCount: 1, Price: cny}},
		{"rented a 4090 on amazon web services $1.88/h", ProposedRentCmd{Platform: "aws", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, ledger.USD)}},
	})
}

// TestParse_StoragePlatform: /storage platform= names a platform as
// /rent, /topup and /balance do: a known one by its key, another in lower
// case, so a volume's platform is the one its top-ups are under.
func TestParse_StoragePlatform(t *testing.T) {
	vol := func(plat string) StorageCreateCmd {
		return StorageCreateCmd{Volume: "sd1", SizeGB: dec("100"), Platform: plat}
	}
	runParseCases(t, []parseCase{
		{"/storage sd1 100GB platform=Auto-DL", vol("autodl")},
		{"/storage sd1 100GB platform=MyCloud", vol("mycloud")},
	})
	if _, err := Parse("/storage sd1 100GB platform=my/cloud", testNow, shanghai); err == nil {
		t.Error(`platform="my/cloud" was taken; want the bad_platform refusal of /rent`)
	}
}

// TestParse_PlatformTableIsTheLedgers: every key and alias of the ledger's
// profiles is a platform to the parser, mapped to the same key.
func TestParse_PlatformTableIsTheLedgers(t *testing.T) {
	for _, p := range ledger.Profiles() {
		for _, name := range append([]string{p.Key}, p.Aliases...) {
			if k, ok := knownPlatform(name); !ok || k != p.Key {
				t.Errorf("knownPlatform(%q) = %q, %v; want %q", name, k, ok, p.Key)
			}
		}
	}
}
