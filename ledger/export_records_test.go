package ledger

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// recordsBook is designBook with one record of each kind the chat
// numbers (#N): a one-off charge, a top-up, a typed balance reading, a
// balance the platform's API gave (no number) and traffic usage. The
// charge's note and the rental's name start as a spreadsheet formula.
func recordsBook(t *testing.T) (*Book, time.Time) {
	t.Helper()
	b, asOf := designBook(t)
	at := asOf.Add(-time.Hour).UTC()
	box := b.Rentals[0]
	box.Name = "=HYPERLINK(\"http://evil.example\",\"box\")"
	box.TrafficUsage = []TrafficUsage{{ID: 1, At: at, Bytes: 5e9, Direction: Out, Ref: 44}}
	b.Charges = []Charge{{ID: 1, RentalID: 1, Platform: "autodl", Amount: MustDecimal("3.5"), Currency: CNY,
		Note: "=1+2", At: at, Ref: 41}}
	b.TopUps = []TopUp{{ID: 1, Platform: "autodl", Amount: MustDecimal("50"), Currency: CNY, At: at, Ref: 42}}
	b.Balances[0].Ref = 43
	b.Balances = append(b.Balances, BalanceRecord{ID: 2, Platform: "autodl", Amount: MustDecimal("-20"), Currency: CNY, At: at, API: true})
	return b, asOf
}

// A record the chat numbers carries its number in the export, so that a
// line found in a spreadsheet can be corrected with /fix #N or /delete
// #N; a balance the API gave has none.
func TestExport_RecordRefs(t *testing.T) {
	b, asOf := recordsBook(t)
	var js bytes.Buffer
	if err := WriteExportJSON(&js, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OneOffs []struct {
			RecordRef *int64 `json:"record_ref"`
		} `json:"one_offs"`
		TopUps []struct {
			RecordRef *int64 `json:"record_ref"`
		} `json:"top_ups"`
		Readings []struct {
			RecordRef *int64 `json:"record_ref"`
		} `json:"balance_readings"`
		Rentals []struct {
			Traffic struct {
				Usage []struct {
					RecordRef *int64 `json:"record_ref"`
				} `json:"usage"`
			} `json:"traffic"`
		} `json:"rentals"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	num := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	if len(doc.OneOffs) != 1 || num(doc.OneOffs[0].RecordRef) != 41 {
		t.Errorf("one_offs = %s, want record_ref 41", js.String())
	}
	if len(doc.TopUps) != 1 || num(doc.TopUps[0].RecordRef) != 42 {
		t.Errorf("top_ups: want record_ref 42 in %s", js.String())
	}
	if len(doc.Readings) != 2 || num(doc.Readings[0].RecordRef) != 43 || doc.Readings[1].RecordRef != nil {
		t.Errorf("balance_readings: want record_ref 43 then null (the API's) in %s", js.String())
	}
	if len(doc.Rentals) != 1 || len(doc.Rentals[0].Traffic.Usage) != 1 || num(doc.Rentals[0].Traffic.Usage[0].RecordRef) != 44 {
		t.Errorf("traffic usage: want record_ref 44 in %s", js.String())
	}

	var cs bytes.Buffer
	if err := WriteExportCSV(&cs, b, asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	if head[len(head)-1] != "record_ref" || !slices.Equal(head[:len(head)-1], ExportCSVColumns[:len(head)-1]) {
		t.Fatalf("header = %v, want record_ref appended last", head)
	}
	i := len(head) - 1
	want := map[string][]string{"one_off": {"41"}, "top_up": {"42"}, "balance_reading": {"43", ""}, "traffic": {"44"}}
	got := map[string][]string{}
	for _, r := range rows[1:] {
		if _, ok := want[r[0]]; ok {
			got[r[0]] = append(got[r[0]], r[i])
		}
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s rows' record_ref = %q, want %q", k, got[k], w)
		}
	}
}

// A text cell that a spreadsheet would run as a formula (=, +, -, @, a
// tab or a carriage return first) is written to the CSV with a single
// quote before it; a number, a signed one included, is written as it
// is, and the JSON keeps every text exactly as typed.
func TestExport_CSVFormulaCells(t *testing.T) {
	b, asOf := recordsBook(t)
	b.Charges[0].Note = "=1+2"
	b.Charges = append(b.Charges,
		Charge{ID: 2, Platform: "autodl", Amount: MustDecimal("1"), Currency: CNY, Note: "+cmd|' /C calc'!A0", At: b.Charges[0].At, Ref: 45},
		Charge{ID: 3, Platform: "autodl", Amount: MustDecimal("1"), Currency: CNY, Note: "@SUM(1)", At: b.Charges[0].At, Ref: 46},
		Charge{ID: 4, Platform: "autodl", Amount: MustDecimal("1"), Currency: CNY, Note: "-2+3", At: b.Charges[0].At, Ref: 47},
		Charge{ID: 5, Platform: "autodl", Amount: MustDecimal("1"), Currency: CNY, Note: "GPU rental refund", At: b.Charges[0].At, Ref: 48})
	var js bytes.Buffer
	if err := WriteExportJSON(&js, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rentals []struct{ Name string } `json:"rentals"`
		OneOffs []struct{ Note string } `json:"one_offs"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Rentals[0].Name != b.Rentals[0].Name || doc.OneOffs[0].Note != "=1+2" || doc.OneOffs[3].Note != "-2+3" {
		t.Errorf("the JSON changed the text: rentals %+v one_offs %+v", doc.Rentals, doc.OneOffs)
	}

	var cs bytes.Buffer
	if err := WriteExportCSV(&cs, b, asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	var notes []string
	for _, r := range rows[1:] {
		switch r[0] {
		case "rental":
			if want := "'" + b.Rentals[0].Name; r[col["name"]] != want {
				t.Errorf("rental name cell = %q, want %q", r[col["name"]], want)
			}
		case "rental_event", "traffic", "idle", "one_off":
			if n := r[col["rental"]]; n != "" && n != "'"+b.Rentals[0].Name {
				t.Errorf("%s row's rental cell = %q, want it quoted", r[0], n)
			}
		case "balance_reading":
			if a := r[col["amount"]]; a != "100" && a != "-20" {
				t.Errorf("balance_reading amount = %q: a number is never quoted", a)
			}
		}
		if r[0] == "one_off" {
			notes = append(notes, r[col["note"]])
		}
	}
	want := []string{"'=1+2", "'+cmd|' /C calc'!A0", "'@SUM(1)", "'-2+3", "GPU rental refund"}
	if !slices.Equal(notes, want) {
		t.Errorf("one_off notes = %q, want %q", notes, want)
	}
}
