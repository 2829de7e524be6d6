package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

var (
	shanghai = mustLoc("Asia/Shanghai")
	// testNow is Sunday 2026-11-01 12:00 in Shanghai.
	testNow = time.Date(2026, 11, 1, 12, 0, 0, 0, shanghai)
)

func mustLoc(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func dec(s string) ledger.Decimal { return ledger.MustDecimal(s) }
func decp(s string) *ledger.Decimal {
	d := dec(s)
	return &d
}

func at(y, mo, d, h, mi, s int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, shanghai)
}

func price(amount string, u ledger.Unit, c ledger.Currency) *PriceSpec {
	return &PriceSpec{Amount: dec(amount), Unit: u, Currency: c}
}

func ptr[T any](v T) *T { return &v }

// show renders a command for comparison: its type and its fields as JSON
// (pointers followed, decimals as text, times as instants with offsets).
func show(c Command) string {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("%T <%v>", c, err)
	}
	return fmt.Sprintf("%T %s", c, b)
}

func TestParse_OK(t *testing.T) {
	box1 := func(r RentCmd) RentCmd {
		if r.Name == "" {
			r.Name = "box1"
		}
		if r.Platform == "" {
			r.Platform = "autodl"
		}
		if r.GPU == "" {
			r.GPU, r.GPUCount = "RTX 4090", 1
		}
		return r
	}
	tests := []struct {
		in   string
		want Command
	}{
		// /rent, the design's examples
		{"/rent box1 autodl 4090 1.88/h", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent big runpod 8xH100 $21.52/h per-second", RentCmd{Name: "big", Platform: "runpod", GPU: "H100", GPUCount: 8,
			Price: price("21.52", ledger.UnitHour, ledger.USD), Mode: ledger.PerSecond, Currency: ledger.USD}},
		{"/rent pkg featurize 3090 70/day always-on", RentCmd{Name: "pkg", Platform: "featurize", GPU: "RTX 3090", GPUCount: 1,
			Price: price("70", ledger.UnitDay, ""), Mode: ledger.AlwaysOn}},
		// GPU shapes
		{"/rent box1 autodl rtx4090 1.88", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl RTX 4090 1.88", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 2x4090 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 2, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090x2 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 2, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 2 x 4090 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 2, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090 x2 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 2, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090×2 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 2, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl A100-80G 5", box1(RentCmd{GPU: "A100 80GB", GPUCount: 1, Price: price("5", ledger.UnitHour, "")})},
		{"/rent box1 autodl a100 80g 5", box1(RentCmd{GPU: "A100 80GB", GPUCount: 1, Price: price("5", ledger.UnitHour, "")})},
		{"/rent box1 runpod H100*8 20", box1(RentCmd{Platform: "runpod", GPU: "H100", GPUCount: 8, Price: price("20", ledger.UnitHour, "")})},
		{"/rent box1 autodl 3090ti 1.5", box1(RentCmd{GPU: "RTX 3090 Ti", GPUCount: 1, Price: price("1.5", ledger.UnitHour, "")})},
		{"/rent box1 aws L40S 1.5", box1(RentCmd{Platform: "aws", GPU: "L40S", GPUCount: 1, Price: price("1.5", ledger.UnitHour, "")})},
		{"/rent box1 aws A10 1.5", box1(RentCmd{Platform: "aws", GPU: "A10", GPUCount: 1, Price: price("1.5", ledger.UnitHour, "")})},
		{"/rent box1 gcp T4 0.35", box1(RentCmd{Platform: "gcp", GPU: "T4", GPUCount: 1, Price: price("0.35", ledger.UnitHour, "")})},
		{"/rent box1 gcp v100 2.48", box1(RentCmd{Platform: "gcp", GPU: "V100", GPUCount: 1, Price: price("2.48", ledger.UnitHour, "")})},
		{"/rent box1 autodl 两张3090 3", box1(RentCmd{GPU: "RTX 3090", GPUCount: 2, Price: price("3", ledger.UnitHour, "")})},
		{"/rent box1 autodl 8卡A100 40", box1(RentCmd{GPU: "A100", GPUCount: 8, Price: price("40", ledger.UnitHour, "")})},
		{"/rent box1 vast h100-sxm 2.5", box1(RentCmd{Platform: "vast", GPU: "H100", GPUCount: 1, Price: price("2.5", ledger.UnitHour, "")})},
		// prices
		{"/rent box1 autodl 4090 ¥1.88/h", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 ￥1.88/hr", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1.88元/小时", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1.88元/时", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1.88 元/小时", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1.88元每小时", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 45元/天", box1(RentCmd{Price: price("45", ledger.UnitDay, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1200元/月", box1(RentCmd{Price: price("1200", ledger.UnitMonth, ledger.CNY), Currency: ledger.CNY})},
		{"/rent box1 vast 4090 0.7usd/h", box1(RentCmd{Platform: "vast", Price: price("0.7", ledger.UnitHour, ledger.USD), Currency: ledger.USD})},
		{"/rent box1 vast 4090 0.0002/s", box1(RentCmd{Platform: "vast", Price: price("0.0002", ledger.UnitSecond, "")})},
		{"/rent box1 vast 4090 0.012/min", box1(RentCmd{Platform: "vast", Price: price("0.012", ledger.UnitMinute, "")})},
		{"/rent box1 vast 4090 100/week", box1(RentCmd{Platform: "vast", Price: price("100", ledger.UnitWeek, "")})},
		{"/rent box1 vast 4090 300/month", box1(RentCmd{Platform: "vast", Price: price("300", ledger.UnitMonth, "")})},
		{"/rent box1 vast 4090 0.7 /h", box1(RentCmd{Platform: "vast", Price: price("0.7", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090 0", box1(RentCmd{Price: price("0", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090", box1(RentCmd{})}, // unpriced
		// modes, Chinese modes, packages
		{"/rent box1 autodl 4090 1.88 按秒", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerSecond})},
		{"/rent box1 autodl 4090 1.88 按分钟", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerMinute})},
		{"/rent box1 autodl 4090 1.88 按小时", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerHour})},
		// after a price "per hour" is its unit; after a unit, the mode
		{"/rent box1 autodl 4090 1.88 per hour", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090 1.88/h per hour", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerHour})},
		{"/rent box1 autodl 4090 1.88 per-minute", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerMinute})},
		{"/rent box1 autodl 4090 45 包日", box1(RentCmd{Price: price("45", ledger.UnitDay, ""), Mode: ledger.AlwaysOn})},
		{"/rent box1 autodl 4090 280元 包周", box1(RentCmd{Price: price("280", ledger.UnitWeek, ledger.CNY), Mode: ledger.AlwaysOn, Currency: ledger.CNY})},
		{"/rent box1 autodl 4090 1000元/月 包月", box1(RentCmd{Price: price("1000", ledger.UnitMonth, ledger.CNY), Mode: ledger.AlwaysOn, Currency: ledger.CNY})},
		// key=value
		{"/rent name=box1 platform=autodl gpu=4090 price=1.88/h mode=per-second",
			box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Mode: ledger.PerSecond})},
		{"/rent box1 myhost 4090 1.88 min=1m step=1m floor=0.01 currency=usd for=3d",
			box1(RentCmd{Platform: "myhost", Price: price("1.88", ledger.UnitHour, ""), Min: time.Minute, Step: time.Minute,
				Floor: decp("0.01"), Currency: ledger.USD, Lease: 72 * time.Hour})},
		{"/rent box1 autodl gpu=4090 count=4 1.88", box1(RentCmd{GPU: "RTX 4090", GPUCount: 4, Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent box1 autodl 4090 1.88 for 12h", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Lease: 12 * time.Hour})},
		{"/rent box1 autodl 4090 1.88 租期=2天", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), Lease: 48 * time.Hour})},
		// group form, case, Chinese command words, full-width input
		{"/rent@MyBot box1 autodl 4090 1.88", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/RENT Box1 AutoDL 4090 1.88", box1(RentCmd{Name: "Box1", Price: price("1.88", ledger.UnitHour, "")})},
		{"/租 box1 autodl 4090 1.88", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"／rent　box1　autodl　４０９０　１.８８", box1(RentCmd{Price: price("1.88", ledger.UnitHour, "")})},
		{"/rent 显卡1号 恒源云 4090 1.88", RentCmd{Name: "显卡1号", Platform: "gpushare", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, "")}},
		// times
		{"/rent box1 autodl 4090 1.88 at 10:00", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 at 2026-11-01 10:00", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 at=2026-11-01 10:07:30", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 7, 30)})},
		{"/rent box1 autodl 4090 1.88 at 2026-11-01T02:00:00Z", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 -2h", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 at 2h ago", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 2 hours ago", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 2小时前", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 昨天 23:00", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 10, 31, 23, 0, 0)})},
		{"/rent box1 autodl 4090 1.88 在 今天10:30", box1(RentCmd{Price: price("1.88", ledger.UnitHour, ""), At: at(2026, 11, 1, 10, 30, 0)})},
		// a clock time later than now+5m means yesterday
		{"/stop box1 at 23:00", StopCmd{Name: "box1", At: at(2026, 10, 31, 23, 0, 0)}},
		{"/stop box1 at 12:04", StopCmd{Name: "box1", At: at(2026, 11, 1, 12, 4, 0)}},
		{"/stop box1", StopCmd{Name: "box1"}},
		{"/stop name=box1 at=-30m", StopCmd{Name: "box1", At: at(2026, 11, 1, 11, 30, 0)}},
		{"/关机 box1", StopCmd{Name: "box1"}},
		{"/resume box1 at 半小时前", ResumeCmd{Name: "box1", At: at(2026, 11, 1, 11, 30, 0)}},
		{"/release box1 at 30分钟前", ReleaseCmd{Name: "box1", At: at(2026, 11, 1, 11, 30, 0)}},
		{"/release box1 now", ReleaseCmd{Name: "box1", At: testNow}},
		{"/释放 box1", ReleaseCmd{Name: "box1"}},
		{"/price box1 2.28/h", PriceCmd{Name: "box1", Price: *price("2.28", ledger.UnitHour, "")}},
		{"/price 2.28元/小时 box1 at 10:00", PriceCmd{Name: "box1", Price: *price("2.28", ledger.UnitHour, ledger.CNY), At: at(2026, 11, 1, 10, 0, 0)}},
		// storage
		{"/storage data1 200GB 0.0066/GB/day free=50GB rental=box1", StorageCreateCmd{Volume: "data1", SizeGB: dec("200"),
			Price: &StoragePrice{Amount: dec("0.0066"), Unit: ledger.PerGBDay}, FreeGB: dec("50"), FreeSet: true, Rental: "box1"}},
		{"/storage data1 0.0066元/GB/天 200", StorageCreateCmd{Volume: "data1", SizeGB: dec("200"),
			Price: &StoragePrice{Amount: dec("0.0066"), Unit: ledger.PerGBDay, Currency: ledger.CNY}}},
		{"/storage net1 1.5TB $0.07/GB/month", StorageCreateCmd{Volume: "net1", SizeGB: dec("1500"),
			Price: &StoragePrice{Amount: dec("0.07"), Unit: ledger.PerGBMonth, Currency: ledger.USD}}},
		{"/storage net1 500G 0.1元/GB/月", StorageCreateCmd{Volume: "net1", SizeGB: dec("500"),
			Price: &StoragePrice{Amount: dec("0.1"), Unit: ledger.PerGBMonth, Currency: ledger.CNY}}},
		{"/storage net1 500 GB 0.0001/GB/h at -1h", StorageCreateCmd{Volume: "net1", SizeGB: dec("500"),
			Price: &StoragePrice{Amount: dec("0.0001"), Unit: ledger.PerGBHour}, At: at(2026, 11, 1, 11, 0, 0)}},
		{"/storage nv 500GB platform=runpod", StorageCreateCmd{Volume: "nv", SizeGB: dec("500"), Platform: "runpod"}},
		{"/storage sd3 100GB free=0 rental=s1", StorageCreateCmd{Volume: "sd3", SizeGB: dec("100"), FreeSet: true, Rental: "s1"}},
		{"/storage data1 resize 300GB", StorageResizeCmd{Volume: "data1", SizeGB: dec("300")}},
		// A price without a size prices the existing volume.
		{"/storage data1 0.0066/GB/day", StorageSetPriceCmd{Volume: "data1", Price: StoragePrice{Amount: dec("0.0066"), Unit: ledger.PerGBDay}}},
		{"/storage data1 price=$0.07/GB/month", StorageSetPriceCmd{Volume: "data1", Price: StoragePrice{Amount: dec("0.07"), Unit: ledger.PerGBMonth, Currency: ledger.USD}}},
		{"/storage 扩容 data1 1TB at 10:00", StorageResizeCmd{Volume: "data1", SizeGB: dec("1000"), At: at(2026, 11, 1, 10, 0, 0)}},
		{"/storage data1 delete", StorageDeleteCmd{Volume: "data1"}},
		{"/storage 删除 data1 at 昨天 23:00", StorageDeleteCmd{Volume: "data1", At: at(2026, 10, 31, 23, 0, 0)}},
		// traffic
		{"/traffic box1 price=0.8/GB", TrafficTermsCmd{Name: "box1", PricePerGB: dec("0.8")}},
		{"/traffic box1 price=$0.01/GB free=100GB direction=both", TrafficTermsCmd{Name: "box1", PricePerGB: dec("0.01"),
			Currency: ledger.USD, FreeGB: dec("100"), FreeSet: true, Direction: ledger.Both}},
		{"/traffic e1 price=0.09/GB free=0", TrafficTermsCmd{Name: "e1", PricePerGB: dec("0.09"), FreeSet: true}},
		{"/traffic box1 0.8元/GB out", TrafficTermsCmd{Name: "box1", PricePerGB: dec("0.8"), Currency: ledger.CNY, Direction: ledger.Out}},
		{"/traffic box1 120GB", TrafficUsageCmd{Name: "box1", SizeGB: dec("120"), Direction: ledger.Out}},
		{"/traffic box1 120GB in at 10:00", TrafficUsageCmd{Name: "box1", SizeGB: dec("120"), Direction: ledger.In, At: at(2026, 11, 1, 10, 0, 0)}},
		{"/流量 box1 下行 2TB", TrafficUsageCmd{Name: "box1", SizeGB: dec("2000"), Direction: ledger.In}},
		// money
		{"/charge box1 5 image fee", ChargeCmd{Target: "box1", Amount: Amount{Value: dec("5")}, Note: "image fee"}},
		{"/charge box1 5元 镜像费", ChargeCmd{Target: "box1", Amount: Amount{Value: dec("5"), Currency: ledger.CNY}, Note: "镜像费"}},
		{"/charge autodl $-2 refund at=10:00", ChargeCmd{Target: "autodl", Amount: Amount{Value: dec("-2"), Currency: ledger.USD},
			Note: "refund", At: at(2026, 11, 1, 10, 0, 0)}},
		{"/charge box1 5 fee for 2 days", ChargeCmd{Target: "box1", Amount: Amount{Value: dec("5")}, Note: "fee for 2 days"}},
		{"/topup autodl 100", TopupCmd{Platform: "autodl", Amount: Amount{Value: dec("100")}}},
		{"/topup 100元 AutoDL", TopupCmd{Platform: "autodl", Amount: Amount{Value: dec("100"), Currency: ledger.CNY}}},
		{"/充值 vast.ai $20", TopupCmd{Platform: "vast", Amount: Amount{Value: dec("20"), Currency: ledger.USD}}},
		{"/balance autodl 67.01", BalanceCmd{Platform: "autodl", Set: true, Amount: Amount{Value: dec("67.01")}}},
		{"/balance autodl -3.5 at 10:00", BalanceCmd{Platform: "autodl", Set: true, Amount: Amount{Value: dec("-3.5")}, At: at(2026, 11, 1, 10, 0, 0)}},
		{"/balance", BalanceCmd{}},
		{"/budget 3000/month", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000")}}},
		{"/budget ¥3000", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000"), Currency: ledger.CNY}}},
		{"/budget 3000元/月", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000"), Currency: ledger.CNY}}},
		{"/budget off", BudgetCmd{Set: true}},
		{"/budget $500/month", BudgetCmd{Set: true, Amount: Amount{Value: dec("500"), Currency: ledger.USD}}},
		{"/budget 3000/month currency=CNY", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000"), Currency: ledger.CNY}}},
		{"/budget off currency=usd", BudgetCmd{Set: true, Amount: Amount{Currency: ledger.USD}}},
		{"/budget $0", BudgetCmd{Set: true, Amount: Amount{Currency: ledger.USD}}},
		{"/budget", BudgetCmd{}},
		// reports
		{"/status", StatusCmd{}},
		{"/list", StatusCmd{}},
		{"/STATUS@MyBot", StatusCmd{}},
		{"/spend", SpendCmd{Period: "month", From: at(2026, 11, 1, 0, 0, 0), To: at(2026, 12, 1, 0, 0, 0)}},
		{"/spend today", SpendCmd{Period: "today", From: at(2026, 11, 1, 0, 0, 0), To: at(2026, 11, 2, 0, 0, 0)}},
		{"/spend 昨天", SpendCmd{Period: "yesterday", From: at(2026, 10, 31, 0, 0, 0), To: at(2026, 11, 1, 0, 0, 0)}},
		{"/spend week", SpendCmd{Period: "week", From: at(2026, 10, 26, 0, 0, 0), To: at(2026, 11, 2, 0, 0, 0)}},
		{"/spend 本周", SpendCmd{Period: "week", From: at(2026, 10, 26, 0, 0, 0), To: at(2026, 11, 2, 0, 0, 0)}},
		{"/spend last week", SpendCmd{Period: "last-week", From: at(2026, 10, 19, 0, 0, 0), To: at(2026, 10, 26, 0, 0, 0)}},
		{"/spend 本月", SpendCmd{Period: "month", From: at(2026, 11, 1, 0, 0, 0), To: at(2026, 12, 1, 0, 0, 0)}},
		{"/spend 上个月", SpendCmd{Period: "last-month", From: at(2026, 10, 1, 0, 0, 0), To: at(2026, 11, 1, 0, 0, 0)}},
		{"/spend 2026-02", SpendCmd{Period: "2026-02", From: at(2026, 2, 1, 0, 0, 0), To: at(2026, 3, 1, 0, 0, 0)}},
		{"/summary", SummaryCmd{}},
		{"/export", ExportCmd{Format: "csv"}},
		{"/export JSON", ExportCmd{Format: "json"}},
		{"/undo", UndoCmd{}},
		{"/撤销", UndoCmd{}},
		{"/agent box1", AgentCmd{Name: "box1"}},
		{"/why box1", WhyCmd{Name: "box1"}},
		// automation and settings
		{"/autorelease box1 stop after 30m", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, After: 30 * time.Minute}},
		{"/autorelease box1 release", AutoReleaseCmd{Name: "box1", Action: ledger.AutoRelease}},
		{"/autorelease notify box1", AutoReleaseCmd{Name: "box1", Action: ledger.AutoNotify}},
		{"/autorelease box1 off", AutoReleaseCmd{Name: "box1", Action: ledger.AutoOff}},
		{"/auto_release box1 关机 after 1小时30分钟", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, After: 90 * time.Minute}},
		{"/autorelease box1 释放 2h", AutoReleaseCmd{Name: "box1", Action: ledger.AutoRelease, After: 2 * time.Hour}},
		{"/autorelease box1 stop after 30m wait_for=none", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, After: 30 * time.Minute, WaitFor: ledger.WaitNone}},
		{"/autorelease box1 stop wait_for=jupyter,ssh", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, WaitFor: "ssh,jupyter"}},
		{"/autorelease box1 stop wait_for=jupyter,ssh idle_people=3h", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, WaitFor: "ssh,jupyter", IdlePeople: 3 * time.Hour}},
		{"/autorelease box1 stop idle_people=none", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, IdlePeople: ledger.IdlePeopleNever}},
		{"/autorelease box1 关机 空闲=90分钟", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, IdlePeople: 90 * time.Minute}},
		{"/autorelease box1 stop wait-for=all", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop}},
		{"/autorelease box1 关机 等待=无", AutoReleaseCmd{Name: "box1", Action: ledger.AutoStop, WaitFor: ledger.WaitNone}},
		{"/settings", SettingsCmd{}},
		{"/settings tz=Asia/Shanghai lang=en summary=22:00", SettingsCmd{TZ: ptr("Asia/Shanghai"), Lang: ptr("en"), SummaryAt: ptr(22 * 60)}},
		{"/settings tz=UTC+8", SettingsCmd{TZ: ptr("Etc/GMT-8")}},
		{"/settings tz=GMT-5", SettingsCmd{TZ: ptr("Etc/GMT+5")}},
		{"/settings tz=北京 lang=中文", SettingsCmd{TZ: ptr("Asia/Shanghai"), Lang: ptr("zh")}},
		{"/settings idle_warn=45m silent=15m long_run=1d", SettingsCmd{IdleWarn: ptr(45 * time.Minute), Silent: ptr(15 * time.Minute), LongRun: ptr(24 * time.Hour)}},
		{"/settings idle-warn=1h", SettingsCmd{IdleWarn: ptr(time.Hour)}},
		{"/settings quiet=23:00-08:00", SettingsCmd{Quiet: &QuietHours{From: 23 * 60, To: 8 * 60}}},
		{"/settings quiet=off summary=off", SettingsCmd{Quiet: &QuietHours{From: -1, To: -1}, SummaryAt: ptr(-1)}},
		{"/help", HelpCmd{}},
		{"/help rent", HelpCmd{Topic: KindRent}},
		{"/help /list", HelpCmd{Topic: KindStatus}},
		{"/帮助", HelpCmd{}},
		{"/start", StartCmd{}},
		{"/start Ab_12-x", StartCmd{Code: "Ab_12-x"}},
		// free text
		{"help", HelpCmd{}},
		{"帮助", HelpCmd{}},
		{"hello there", NotACommand{}},
		{"", NotACommand{}},
		{"/", NotACommand{}},
		{"the 4090 is a nice card", NotACommand{}},
		{"4090 1.88/h 贵吗", NotACommand{}},
		{"租了一台4090 1.88元/小时 autodl", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, ledger.CNY)}},
		{"rented 2x4090 on vast at $0.70/h", ProposedRentCmd{Platform: "vast", GPU: "RTX 4090", GPUCount: 2, Price: price("0.70", ledger.UnitHour, ledger.USD)}},
		{"在autodl租了两张3090，每小时2.5元", ProposedRentCmd{Platform: "autodl", GPU: "RTX 3090", GPUCount: 2, Price: price("2.5", ledger.UnitHour, ledger.CNY)}},
		{"just rented an H100 on runpod for $2.99/hr", ProposedRentCmd{Platform: "runpod", GPU: "H100", GPUCount: 1, Price: price("2.99", ledger.UnitHour, ledger.USD)}},
		{"Rented two RTX 4090s on vast.ai, 0.35 USD per hour", ProposedRentCmd{Platform: "vast", GPU: "RTX 4090", GPUCount: 2, Price: price("0.35", ledger.UnitHour, ledger.USD)}},
		{"租了8卡A100 包月 30000元 矩池云", ProposedRentCmd{Platform: "matpool", GPU: "A100", GPUCount: 8, Price: price("30000", ledger.UnitMonth, ledger.CNY), Mode: ledger.AlwaysOn}},
		{"刚租了一张4090", ProposedRentCmd{GPU: "RTX 4090", GPUCount: 1}},
		{"autodl 4090 1.88元/小时", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, ledger.CNY)}},
		{"租了2块4090 autodl", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 2}},
		{"rented a 3090 Ti on vast for $0.30/h", ProposedRentCmd{Platform: "vast", GPU: "RTX 3090 Ti", GPUCount: 1, Price: price("0.30", ledger.UnitHour, ledger.USD)}},
		{"/rent box1 autodl A10 0", box1(RentCmd{GPU: "A10", GPUCount: 1, Price: price("0", ledger.UnitHour, "")})},
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

