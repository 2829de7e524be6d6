package bot

import (
	"reflect"

	"github.com/gpuledger/gpuledger/bot/command"
)

// This file holds the core's one table of commands. Each family of
// commands (rentals, money, storage, agents, platforms, reports, settings,
// records, jobs, talk) is a small type over the request and registers its own
// handlers in register; dispatchCmd does what holds for every command once
// (the group's placement) and then looks the command's type up here. A
// command type nobody registered is an error, and TestHandlers_OnePerCommand
// reads the parser's package so that a new command cannot be forgotten.

// handler runs one parsed command for r.
type handler func(r *req, cmd command.Command) error

// table maps a command's type to its one handler.
type table struct {
	by   map[reflect.Type]handler
	dups []reflect.Type // registered twice: TestHandlers_OnePerCommand refuses them
}

// family is a type over the request that holds a family's handlers: the
// handlers every family uses stay on req and are reached through it.
type family interface {
	~struct{ *req }
}

// on registers h, a family's method, as the handler of command type C.
func on[F family, C command.Command](t *table, h func(F, C) error) {
	k := reflect.TypeFor[C]()
	if _, ok := t.by[k]; ok {
		t.dups = append(t.dups, k)
	}
	t.by[k] = func(r *req, cmd command.Command) error { return h(F{r}, cmd.(C)) }
}

// handlers is the core's table, filled once from every family's register.
var handlers = newTable()

func newTable() *table {
	t := &table{by: map[reflect.Type]handler{}}
	rentals{}.register(t)
	talk{}.register(t)
	storage{}.register(t)
	records{}.register(t)
	reports{}.register(t)
	money{}.register(t)
	settings{}.register(t)
	agents{}.register(t)
	platforms{}.register(t)
	receipts{}.register(t)
	quotes{}.register(t)
	jobs{}.register(t)
	teams{}.register(t)
	return t
}

// lookup returns the handler of cmd's type.
func (t *table) lookup(cmd command.Command) (handler, bool) {
	h, ok := t.by[reflect.TypeOf(cmd)]
	return h, ok
}
