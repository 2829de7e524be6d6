package command

// KindReceipt is /receipt: what a rental delivered for what it costs, from
// the bench its agent ran (core_receipt.go).
const KindReceipt Kind = "receipt"

// ReceiptCmd shows a rental's receipt: /receipt NAME. Released rentals
// too: a receipt is history.
type ReceiptCmd struct {
	Name string
}

// Kind returns KindReceipt.
func (ReceiptCmd) Kind() Kind { return KindReceipt }

// receipt reads /receipt NAME (or name=), as /why reads its one rental.
func (p *parser) receipt(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name"}, false); err != nil {
		return nil, err
	}
	n, err := p.oneRental()
	if err != nil {
		return nil, err
	}
	return ReceiptCmd{Name: n}, nil
}
