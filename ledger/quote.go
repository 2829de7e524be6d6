package ledger

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// A quote is the whole bill of a rental not made yet (/quote): for each
// platform the user has a price for, what HOURS of running and a stop
// would cost there, compute, storage and traffic, by that platform's
// rules. It is built by the cost engine itself, over a hypothetical
// rental with those terms and events, so a quote and the bill of the
// same rental can never disagree.

// QuoteSource says where a quote line's price comes from, in the order
// of trust.
type QuoteSource string

// Quote sources.
const (
	// QuoteFromRental: the user's own latest rental of the model on the
	// platform (QuoteLine.From): its rate, terms and volume.
	QuoteFromRental QuoteSource = "rental"
	// QuoteFromUser: the price the user gave with the quote (price=).
	QuoteFromUser QuoteSource = "price"
)

// MaxQuoteHours bounds HOURS and stopped= of a quote: one year.
const MaxQuoteHours = 8760

// QuotePrice is a price the user gives with a quote: Price per GPU, in
// Currency, on Platform (a profile key, the user's own name, or "" for
// none: no platform's rules then apply, only per-second billing), billed
// in Mode ("" the platform's).
type QuotePrice struct {
	Platform string
	Price    Price // per GPU
	Currency Currency
	Mode     Mode
}

// QuoteInput is what a quote is asked for.
type QuoteInput struct {
	GPU      string // the model as the user wrote it ("4090", "RTX 4090")
	GPUCount int    // GPUs of the rental quoted; 0 means 1
	Running  time.Duration
	Stopped  time.Duration // stopped after running, before the release
	// StorageGB is the size of the disk quoted; nil: the size of the
	// largest volume of the rental each line's terms come from, else none.
	StorageGB *Decimal
	TrafficGB Decimal     // GB moved in the charged direction (counted as GiB, as /traffic does)
	Price     *QuotePrice // price=; nil none

	Book    *Book // the user's ledger: past rentals and their volumes
	Benches []BenchRecord
	Jobs    []JobRun
	// At is when the quoted rental would start (the asker's now): it
	// places the calendar month whose traffic allowance applies.
	At time.Time
}

// QuoteLine is the bill on one platform at one price.
type QuoteLine struct {
	Platform string
	Source   QuoteSource
	From     *Rental // the rental whose terms were used (QuoteFromRental)
	Currency Currency
	PerGPU   Price // the compute rate of one GPU
	Mode     Mode
	Min      time.Duration
	Step     time.Duration
	Floor    Decimal

	BilledSeconds int64 // compute seconds billed: after minimums, steps, packages
	Compute       Money

	StorageGB     Decimal // the disk quoted; zero: none
	StorageFreeGB Decimal
	// StorageFrom says where the storage price came from: "rental" (the
	// rental's volume), "profile" (the platform's typical price) or ""
	// (none: StoragePriced is false when StorageGB is above the free size).
	StorageFrom string
	// StoragePrice is the disk's price terms (At unset); zero when
	// StorageFrom is "".
	StoragePrice  VolumePrice
	StoragePriced bool
	Storage       Money

	TrafficFreeGB Decimal // the monthly allowance
	TrafficPriced bool    // false: traffic was asked and has no price here
	Traffic       Money

	Total Money // the priced parts

	// Package is the same GPU's package price on the platform (a day,
	// week or month paid in full) when the user had one, compared with
	// this line's.
	Package *QuotePackage
	// Runs are the user's own labelled jobs timed on this platform and
	// model, best known first.
	Runs []QuoteRuns
	// TensorTFLOPS is what one GPU of this model delivered on this
	// platform in the user's latest bench there; 0 none. PerTFLOPHour is
	// PerGPU per hour ÷ TensorTFLOPS: the price of a tensor-TFLOP-hour.
	TensorTFLOPS float64
	PerTFLOPHour *big.Rat // nil: no bench (never a guess)
	BenchFrom    *Rental

	// The hypothetical rental the engine billed, and its book.
	quoted *Rental
	book   *Book
}

// Priced reports whether every part of the line has a price.
func (l QuoteLine) Priced() bool { return l.StoragePriced && l.TrafficPriced }

// QuotePackage compares a package with paying by the hour.
type QuotePackage struct {
	From   *Rental // the rental that had the package
	PerGPU Price   // the package's price per GPU (Unit day, week or month)
	// Total is the package's bill for the quote: every started period of
	// the quote's wall time (running and stopped) in full, storage and
	// traffic as the line's.
	Total Money
	// BreakEven is the running time within one period after which the
	// package costs less than paying by the hour at the line's rate; 0
	// when the package never does within its period (or the two cannot be
	// compared: another currency).
	BreakEven time.Duration
}

