package bot

import (
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
)

// legacy holds the commands whose family has not moved off req yet.
type legacy struct{ *req }

func (legacy) register(t *table) {
	on(t, func(r legacy, c command.RentCmd) error { return r.rent(c) })
	on(t, func(r legacy, c command.StopCmd) error {
		return r.event(c.Name, ledger.Event{Kind: ledger.EventStop, At: r.at(c.At)})
	})
	on(t, func(r legacy, c command.ResumeCmd) error {
		return r.event(c.Name, ledger.Event{Kind: ledger.EventResume, At: r.at(c.At)})
	})
	on(t, func(r legacy, c command.ReleaseCmd) error { return r.release(c) })
	on(t, func(r legacy, c command.PriceCmd) error { return r.price(c) })
}
