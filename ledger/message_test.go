package ledger

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMessage_JSON: every argument type a message may keep reads back as
// the same type and value, nested messages included; any other type is
// refused when written, and a garbled argument when read.
func TestMessage_JSON(t *testing.T) {
	at := time.Date(2026, 11, 2, 2, 5, 7, 0, time.FixedZone("CST", 8*3600))
	m := Msg("k", "box1", 3, int64(4), true, at, 41*time.Minute, Money{Currency: CNY, Minor: 110},
		AutoStop, OrderRefused, CardIdle, WaitFor("ssh"), []Session{{Kind: SessionSSH, Client: "1.2.3.4", User: "root"}},
		Msg("inner", 12*time.Second, at), MustDecimal("1.88"), Stopped, EventRelease)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := m
	want.Args = append([]any(nil), m.Args...)
	want.Args[2] = 4 // int64 reads back as int
	want.Args[4] = at.UTC()
	want.Args[12] = Msg("inner", 12*time.Second, at.UTC())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, want)
	}
	if _, err := json.Marshal(Msg("k", 1.5)); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Fatalf("a float argument: err %v, want one naming the type", err)
	}
	if err := json.Unmarshal([]byte(`{"key":"k","args":[{"t":"time","v":"not a time"}]}`), &got); err == nil {
		t.Fatal("a garbled time was read")
	}
	if err := json.Unmarshal([]byte(`{"key":"k","args":[{"t":"float","v":1}]}`), &got); err == nil {
		t.Fatal("an unknown type was read")
	}
}
