package main

import (
	"errors"
	"flag"
	"fmt"
)

// errUsage is returned after the flag package has already printed what is
// wrong (an unknown flag, a bad value): run adds only the pointer to
// --help and exits 2.
var errUsage = errors.New("usage")

// usageError is a mistake in how a command was called (a missing or extra
// argument): run prints it with a pointer to the command's --help and
// exits 2, as for a bad flag.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// parseArgs parses fs's flags wherever they stand among the positional
// arguments, which it returns in order: "backup FILE --db X" and
// "backup --db X FILE" mean the same. The flag package alone stops at the
// first argument that is not a flag, so it is run again after each one.
// Everything after "--" is positional. It returns flag.ErrHelp for -h and
// --help, and errUsage for any other flag error (already printed by fs).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
