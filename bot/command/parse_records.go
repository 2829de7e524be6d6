package command

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// Commands that list, delete and correct past records (core_records.go).
const (
	KindRecords Kind = "records"
	KindDelete  Kind = "delete"
	KindFix     Kind = "fix"
)

// RecordsCmd lists the user's charges, top-ups, balance readings and
// traffic records with their references: /records [NAME|PLATFORM].
type RecordsCmd struct {
	Name string // a rental or a platform; "" for all
}

// DeleteRecordCmd deletes one record: /delete #REF.
type DeleteRecordCmd struct {
	Ref int64
}

// FixRecordCmd corrects one record: /fix #REF [AMOUNT|SIZE] [in|out]
// [NOTE...] [at TIME]. Fields left out keep the record's values.
type FixRecordCmd struct {
	Ref       int64
	Amount    *Amount         // a money record's amount
	SizeGB    *ledger.Decimal // a traffic record's size
	Direction ledger.Direction
	Note      *string // a charge's note
	At        time.Time
}

func (RecordsCmd) Kind() Kind      { return KindRecords }
func (DeleteRecordCmd) Kind() Kind { return KindDelete }
func (FixRecordCmd) Kind() Kind    { return KindFix }

// parseRef reads a record's reference, "#12" or "12".
func parseRef(s string) (int64, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "#"), "＃")
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

func (p *parser) records(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "platform"}, false); err != nil {
		return nil, err
	}
	var name string
	for _, k := range []string{"name", "platform"} {
		if v, ok := p.kv[k]; ok {
			p.words = append(p.words, v)
		}
	}
	switch len(p.words) {
	case 0:
		return RecordsCmd{}, nil
	case 1:
		name = p.words[0]
		if pr, ok := ledger.LookupProfile(name); ok {
			name = pr.Key
		} else if _, err := p.name(name); err != nil {
			return nil, err
		}
		return RecordsCmd{Name: name}, nil
	}
	return nil, p.err("unexpected", quote(p.words[1]), string(p.kind))
}

func (p *parser) deleteRecord(toks []string) (Command, error) {
	if err := p.split(toks, nil, false); err != nil {
		return nil, err
	}
	if len(p.words) == 0 {
		return nil, p.err("missing_ref", string(p.kind))
	}
	ref, ok := parseRef(p.words[0])
	if !ok {
		return nil, p.err("bad_ref", quote(p.words[0]), string(p.kind))
	}
	if err := p.noWords1(); err != nil {
		return nil, err
	}
	return DeleteRecordCmd{Ref: ref}, nil
}

// noWords1 refuses words after the first.
func (p *parser) noWords1() error {
	if len(p.words) > 1 {
		return p.err("unexpected", quote(p.words[1]), string(p.kind))
	}
	return nil
}

func (p *parser) fixRecord(toks []string) (Command, error) {
	// As in /charge, the note is free text: "at TIME" and the first
	// amount- or size-shaped token are taken out of it.
	toks, err := p.takeAt(toks)
	if err != nil {
		return nil, err
	}
	if err := p.split(toks, []string{"amount", "note", "size", "direction", "at"}, false); err != nil {
		return nil, err
	}
	if len(p.words) == 0 {
		return nil, p.err("missing_ref", string(p.kind))
	}
	c := FixRecordCmd{At: p.at}
	var ok bool
	if c.Ref, ok = parseRef(p.words[0]); !ok {
		return nil, p.err("bad_ref", quote(p.words[0]), string(p.kind))
	}
	var amtSrc, sizeSrc, dirSrc string
	var note []string
	if v, ok := p.kv["direction"]; ok {
		dirSrc = v
	}
	for _, w := range p.words[1:] {
		lw := strings.ToLower(w)
		switch {
		case note == nil && dirSrc == "" && (directionWords[lw] == ledger.In || directionWords[lw] == ledger.Out):
			dirSrc = w
		case note == nil && sizeSrc == "" && amtSrc == "" && looksLikeSize(w):
			sizeSrc = w
		case note == nil && amtSrc == "" && sizeSrc == "" && (isBareNumber(w) || looksLikePrice(w)):
			amtSrc = w
		default:
			note = append(note, w)
		}
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("size", &sizeSrc); err != nil {
		return nil, err
	}
	if amtSrc != "" && looksLikeSize(amtSrc) && sizeSrc == "" {
		sizeSrc, amtSrc = amtSrc, "" // amount=12GB on a traffic record
	}
	if amtSrc != "" {
		a, ok := parseAmount(amtSrc)
		if !ok {
			return nil, p.err("bad_amount", quote(amtSrc))
		}
		c.Amount = &a
	}
	if sizeSrc != "" {
		d, ok := parseSize(sizeSrc)
		if !ok {
			return nil, p.err("bad_size", quote(sizeSrc))
		}
		if GibBytes(d) <= 0 {
			return nil, p.err("amount_positive", quote(sizeSrc))
		}
		c.SizeGB = &d
	}
	if dirSrc != "" {
		d := directionWords[strings.ToLower(dirSrc)]
		if d != ledger.In && d != ledger.Out {
			return nil, p.err("bad_direction", quote(dirSrc))
		}
		c.Direction = d
	}
	if v, ok := p.kv["note"]; ok {
		note = append([]string{v}, note...)
	}
	if note != nil {
		n := strings.Join(note, " ")
		if utf8.RuneCountInString(n) > ledger.MaxNoteRunes {
			n = string([]rune(n)[:ledger.MaxNoteRunes-1]) + "…"
		}
		c.Note = &n
	}
	if c.Amount == nil && c.SizeGB == nil && c.Direction == "" && c.Note == nil && c.At.IsZero() {
		return nil, p.err("fix_nothing", "#"+strconv.FormatInt(c.Ref, 10))
	}
	return c, nil
}
