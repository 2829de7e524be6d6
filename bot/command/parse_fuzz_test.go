package command

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// FuzzParse checks that Parse never panics, that every error is a
// *ParseError with a key and code EINVALID (the core's FuzzParseErrorText
// checks that the key renders in both languages), and that
// every command it returns carries valid fields. Seeds are in
// testdata/fuzz/FuzzParse and below.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"/rent box1 autodl 4090 1.88/h",
		"/rent big runpod 8xH100 $21.52/h per-second at 2h ago",
		"/rent pkg featurize 3090 70/day always-on for=3d min=1m step=1m floor=0.01",
		"/rent 显卡1号 恒源云 两张3090 1.88元/小时 包日 at 昨天 23:00",
		"/storage data1 200GB 0.0066/GB/day free=50GB rental=box1",
		"/storage data1 resize 1.5TB at -1h",
		"/traffic box1 price=0.8/GB free=100GB direction=both",
		"/traffic box1 120GB in at 10:00",
		"/charge box1 5元 镜像费",
		"/balance autodl -3.5 at 2026-11-01 10:00",
		"/settings tz=UTC+8 lang=zh summary=22:00 quiet=23:00-08:00 idle_warn=45m",
		"/autorelease box1 关机 after 1小时30分钟",
		"/spend 2026-10",
		"在autodl租了两张3090，每小时2.5元",
		"rented 2x4090 on vast at $0.70/h",
		"/rent box1 \u202eautodl\u200b 4090 1.88",
		"/rent box1 autodl 4090 999999999.999999999/s",
		"/rent box1 runpod 2xA100 1.64/h each",
		"/rent box1 runpod 64xA100 999999999/h per card",
		"/rent box1 autodl A100 1.64元/卡/小时 count=3",
		"租了2张A100-80G runpod 每张$1.64/h",
		"rented 2x A100 on runpod $0.35/h each",
		"rented 64x h100 on runpod $999999999/h each",
		"3小时前在autodl租了4090 1.88/h",
		"昨天晚上10点在autodl租了4090 1.88元/小时",
		"this morning at 9 rented an h100 on mycloud $2.99 per hour",
		"rent 4090 on autodl 1.88 per hour",
		"释放box2",
		"box2 半小时前关机了",
		"stopped box1 2h ago",
		"status?",
		"spend this month",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, shanghai)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse(in, now, shanghai)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse(%q) returned both %v and %v", in, c, err)
			}
			checkParseError(t, in, err)
			return
		}
		if c == nil {
			t.Fatalf("Parse(%q) returned nil, nil", in)
		}
		c2, err2 := Parse(in, now, shanghai)
		if err2 != nil || show(c2) != show(c) {
			t.Fatalf("Parse(%q) is not deterministic: %s / %s, %v", in, show(c), show(c2), err2)
		}
		checkCommand(t, in, c, now)
	})
}

func checkParseError(t *testing.T, in string, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse(%q) error %T %v is not a *ParseError", in, err, err)
	}
	if pe.Key == "" {
		t.Fatalf("Parse(%q) error %v has no key", in, err)
	}
	if ledger.ErrorCode(err) != ledger.EINVALID {
		t.Fatalf("Parse(%q) error code %s", in, ledger.ErrorCode(err))
	}
}

func validName(t *testing.T, in, what, name string) {
	t.Helper()
	if err := ledger.ValidateName(name); err != nil {
		t.Fatalf("Parse(%q): %s %q is not valid: %v", in, what, name, err)
	}
}

func validAt(t *testing.T, in string, at, now time.Time) {
	t.Helper()
	if !at.IsZero() && (at.After(now.Add(futureSlack)) || at.Year() < 2000) {
		t.Fatalf("Parse(%q): time %v is out of range", in, at)
	}
}

func nonNeg(t *testing.T, in, what string, d ledger.Decimal) {
	t.Helper()
	if d.Sign() < 0 {
		t.Fatalf("Parse(%q): %s %s is negative", in, what, d)
	}
}

