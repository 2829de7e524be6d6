package bot

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// recordsShown bounds one /records reply: a month of records fits, and
// the reply stays far below Telegram's 4096 characters.
const recordsShown = 30

// records lists the user's charges, top-ups, balance readings and traffic
// records, newest first, each with the reference /fix and /delete take.
// records is the family of the ledger's records as the user sees and
// corrects them: /records, /fix, /delete and /undo.
type records struct{ *req }

func (records) register(t *table) {
	on(t, records.records)
	on(t, records.deleteRecord)
	on(t, records.fixRecord)
	on(t, records.undo)
}

func (r records) records(c command.RecordsCmd) error {
	recs, err := r.c.store.Records(r.ctx, r.ledgerID, ledger.RecordFilter{Name: c.Name, Limit: recordsShown})
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if c.Name != "" {
			return r.answer(r.plain(r.rt("records_none_for", chat.Escape(c.Name))))
		}
		return r.answer(r.plain(r.rt("records_none")))
	}
	lines := []string{r.rt("records_head")}
	for _, x := range recs {
		lines = append(lines, r.recordLine(x))
	}
	if len(recs) == recordsShown {
		lines = append(lines, r.rt("records_more", recordsShown))
	}
	return r.answer(r.plain(strings.Join(lines, "\n")))
}

// recordLine is one record as the chat shows it: "#57 11:00 charge box1
// ¥5.00 image fee", in the user's zone and language. It is HTML (the
// user's words escaped): a template takes it as chat.RawHTML.
func (r records) recordLine(x ledger.Record) string {
	where := x.Rental
	if where == "" {
		where = view.PlatformWord(r.lang, x.Platform) // as the other replies name it
	}
	parts := []string{fmt.Sprintf("#%d", x.Ref), r.when(x.At), r.rt("rec_" + string(x.Kind)), "<b>" + chat.Escape(where) + "</b>"}
	if x.Kind == ledger.RecordTraffic {
		parts = append(parts, gbText(x.Bytes)+"GB", string(x.Dir))
	} else {
		parts = append(parts, view.FormatAmount(x.Amount, x.Currency))
	}
	if x.Note != "" {
		parts = append(parts, chat.Escape(x.Note))
	}
	return strings.Join(parts, " ")
}

// gbText writes bytes in GiB with at most two decimals, as /traffic takes
// them ("12", "0.5").
func gbText(bytes int64) string {
	s := new(big.Rat).SetFrac64(bytes, 1<<30).FloatString(2)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// deleteRecord deletes one of the user's records; /undo puts it back.
func (r records) deleteRecord(c command.DeleteRecordCmd) error {
	x, err := r.c.store.DeleteRecord(r.ctx, r.act(), c.Ref)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.rt("record_deleted", chat.RawHTML(r.recordLine(x)))))
}

// fixRecord corrects one of the user's records and shows it before and
// after; /undo puts it back as it was.
func (r records) fixRecord(c command.FixRecordCmd) error {
	f := ledger.RecordFix{Note: c.Note, At: c.At, Dir: c.Direction}
	if c.Amount != nil {
		f.Amount, f.Currency = &c.Amount.Value, c.Amount.Currency
	}
	if c.SizeGB != nil {
		f.Bytes = command.GibBytes(*c.SizeGB) // more than 0: the parser saw to it
	}
	old, fixed, err := r.c.store.FixRecord(r.ctx, r.act(), c.Ref, f)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.rt("record_fixed", chat.RawHTML(r.recordLine(fixed)), chat.RawHTML(r.recordLine(old)))))
}

// refLine is the line a recording's reply ends with: the record's number
// and how to correct or delete it; "" without a number.
func (r *req) refLine(ref int64) string {
	if ref == 0 {
		return ""
	}
	return "\n" + r.rt("record_ref", ref)
}