// TestParse_OrderForgiving shuffles the positional tokens of commands and
// checks every order gives the same command.
func TestParse_OrderForgiving(t *testing.T) {
	tests := []struct {
		cmd  string
		toks []string
	}{
		// NAME must come before an unknown platform; a known one may go anywhere.
		{"/rent", []string{"box1", "autodl", "2x4090", "1.88元/小时", "按秒", "at=10:00", "for=3d"}},
		{"/rent", []string{"big", "runpod", "8xH100", "$21.52/h", "per-second", "-2h"}},
		{"/storage", []string{"data1", "200GB", "0.0066/GB/day", "free=50GB", "rental=box1"}},
		{"/traffic", []string{"box1", "120GB", "in", "at=10:00"}},
		{"/autorelease", []string{"box1", "stop", "after=30m"}},
		{"/topup", []string{"autodl", "100元"}},
		{"/price", []string{"box1", "2.28/h", "-1h"}},
	}
	for _, tt := range tests {
		first, err := Parse(tt.cmd+" "+strings.Join(tt.toks, " "), testNow, shanghai)
		if err != nil {
			t.Fatalf("%s %v: %v", tt.cmd, tt.toks, err)
		}
		want := show(first)
		n := 0
		permute(tt.toks, func(p []string) {
			n++
			in := tt.cmd + " " + strings.Join(p, " ")
			got, err := Parse(in, testNow, shanghai)
			if err != nil {
				t.Errorf("Parse(%q): %v", in, err)
				return
			}
			if show(got) != want {
				t.Errorf("Parse(%q)\n got %s\nwant %s", in, show(got), want)
			}
		})
		if n < 2 {
			t.Fatalf("only %d permutations tried", n)
		}
	}
}