func checkCommand(t *testing.T, in string, c Command, now time.Time) {
	t.Helper()
	switch c := c.(type) {
	case RentCmd:
		r := ledger.Rental{Name: c.Name, Platform: c.Platform, GPU: c.GPU, GPUCount: c.GPUCount,
			Mode: c.Mode, Currency: c.Currency, Min: c.Min, Step: c.Step, Lease: c.Lease}
		if r.Mode == "" {
			r.Mode = ledger.PerSecond
		}
		if r.Currency == "" {
			r.Currency = ledger.CNY
		}
		if c.Floor != nil {
			r.Floor = *c.Floor
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("Parse(%q) = %s: rental does not validate: %v", in, show(c), err)
		}
		validName(t, in, "platform", c.Platform)
		if c.GPU == "" {
			t.Fatalf("Parse(%q): no GPU", in)
		}
		if c.Price != nil {
			if err := c.Price.Price().Validate(); err != nil {
				t.Fatalf("Parse(%q): price: %v", in, err)
			}
		}
		validAt(t, in, c.At, now)
	case StopCmd:
		validName(t, in, "name", c.Name)
		validAt(t, in, c.At, now)
	case ResumeCmd:
		validName(t, in, "name", c.Name)
		validAt(t, in, c.At, now)
	case ReleaseCmd:
		validName(t, in, "name", c.Name)
		validAt(t, in, c.At, now)
	case PriceCmd:
		validName(t, in, "name", c.Name)
		if err := c.Price.Price().Validate(); err != nil {
			t.Fatalf("Parse(%q): price: %v", in, err)
		}
		validAt(t, in, c.At, now)
	case StorageCreateCmd:
		v := ledger.Volume{Name: c.Volume, FreeGB: c.FreeGB, Currency: ledger.CNY}
		if c.Price != nil {
			v.Priced, v.Price, v.PriceUnit = true, c.Price.Amount, c.Price.Unit
		}
		if err := v.Validate(); err != nil {
			t.Fatalf("Parse(%q): volume: %v", in, err)
		}
		if err := v.CheckEvent(ledger.VolumeEvent{Kind: ledger.VolumeCreate, At: now, SizeGB: c.SizeGB}); err != nil {
			t.Fatalf("Parse(%q): volume create: %v", in, err)
		}
		if c.Rental != "" {
			validName(t, in, "rental", c.Rental)
		}
		validAt(t, in, c.At, now)
	case StorageResizeCmd:
		validName(t, in, "volume", c.Volume)
		nonNeg(t, in, "size", c.SizeGB)
		validAt(t, in, c.At, now)
	case StorageDeleteCmd:
		validName(t, in, "volume", c.Volume)
		validAt(t, in, c.At, now)
	case StorageSetPriceCmd:
		validName(t, in, "volume", c.Volume)
		nonNeg(t, in, "price", c.Price.Amount)
		validAt(t, in, c.At, now)
	case TrafficTermsCmd:
		validName(t, in, "name", c.Name)
		nonNeg(t, in, "price", c.PricePerGB)
		nonNeg(t, in, "free", c.FreeGB)
		if c.Direction != "" && c.Direction != ledger.In && c.Direction != ledger.Out && c.Direction != ledger.Both {
			t.Fatalf("Parse(%q): direction %q", in, c.Direction)
		}
	case TrafficUsageCmd:
		validName(t, in, "name", c.Name)
		nonNeg(t, in, "size", c.SizeGB)
		if c.Direction != ledger.In && c.Direction != ledger.Out {
			t.Fatalf("Parse(%q): direction %q", in, c.Direction)
		}
		validAt(t, in, c.At, now)
	case ChargeCmd:
		validName(t, in, "target", c.Target)
		if c.Amount.Value.IsZero() {
			t.Fatalf("Parse(%q): zero charge", in)
		}
		if utf8.RuneCountInString(c.Note) > ledger.MaxNoteRunes || !utf8.ValidString(c.Note) {
			t.Fatalf("Parse(%q): note %q", in, c.Note)
		}
		validAt(t, in, c.At, now)
	case TopupCmd:
		validName(t, in, "platform", c.Platform)
		if c.Amount.Value.Sign() <= 0 {
			t.Fatalf("Parse(%q): top-up %s", in, c.Amount.Value)
		}
		validAt(t, in, c.At, now)
	case BalanceCmd:
		if c.Set {
			validName(t, in, "platform", c.Platform)
		}
		validAt(t, in, c.At, now)
	case BudgetCmd:
		nonNeg(t, in, "budget", c.Amount.Value)
	case SpendCmd:
		if !c.From.Before(c.To) {
			t.Fatalf("Parse(%q): period %v..%v", in, c.From, c.To)
		}
	case AgentCmd:
		validName(t, in, "name", c.Name)
	case AgentEnrolCmd, AgentRevokeCmd:
	case AdoptCmd:
		if c.ID < 1 {
			t.Fatalf("Parse(%q): instance %d", in, c.ID)
		}
		if c.Price != nil {
			nonNeg(t, in, "price", c.Price.Amount)
		}
	case WhyCmd:
		validName(t, in, "name", c.Name)
	case AutoReleaseCmd:
		validName(t, in, "name", c.Name)
		switch c.Action {
		case ledger.AutoOff, ledger.AutoNotify, ledger.AutoStop, ledger.AutoRelease:
		default:
			t.Fatalf("Parse(%q): action %q", in, c.Action)
		}
		if c.After < 0 {
			t.Fatalf("Parse(%q): after %v", in, c.After)
		}
	case SettingsCmd:
		if c.TZ != nil {
			if _, err := time.LoadLocation(*c.TZ); err != nil {
				t.Fatalf("Parse(%q): tz %q: %v", in, *c.TZ, err)
			}
		}
		if c.Lang != nil && *c.Lang != chat.LangEN && *c.Lang != chat.LangZH {
			t.Fatalf("Parse(%q): lang %q", in, *c.Lang)
		}
	case ProposedRentCmd:
		if c.GPU == "" || c.GPUCount < 1 || c.GPUCount > 64 {
			t.Fatalf("Parse(%q): proposal %s", in, show(c))
		}
		if c.Price != nil {
			if err := c.Price.Price().Validate(); err != nil {
				t.Fatalf("Parse(%q): price: %v", in, err)
			}
		}
		if c.PerCard != nil {
			// the rental's price is the per-card price times the cards
			total, ok := mulCount(c.PerCard.Amount, c.GPUCount)
			if c.Price == nil || !ok || total.Cmp(c.Price.Amount) != 0 || c.GPUCount < 2 {
				t.Fatalf("Parse(%q): per-card proposal %s", in, show(c))
			}
		}
		if c.Platform != "" {
			validName(t, in, "platform", c.Platform)
		}
		validAt(t, in, c.At, now)
	case ProposedChangeCmd:
		validName(t, in, "name", c.Name)
		switch c.Event {
		case ledger.EventStop, ledger.EventResume, ledger.EventRelease:
		default:
			t.Fatalf("Parse(%q): change %q", in, c.Event)
		}
		validAt(t, in, c.At, now)
	case HelpCmd, StartCmd, StatusCmd, SummaryCmd, ExportCmd, UndoCmd, NotACommand, OtherBot:
	case TeamCmd:
		checkTeam(t, in, c)
	case UseCmd:
		if c.Team != "" && c.Team != "me" && ledger.ValidTeamName(c.Team) != nil {
			t.Fatalf("Parse(%q): team %q", in, c.Team)
		}
	case ProjectCmd:
		if err := ledger.ValidProject(c.Name); err != nil || c.Clear && c.Name != "" {
			t.Fatalf("Parse(%q): project %q clear %v", in, c.Name, c.Clear)
		}
	default:
		t.Fatalf("Parse(%q) returned unknown type %T", in, c)
	}
}

func BenchmarkParse(b *testing.B) {
	inputs := []string{
		"/rent big runpod 8xH100 $21.52/h per-second at 2h ago",
		"/storage data1 200GB 0.0066/GB/day free=50GB rental=box1",
		"/settings tz=Asia/Shanghai lang=zh summary=22:00 quiet=23:00-08:00",
		"在autodl租了两张3090，每小时2.5元",
		"3小时前在autodl租了2张A100 每张$1.64/h",
		"stopped box1 2h ago",
		"just chatting about nothing in particular, no GPU here",
	}
	for _, in := range inputs {
		b.Run(strings.Fields(in)[0], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(in, testNow, shanghai); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("hostile-4KiB", func(b *testing.B) {
		in := "/rent " + strings.Repeat("4090x2 ", 584)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Parse(in, testNow, shanghai)
		}
	})
	b.Run("free-4KiB", func(b *testing.B) {
		in := strings.Repeat("租了 $ 1.88 ", 300)[:4000]
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Parse(in, testNow, shanghai)
		}
	})
}