// QuoteRuns is one label's runs on the line's platform and model.
type QuoteRuns struct {
	Label  string
	Median time.Duration // of the succeeded runs
	Count  int           // runs the median rests on
	// Runs is how many whole runs fit in the quote's running time; PerRun
	// what the first of them costs (CostOver the quoted rental: its
	// share of compute, storage and traffic, as a job's cost on a real
	// rental is), zero when none fits.
	Runs   int64
	PerRun Money
}

// Quote returns the bill of in on each platform the user has a price
// for: the latest rental of the same model on each platform (by
// NormalizeGPUName, so "4090", "RTX 4090" and "NVIDIA GeForce RTX 4090"
// agree) and the price given. Lines are grouped by currency (never
// converted or mixed; currencies in alphabetical order), fully priced
// lines first, cheapest total first. No line means no price anywhere.
//
// A rate scaled from the rental's GPU count to the one quoted is exact
// unless the division does not end within 9 decimals, where it is
// rounded there (less than a billionth of the currency an hour). A price
// that would reach a billion a unit for the GPUs asked gets no line.
func Quote(in QuoteInput) []QuoteLine {
	in.GPUCount = min(max(in.GPUCount, 1), MaxGPUCount)
	// The engine counts whole seconds.
	in.At = in.At.Truncate(time.Second)
	in.Running = max(in.Running.Round(time.Second), time.Second)
	in.Stopped = max(in.Stopped.Round(time.Second), 0)
	key := NormalizeGPUName(in.GPU)
	var rentals []*Rental
	if in.Book != nil && key != "" {
		for _, r := range in.Book.Rentals {
			if len(r.Events) > 0 && r.Priced && NormalizeGPUName(r.GPU) == key &&
				fits(r.rateAt(lastEventAt(r)), in.GPUCount, r.GPUCount) {
				rentals = append(rentals, r)
			}
		}
	}
	// The latest rental of each platform: one paying as it goes, one
	// with a package.
	latest := map[string]*Rental{}
	pkgs := map[string]*Rental{}
	for _, r := range rentals {
		m := latest
		if isPackage(r) {
			m = pkgs
		}
		if o := m[r.Platform]; o == nil || r.StartedAt().After(o.StartedAt()) {
			m[r.Platform] = r
		}
	}
	var out []QuoteLine
	for plat, r := range latest {
		l := in.lineFrom(r)
		if p := pkgs[plat]; p != nil {
			l.Package = in.packageOf(p, l)
		}
		in.addEvidence(&l, key, rentals)
		out = append(out, l)
	}
	for plat, p := range pkgs {
		if latest[plat] != nil {
			continue
		}
		l := in.lineFrom(p)
		in.addEvidence(&l, key, rentals)
		out = append(out, l)
	}
	if in.Price != nil && fits(in.Price.Price, in.GPUCount, 1) {
		l := in.lineGiven(*in.Price, key)
		in.addEvidence(&l, key, rentals)
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b QuoteLine) int {
		if c := strings.Compare(string(a.Currency), string(b.Currency)); c != 0 {
			return c
		}
		if a.Priced() != b.Priced() {
			if a.Priced() {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Total.Minor, b.Total.Minor); c != 0 {
			return c
		}
		return strings.Compare(a.Platform, b.Platform)
	})
	return out
}

// isPackage reports whether r was billed as a prepaid package.
func isPackage(r *Rental) bool {
	return r.Mode == AlwaysOn && r.rateAt(lastEventAt(r)).Unit.IsPackage()
}

func lastEventAt(r *Rental) time.Time { return r.Events[len(r.Events)-1].At }

// fits reports whether p for count GPUs, when it was the price of had,
// stays below a billion a unit, the bound of every price the ledger
// takes: beyond it the engine's money would overflow.
func fits(p Price, count, had int) bool {
	if had <= 0 {
		had = 1
	}
	q := p.Amount.Rat()
	q.Mul(q, big.NewRat(int64(count), int64(had)))
	return q.Cmp(new(big.Rat).SetInt64(maxDecimalCoef)) < 0
}

// scaled returns p for count GPUs when it was the price of had.
func scaled(p Price, count, had int) Price {
	if count == had || had <= 0 {
		return p
	}
	q := p.Amount.Rat()
	q.Mul(q, big.NewRat(int64(count), int64(had)))
	return Price{Amount: decimalOf(q), Unit: p.Unit}
}