// permute calls f with every permutation of s (Heap's algorithm).
func permute(s []string, f func([]string)) {
	a := append([]string(nil), s...)
	var gen func(k int)
	gen = func(k int) {
		if k == 1 {
			f(a)
			return
		}
		gen(k - 1)
		for i := 0; i < k-1; i++ {
			if k%2 == 0 {
				a[i], a[k-1] = a[k-1], a[i]
			} else {
				a[0], a[k-1] = a[k-1], a[0]
			}
			gen(k - 1)
		}
	}
	gen(len(a))
}

func TestParseFor_OtherBot(t *testing.T) {
	tests := []struct {
		in   string
		want Command
	}{
		{"/status@OtherBot", OtherBot{Bot: "OtherBot"}},
		{"/status@gpuledger_bot", StatusCmd{}},
		{"/status@GPULedger_Bot", StatusCmd{}},
		{"/status", StatusCmd{}},
	}
	for _, tt := range tests {
		got, err := ParseFor("gpuledger_bot", tt.in, testNow, shanghai)
		if err != nil {
			t.Fatalf("ParseFor(%q): %v", tt.in, err)
		}
		if show(got) != show(tt.want) {
			t.Errorf("ParseFor(%q) = %s, want %s", tt.in, show(got), show(tt.want))
		}
	}
}

