package ledger

import (
	"encoding/json"
	"fmt"
	"time"
)

// Message is a text named by a catalog key, with the values it shows as
// typed arguments, so that an edge renders it in the reader's language and
// zone when it is read (view.DecisionText for the decision log), not in
// those of whoever was there when it was written. A decision keeps two:
// its summary and its evidence.
//
// Args hold only the types MarshalJSON knows, so that a stored message
// reads back with each argument of the type it was written with (a time
// stays a time, a duration a duration): string, int, int64, bool,
// time.Time, time.Duration, Money, Decimal, State, EventKind, AutoAction,
// OrderState, CardKind, WaitFor, []Session and Message (a nested phrase,
// rendered first).
// The zero Message (no Key) is "no message".
type Message struct {
	Key  string
	Args []any
}

// Msg returns the message key with args.
func Msg(key string, args ...any) Message { return Message{Key: key, Args: args} }

// IsZero reports whether m is no message.
func (m Message) IsZero() bool { return m.Key == "" }

// String is the key and its arguments, for logs and for comparing two
// messages; it is not a text for users.
func (m Message) String() string {
	if m.IsZero() {
		return ""
	}
	return fmt.Sprint(append([]any{m.Key}, m.Args...)...)
}

// msgArg is one argument on the wire: its type and its value.
type msgArg struct {
	T string          `json:"t"`
	V json.RawMessage `json:"v"`
}

type msgJSON struct {
	Key  string   `json:"key"`
	Args []msgArg `json:"args,omitempty"`
}

type moneyJSON struct {
	Currency Currency `json:"currency"`
	Minor    int64    `json:"minor"`
}

// MarshalJSON writes m with each argument's type, so that UnmarshalJSON
// gives back the same types. An argument of any other type is an error.
func (m Message) MarshalJSON() ([]byte, error) {
	out := msgJSON{Key: m.Key}
	for i, a := range m.Args {
		var t string
		var v any = a
		switch x := a.(type) {
		case string:
			t = "str"
		case int:
			t, v = "int", int64(x)
		case int64:
			t = "int"
		case bool:
			t = "bool"
		case time.Time:
			t, v = "time", x.UTC().Format(time.RFC3339Nano)
		case time.Duration:
			t, v = "dur", int64(x)
		case Money:
			t, v = "money", moneyJSON{x.Currency, x.Minor}
		case Decimal:
			t, v = "decimal", x.String()
		case State:
			t, v = "state", string(x)
		case EventKind:
			t, v = "event", string(x)
		case AutoAction:
			t, v = "action", string(x)
		case OrderState:
			t, v = "order_state", string(x)
		case CardKind:
			t, v = "card", string(x)
		case WaitFor:
			t, v = "wait_for", string(x)
		case []Session:
			t = "sessions"
		case Message:
			t = "msg"
		default:
			return nil, fmt.Errorf("ledger: message %s: argument %d has type %T, which a message cannot keep", m.Key, i+1, a)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("ledger: message %s: argument %d: %w", m.Key, i+1, err)
		}
		out.Args = append(out.Args, msgArg{T: t, V: b})
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote, each argument as its type.
func (m *Message) UnmarshalJSON(b []byte) error {
	var in msgJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("ledger: message: %w", err)
	}
	out := Message{Key: in.Key}
	for i, a := range in.Args {
		var v any
		var err error
		switch a.T {
		case "str":
			var s string
			err = json.Unmarshal(a.V, &s)
			v = s
		case "int":
			var n int64
			err = json.Unmarshal(a.V, &n)
			v = int(n)
		case "bool":
			var x bool
			err = json.Unmarshal(a.V, &x)
			v = x
		case "time":
			var s string
			if err = json.Unmarshal(a.V, &s); err == nil {
				var t time.Time
				t, err = time.Parse(time.RFC3339Nano, s)
				v = t
			}
		case "dur":
			var n int64
			err = json.Unmarshal(a.V, &n)
			v = time.Duration(n)
		case "money":
			var x moneyJSON
			err = json.Unmarshal(a.V, &x)
			v = Money{Currency: x.Currency, Minor: x.Minor}
		case "decimal":
			var s string
			if err = json.Unmarshal(a.V, &s); err == nil {
				v, err = ParseDecimal(s)
			}
		case "state", "event", "action", "order_state", "card", "wait_for":
			var s string
			err = json.Unmarshal(a.V, &s)
			v = map[string]any{"state": State(s), "event": EventKind(s), "action": AutoAction(s), "order_state": OrderState(s),
				"card": CardKind(s), "wait_for": WaitFor(s)}[a.T]
		case "sessions":
			var ss []Session
			err = json.Unmarshal(a.V, &ss)
			v = ss
		case "msg":
			var x Message
			err = json.Unmarshal(a.V, &x)
			v = x
		default:
			err = fmt.Errorf("unknown type %q", a.T)
		}
		if err != nil {
			return fmt.Errorf("ledger: message %s: argument %d: %w", in.Key, i+1, err)
		}
		out.Args = append(out.Args, v)
	}
	*m = out
	return nil
}