// decimalOf rounds q half away from zero to MaxDecimalScale digits.
func decimalOf(q *big.Rat) Decimal {
	scale := big.NewInt(pow10[MaxDecimalScale])
	num := new(big.Int).Mul(q.Num(), scale)
	quo, rem := new(big.Int).QuoRem(num, q.Denom(), new(big.Int))
	rem.Abs(rem).Lsh(rem, 1)
	if rem.Cmp(q.Denom()) >= 0 {
		if num.Sign() < 0 {
			quo.Sub(quo, big.NewInt(1))
		} else {
			quo.Add(quo, big.NewInt(1))
		}
	}
	if !quo.IsInt64() {
		return Decimal{coef: math.MaxInt64 / 10, scale: MaxDecimalScale}.norm()
	}
	return Decimal{coef: quo.Int64(), scale: MaxDecimalScale}.norm()
}

// largestVolume returns the largest volume attached to r (by its last
// size), or nil.
func largestVolume(b *Book, r *Rental) *Volume {
	var best *Volume
	var size Decimal
	for _, v := range b.Volumes {
		if !(v.RentalID == r.ID && r.ID != 0 || v.RentalID == 0 && r.ID == 0 && v.RentalName == r.Name) {
			continue
		}
		if s := v.SizeGB(); best == nil || s.Cmp(size) > 0 {
			best, size = v, s
		}
	}
	return best
}

// lineFrom quotes at r's terms: its latest rate, mode, minimums, traffic
// terms and its largest volume's storage terms.
func (in QuoteInput) lineFrom(r *Rental) QuoteLine {
	end := lastEventAt(r)
	rate := r.rateAt(end)
	h := Rental{
		Platform: r.Platform, GPU: r.GPU, GPUCount: in.GPUCount, Mode: r.Mode, Priced: true,
		Price: scaled(rate, in.GPUCount, r.GPUCount), Currency: r.Currency,
		Min: r.Min, Step: r.Step, Floor: r.Floor, Traffic: r.Traffic,
	}
	if n := len(r.TrafficPrices); n > 0 {
		h.Traffic.PricePerGB = r.TrafficPrices[n-1].PricePerGB
	}
	var vol *Volume
	from := ""
	var used *Volume // the rental's own largest volume: its size is the quote's
	if in.Book != nil {
		used = largestVolume(in.Book, r)
		if v := used; v != nil && v.Priced && v.Currency == r.Currency {
			pt := v.PriceAt(end)
			vol = &Volume{Platform: v.Platform, Currency: v.Currency, Priced: true, Price: pt.Price, PriceUnit: pt.PriceUnit,
				StoppedPrice: pt.StoppedPrice, HasStoppedPrice: pt.HasStoppedPrice, FreeGB: v.FreeGB,
				Events: []VolumeEvent{{Kind: VolumeCreate, SizeGB: v.SizeGB()}}}
			from = "rental"
		}
	}
	if vol == nil {
		// The rental's disk had no price (or one in another currency):
		// the profile's price where it has one, else unpriced, but over
		// the disk's own size, never a disk of 0 GB that bills nothing.
		vol, from = profileVolume(r.Platform, r.Currency)
		if used != nil {
			vol.Events[0].SizeGB = used.SizeGB()
		}
	}
	l := in.bill(h, vol, from)
	l.Source, l.From = QuoteFromRental, r
	l.PerGPU = scaled(rate, 1, r.GPUCount)
	return l
}

// profileVolume is a volume on the platform's profile storage terms: its
// typical price where it has one (from "profile"), else unpriced.
func profileVolume(platform string, c Currency) (*Volume, string) {
	v := &Volume{Platform: platform, Currency: c, Events: []VolumeEvent{{Kind: VolumeCreate}}}
	from := ""
	if p, ok := LookupProfile(platform); ok {
		if p.ApplyVolume(v) {
			from = "profile"
		}
	}
	return v, from
}