// TestParse_DST checks that clock times and periods are cut in the user's
// zone across a DST change.
func TestParse_DST(t *testing.T) {
	ny := mustLoc("America/New_York")
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, ny) // DST ended at 02:00 this morning
	c, err := Parse("/stop box1 at 01:30", now, ny)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.(StopCmd).At; got.In(ny).Hour() != 1 || got.In(ny).Minute() != 30 {
		t.Errorf("at 01:30 gave %v", got)
	}
	c, err = Parse("/spend today", now, ny)
	if err != nil {
		t.Fatal(err)
	}
	s := c.(SpendCmd)
	if d := s.To.Sub(s.From); d != 25*time.Hour {
		t.Errorf("today lasts %v on the DST change day, want 25h", d)
	}
}

func TestParse_NilLocation(t *testing.T) {
	c, err := Parse("/stop box1 at 10:00", time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC); !c.(StopCmd).At.Equal(want) {
		t.Errorf("At = %v, want %v", c.(StopCmd).At, want)
	}
}

func TestParse_HostileFreeText(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("租了一台4090 ", 1000), // over the limit: not scanned
		"\xff\xfe rented 4090 $1/h",
		strings.Repeat("🙂", 500),
		"שלום עולם 4090",
		"\x00\x01\x02",
	} {
		c, err := Parse(in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%.40q) error %v, want NotACommand", in, err)
			continue
		}
		if _, ok := c.(NotACommand); !ok {
			t.Errorf("Parse(%.40q) = %s, want NotACommand", in, show(c))
		}
	}
}

