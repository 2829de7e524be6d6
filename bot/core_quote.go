package bot

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// quotes is the family of what a rental would cost before it is made:
// /quote.
type quotes struct{ *req }

func (quotes) register(t *table) {
	on(t, quotes.quote)
}

// quote answers /quote: the bill of the rental asked, by the cost engine
// (ledger.Quote), on each platform the user has rented the model on, at
// their latest price there, and at the price given. It writes nothing.
func (r quotes) quote(c command.QuoteCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	// What the user's benches and jobs say, which the book leaves out.
	if err := ledger.LoadDelivered(r.ctx, b, r.c.jobStore()); err != nil {
		return err
	}
	in := ledger.QuoteInput{GPU: c.GPU, GPUCount: c.GPUCount, Running: c.Running, Stopped: c.Stopped,
		StorageGB: c.StorageGB, TrafficGB: c.TrafficGB, Book: b, Benches: b.Benches, Jobs: b.JobRuns, At: r.now}
	if c.Price != nil {
		cur := c.Price.Currency
		if cur == "" {
			if p, ok := ledger.LookupProfile(c.Platform); ok {
				cur = p.Currency
			} else {
				cur = r.defaultCurrency(b)
			}
		}
		in.Price = &ledger.QuotePrice{Platform: c.Platform, Price: c.Price.Price(), Currency: cur, Mode: c.Mode}
	}
	lines := ledger.Quote(in)
	if c.Platform != "" && c.Price == nil {
		// A platform without a price: that platform's line alone.
		kept := lines[:0]
		for _, l := range lines {
			if l.Platform == c.Platform {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	ask := view.QuoteAsk{GPU: c.GPU, GPUCount: c.GPUCount, Running: c.Running, Stopped: c.Stopped,
		StorageGB: c.StorageGB, TrafficGB: c.TrafficGB, Platform: c.Platform, Command: quoteExample(c)}
	var connect []string
	if r.c.conns != nil && len(lines) == 0 {
		connect = r.connectable()
	}
	return r.answer(r.plain(view.QuoteText(r.lang, r.loc, lines, ask, connect)))
}

// connectable names the platforms the user could connect and has not,
// in /connect's order; none when the connectors cannot be read.
func (r quotes) connectable() []string {
	have, err := r.c.conns.Connectors(r.ctx, r.ledgerID)
	if err != nil {
		r.c.log.Warn("quote: connectors", "user", r.u.UserID, "err", err)
		return nil
	}
	var out []string
	for _, k := range r.c.conns.Platforms().Keys() {
		if !slices.ContainsFunc(have, func(c ledger.Connector) bool { return c.Platform == k }) {
			out = append(out, view.PlatformName(r.lang, k))
		}
	}
	return out
}

// quoteExample is the start of the /quote asked, its GPU and hours, for
// the reply's example of a price.
func quoteExample(c command.QuoteCmd) string {
	gpu := strings.ReplaceAll(c.GPU, " ", "")
	if c.GPUCount > 1 {
		gpu = strconv.Itoa(c.GPUCount) + "x" + gpu
	}
	var hours string
	switch d := c.Running; {
	case d%time.Hour == 0:
		hours = strconv.FormatInt(int64(d/time.Hour), 10)
	case d%time.Minute == 0:
		hours = strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	default:
		hours = strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return gpu + " " + hours
}