// lineGiven quotes at the price the user gave.
func (in QuoteInput) lineGiven(qp QuotePrice, key string) QuoteLine {
	h := Rental{Platform: qp.Platform, GPU: in.GPU, GPUCount: in.GPUCount, Mode: qp.Mode, Priced: true,
		Price: scaled(qp.Price, in.GPUCount, 1), Currency: qp.Currency}
	if p, ok := LookupProfile(qp.Platform); ok {
		p.Apply(&h)
		if h.Currency != qp.Currency {
			// A price in another currency than the platform's: its own
			// rules still apply, its priced terms (none but traffic's
			// free ones) do not.
			h.Currency = qp.Currency
		}
	}
	if h.Mode == "" {
		h.Mode = PerSecond
	}
	vol, from := profileVolume(qp.Platform, h.Currency)
	if in.Book != nil && in.StorageGB == nil {
		// The size the user's own latest rental of the model there used.
		var last *Rental
		for _, r := range in.Book.Rentals {
			if len(r.Events) > 0 && r.Platform == qp.Platform && qp.Platform != "" && NormalizeGPUName(r.GPU) == key &&
				(last == nil || r.StartedAt().After(last.StartedAt())) {
				last = r
			}
		}
		if last != nil {
			if v := largestVolume(in.Book, last); v != nil {
				vol.Events[0].SizeGB = v.SizeGB()
			}
		}
	}
	l := in.bill(h, vol, from)
	l.Source, l.PerGPU = QuoteFromUser, qp.Price
	return l
}

// quoteRentalID is the ID the hypothetical rental and its volume share.
const quoteRentalID = -1

// bill runs the cost engine over h started at in.At, running in.Running,
// stopped in.Stopped, then released; vol (its size replaced by the one
// asked, when asked) attached for the whole time, and in.TrafficGB used.
func (in QuoteInput) bill(h Rental, vol *Volume, from string) QuoteLine {
	start := in.At
	stop := start.Add(in.Running)
	end := stop.Add(in.Stopped)
	h.ID, h.Name = quoteRentalID, "quote"
	h.Events = []Event{{Kind: EventStart, At: start}}
	if in.Stopped > 0 {
		h.Events = append(h.Events, Event{Kind: EventStop, At: stop})
	}
	h.Events = append(h.Events, Event{Kind: EventRelease, At: end})
	if in.TrafficGB.Sign() > 0 {
		dir := Out
		if h.Traffic.Direction == In {
			dir = In
		}
		// Recorded in the last second, so a run's share of it is by time
		// (CostOver), not all of it in the first run.
		h.TrafficUsage = []TrafficUsage{{At: end.Add(-time.Second), Bytes: gibBytes(in.TrafficGB), Direction: dir}}
	}
	book := &Book{Rentals: []*Rental{&h}}
	if in.Book != nil {
		book.User = in.Book.User
	}
	size := vol.Events[0].SizeGB
	if in.StorageGB != nil {
		size = *in.StorageGB
	}
	if size.Sign() > 0 {
		v := *vol
		v.ID, v.Name, v.RentalID, v.RentalName = quoteRentalID, "quote", quoteRentalID, h.Name
		v.Events = []VolumeEvent{{Kind: VolumeCreate, At: start, SizeGB: size}, {Kind: VolumeDelete, At: end}}
		book.Volumes = []*Volume{&v}
	}
	st := StatementAsOf(book, end)
	l := QuoteLine{
		Platform: h.Platform, Currency: h.Currency, Mode: h.Mode, Min: h.Min, Step: h.Step, Floor: h.Floor,
		StorageGB: size, StorageFreeGB: vol.FreeGB, StorageFrom: from, StoragePriced: true,
		StoragePrice: VolumePrice{Price: vol.Price, PriceUnit: vol.PriceUnit, StoppedPrice: vol.StoppedPrice, HasStoppedPrice: vol.HasStoppedPrice},
		Storage:      Money{Currency: h.Currency}, TrafficFreeGB: h.Traffic.FreeGB, TrafficPriced: true,
		Traffic: Money{Currency: h.Currency}, Compute: Money{Currency: h.Currency},
		quoted: &h, book: book,
	}
	if size.Sign() > 0 && size.Cmp(vol.FreeGB) > 0 && !vol.Priced {
		l.StoragePriced = false
	}
	if len(st.Rentals) == 1 {
		rc := st.Rentals[0]
		l.BilledSeconds, l.Compute = rc.BilledSeconds, rc.Compute
		l.Storage, l.Traffic, l.TrafficPriced = rc.Storage, rc.Traffic, rc.TrafficPriced
		l.StoragePriced = l.StoragePriced && rc.StoragePriced
	}
	l.Total = l.Compute.Add(l.Storage).Add(l.Traffic)
	return l
}

// gibBytes converts GB as written to bytes (GiB, 2^30 bytes, as /traffic
// counts them), rounding down.
func gibBytes(gb Decimal) int64 {
	q := gb.Rat()
	q.Mul(q, new(big.Rat).SetInt64(1<<30))
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return n.Int64()
}