// TestParseGPU_RoundTrip checks that every normalised model name, written
// with or without spaces and with a count, parses back to itself, so a
// command built from a parsed RentCmd reads the same.
func TestParseGPU_RoundTrip(t *testing.T) {
	for _, name := range gpuModels {
		for _, form := range []string{name, strings.ReplaceAll(name, " ", ""), "3x" + strings.ReplaceAll(name, " ", ""),
			strings.ReplaceAll(name, " ", "") + "*3", strings.ToLower(strings.ReplaceAll(name, " ", "-"))} {
			want := 1
			if strings.Contains(form, "3x") || strings.Contains(form, "*3") {
				want = 3
			}
			in := "/rent box1 autodl " + form + " 1.88"
			c, err := Parse(in, testNow, shanghai)
			if err != nil {
				t.Errorf("Parse(%q): %v", in, err)
				continue
			}
			if r := c.(RentCmd); r.GPU != name || r.GPUCount != want {
				t.Errorf("Parse(%q): GPU %q x%d, want %q x%d", in, r.GPU, r.GPUCount, name, want)
			}
		}
	}
}

func TestQuote_Hostile(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", `"abc"`},
		{"镜像", `"镜像"`},
		{"a\u202eb", `"a\u202eb"`},
		{"\xff", `"\xff"`},
		{"\x1b[31m", `"\x1b[31m"`},
		{strings.Repeat("x", 50), `"` + strings.Repeat("x", 40) + `…"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