// packageOf prices the quote on p's package and finds where it beats
// paying as l goes.
func (in QuoteInput) packageOf(p *Rental, l QuoteLine) *QuotePackage {
	pl := in.lineFrom(p)
	qp := &QuotePackage{From: p, PerGPU: pl.PerGPU, Total: pl.Total}
	if pl.Currency != l.Currency || l.PerGPU.Unit.Seconds() == 0 || l.PerGPU.Amount.Sign() <= 0 {
		return qp
	}
	// Running time t within one period where the package's price equals
	// t at the hourly rate: pkg / (rate / unit seconds) seconds.
	secs := new(big.Rat).Mul(pl.PerGPU.Amount.Rat(), big.NewRat(l.PerGPU.Unit.Seconds(), 1))
	secs.Quo(secs, l.PerGPU.Amount.Rat())
	period := pl.PerGPU.Unit.Seconds()
	n := new(big.Int).Quo(secs.Num(), secs.Denom())
	if new(big.Rat).SetInt(n).Cmp(secs) != 0 {
		n.Add(n, big.NewInt(1))
	}
	if n.IsInt64() && n.Int64() < period {
		qp.BreakEven = time.Duration(n.Int64()) * time.Second
	}
	return qp
}

// addEvidence adds what the user's own jobs and benches say of l's
// platform and model: each label's median run, and the price of a
// tensor-TFLOP-hour.
func (in QuoteInput) addEvidence(l *QuoteLine, key string, rentals []*Rental) {
	if l.Platform == "" {
		return
	}
	here := map[int64]*Rental{}
	for _, r := range rentals {
		if r.Platform == l.Platform && r.ID != 0 {
			here[r.ID] = r
		}
	}
	if in.Book != nil {
		// Unpriced rentals of the model ran jobs too.
		for _, r := range in.Book.Rentals {
			if r.Platform == l.Platform && r.ID != 0 && NormalizeGPUName(r.GPU) == key {
				here[r.ID] = r
			}
		}
	}
	byLabel := map[string][]time.Duration{}
	for _, j := range in.Jobs {
		r := here[j.RentalID]
		if r == nil || j.Label == "" || !j.Succeeded() || j.Duration() < time.Millisecond || r.GPUCount != in.GPUCount {
			continue
		}
		byLabel[j.Label] = append(byLabel[j.Label], j.Duration())
	}
	for label, ds := range byLabel {
		med := medianDuration(ds)
		qr := QuoteRuns{Label: label, Median: med, Count: len(ds)}
		qr.Runs = int64(in.Running / med)
		qr.PerRun = Money{Currency: l.Currency}
		if qr.Runs > 0 && l.quoted != nil {
			start := l.quoted.StartedAt()
			if sc, err := CostOver(l.book, l.quoted, start, start.Add(med)); err == nil {
				qr.PerRun = sc.Total
			}
		}
		l.Runs = append(l.Runs, qr)
	}
	sort.Slice(l.Runs, func(i, j int) bool {
		if l.Runs[i].Count != l.Runs[j].Count {
			return l.Runs[i].Count > l.Runs[j].Count
		}
		return l.Runs[i].Label < l.Runs[j].Label
	})
	var bench *BenchRecord
	for i := range in.Benches {
		b := &in.Benches[i]
		if r := here[b.RentalID]; r != nil && wholeCards(b.Bench) && perf.TensorTFLOPS(b.Bench) > 0 &&
			(bench == nil || b.At.After(bench.At)) {
			bench = b
		}
	}
	if bench == nil {
		return
	}
	per := tensorPerGPU(bench.Bench) // of the GPUs measured, not of all listed
	if per <= 0 || math.IsInf(per, 0) || math.IsNaN(per) {
		return
	}
	l.TensorTFLOPS, l.BenchFrom = per, here[bench.RentalID]
	if secs := l.PerGPU.Unit.Seconds(); secs > 0 {
		perHour := new(big.Rat).Mul(l.PerGPU.Amount.Rat(), big.NewRat(3600, secs))
		if tf := new(big.Rat).SetFloat64(per); tf != nil {
			l.PerTFLOPHour = perHour.Quo(perHour, tf)
		}
	}
}

// wholeCards reports whether b measured GPUs and none is a MIG slice,
// whose figures are never compared with a card's.
func wholeCards(b perf.Bench) bool {
	for _, g := range b.GPUs {
		if g.MIG {
			return false
		}
	}
	return len(b.GPUs) > 0
}

// medianDuration returns the median of ds (the mean of the middle two for
// an even count); ds is sorted in place.
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return ds[n/2-1]/2 + ds[n/2]/2 + (ds[n/2-1]%2+ds[n/2]%2)/2
}
